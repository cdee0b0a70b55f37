package e2e

import (
	"context"
	"regexp"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
)

// TestMirroredCluster reads packages where Crossplane reads them: the
// references name a registry host that does not exist, which an
// ImageConfig rewrites to the environment's registry, and only the
// cluster holds the registry's credentials (a Secret another ImageConfig
// names; the user's docker config is empty).
func TestMirroredCluster(t *testing.T) {
	env, reg, c, _ := start(t)
	ctx := context.Background()
	const (
		mirror = "mirror.example.invalid/"
		name   = "mirrored-nop"
		ic     = "local-mirror"
	)
	repo := mirror + "e2e/crossplane-contrib/provider-nop"
	ics := c.dyn.Resource(crossplane.ImageConfigGVR)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "ImageConfig",
		"metadata": map[string]any{"name": ic},
		"spec": map[string]any{
			"matchImages":  []any{map[string]any{"type": "Prefix", "prefix": mirror}},
			"rewriteImage": map[string]any{"prefix": reg.Host + "/"},
		},
	}}
	if _, err := ics.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No registry credentials of the user's own.
	x := clitest.New(t).WithEnv(env).Setenv("DOCKER_CONFIG", t.TempDir())
	t.Cleanup(func() {
		clitest.New(t).WithEnv(env).Run("uninstall", "provider/"+name, "--force", "--yes", "--wait=2m")
		_ = ics.Delete(ctx, ic, metav1.DeleteOptions{})
	})

	through := "Reading " + repo + ":v0.2.1 through ImageConfig " + ic + " (as " + reg.Host + "/e2e/crossplane-contrib/provider-nop:v0.2.1), with the pull secret xpkg-test-registry of ImageConfig xpkg-test-registry"
	r := x.Run("install", repo+":v0.2.1", name, "--wait=5m").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg install %s:v0.2.1 %s --wait=5m\n%s%s", repo, name, r.Stderr, r.Stdout)
	contains(t, "install", r.Stderr, through, "provider/"+name+": Healthy=True")
	c.healthy("providers", name) // Crossplane pulled through the rewrite too

	r = x.Run("versions", repo).Succeeds(t)
	contains(t, "versions", r.Stderr, "Reading "+repo+" through ImageConfig "+ic)
	if !regexp.MustCompile(`(?s)v0\.4\.0\s.*v0\.2\.1\s+provider/` + name).MatchString(r.Stdout) {
		t.Errorf("versions through the rewrite:\n%s", r.Stdout)
	}

	r = x.Run("upgrade", name, "v0.4.0", "--dry-run").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg upgrade %s v0.4.0 --dry-run\n%s%s", name, r.Stderr, r.Stdout)
	contains(t, "upgrade plan", r.Stderr, "Reading "+repo+":v0.4.0 through ImageConfig "+ic)
	contains(t, "upgrade plan", r.Stdout, "Plan: upgrade provider/"+name+" from "+repo+":v0.2.1 to "+repo+":v0.4.0", "0 blocking")

	r = x.Run("outdated", "providers", "-o", "json").Succeeds(t)
	if it := outdatedRows(t, r.Stdout)[name]; it.Current != "v0.2.1" || it.Latest != "v0.4.0" || it.Drifted || it.Error != "" {
		t.Errorf("outdated through the rewrite: %+v", it)
	}

	r = x.Run("describe", "provider/"+name).Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg describe provider/%s\n%s", name, r.Stdout)
	contains(t, "describe", r.Stdout, "Resolved package:   "+reg.Host+"/e2e/crossplane-contrib/provider-nop:v0.2.1",
		"Image configs:      "+ic+" (RewriteImage), xpkg-test-registry (SetImagePullSecret)",
		"Managed resource definitions: 1 (", "nopresources.nop.crossplane.io")

	// As written, the references lead nowhere.
	x.Run("versions", repo, "--no-image-config").Fails(t, 1)
	// A local verb reads as written, unless the command line names the cluster.
	x.Run("extract", repo+":v0.4.0", "--only", "meta").Fails(t, 1)
	r = x.Run("extract", repo+":v0.4.0", "--only", "meta", "--kubeconfig", env.Kubeconfig).Succeeds(t)
	contains(t, "extract --kubeconfig", r.Stdout, "name: provider-nop")
}
