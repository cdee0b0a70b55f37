package main

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestSecretsNeverShow runs verbs that use the bearer token and the
// registry credentials, at client-go's most verbose level and on failure
// paths, and checks that neither shows in any output.
func TestSecretsNeverShow(t *testing.T) {
	l := newLifecycle(t)
	reg := l.env.RequireRegistry(t)
	cfg, err := clientcmd.LoadFromFile(l.env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	token := cfg.AuthInfos[testenv.ContextToken].Token
	if token == "" {
		t.Fatal("the environment's kubeconfig holds no bearer token")
	}
	basic := base64.StdEncoding.EncodeToString([]byte(reg.Username + ":" + reg.Password))
	secrets := map[string]string{"bearer token": token, "registry password": reg.Password, "registry basic auth": basic}
	check := func(r *clitest.Result) {
		t.Helper()
		for what, s := range secrets {
			if strings.Contains(r.Stdout, s) || strings.Contains(r.Stderr, s) {
				t.Errorf("%v shows the %s", r.Args, what)
			}
		}
	}

	ref, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "secret-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	tok := []string{"--context", testenv.ContextToken, "-v=9"}
	check(x.Run(append([]string{"install", ref, name, "--wait=60s"}, tok...)...).Succeeds(t))
	check(x.Run(append([]string{"get"}, tok...)...).Succeeds(t))
	check(x.Run(append([]string{"describe", name, "-o", "yaml"}, tok...)...).Succeeds(t))
	check(x.Run(append([]string{"versions", reg.Host + "/cli/provider-nop"}, tok...)...).Succeeds(t))
	check(x.Run(append([]string{"diff", "--installed", name, ref}, tok...)...).Succeeds(t))
	check(x.Run("extract", ref, "-v=9").Succeeds(t))

	// Failures: a wrong token, wrong registry credentials.
	bad := clitest.New(t).WithEnv(l.env).WithLogin(reg.Host, reg.Username, reg.Password+"x")
	secrets["wrong password"] = reg.Password + "x"
	check(bad.Run("extract", ref, "-v=9").Fails(t, 1))
	secrets["wrong token"] = token + "x"
	r := bad.Run("get", "--context", testenv.ContextToken, "--token", token+"x", "-v=9").Fails(t, 1)
	check(r)
	contains(t, "unauthorized", r.Stderr, "Unauthorized")
}

// TestClusterPullSecretNeverShows: a registry only a cluster Secret can
// read (the user's docker config is empty) is read with that Secret, and
// at -v=9 neither the password nor the Secret's data shows: client-go's
// REST client logs response bodies, so the Secret is read past it.
func TestClusterPullSecretNeverShows(t *testing.T) {
	l := newLifecycle(t)
	reg := l.env.RequireRegistry(t)
	ctx := context.Background()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "crossplane-system"}}}
	_, _ = l.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, ns, metav1.CreateOptions{})
	basic := base64.StdEncoding.EncodeToString([]byte(reg.Username + ":" + reg.Password))
	cfg := `{"auths":{"` + reg.Host + `":{"auth":"` + basic + `"}}}`
	data := base64.StdEncoding.EncodeToString([]byte(cfg))
	const secret = "only-the-cluster"
	sec := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
		"metadata": map[string]any{"name": secret, "namespace": "crossplane-system"},
		"data":     map[string]any{".dockerconfigjson": data},
	}}
	secrets := l.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("crossplane-system")
	_ = secrets.Delete(ctx, secret, metav1.DeleteOptions{})
	if _, err := secrets.Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = secrets.Delete(ctx, secret, metav1.DeleteOptions{}) })

	ref, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "cluster-secret-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	// The user's own docker config holds nothing.
	x := clitest.New(t).WithEnv(l.env).Setenv("DOCKER_CONFIG", t.TempDir())
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", ref, name, "--package-pull-secrets", secret, "--wait=60s").Succeeds(t)
	r := x.Run("diff", "--installed", name, ref, "-v=9").Succeeds(t)
	contains(t, "diff", r.Stderr, "Reading registry "+ref)
	for what, s := range map[string]string{"registry password": reg.Password, "registry basic auth": basic, "the Secret's data": data} {
		if strings.Contains(r.Stdout+r.Stderr, s) {
			t.Errorf("diff --installed -v=9 shows %s", what)
		}
	}
	// Without the Secret the registry refuses: it was the Secret that read it.
	r = x.Run("extract", ref).Fails(t, 1)
	contains(t, "extract without credentials", r.Stderr, "requires authentication")
}
