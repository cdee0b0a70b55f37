package main

import (
	"encoding/base64"
	"strings"
	"testing"

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
