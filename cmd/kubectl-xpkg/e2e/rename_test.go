package e2e

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestRenameFamilyProvider: a family provider installed under a custom
// name, three members depending on it and two ProviderConfig objects of
// its CRD, on the real package manager. doctor names rename for the twin
// risk; another custom name is refused (the resolver would make a twin
// meanwhile); a rename cut short by its timeout is undone; the rename to
// the resolver's name keeps the CRDs and the ProviderConfigs (the same
// objects), the Lock holds one node, and every member is healthy.
func TestRenameFamilyProvider(t *testing.T) {
	env, reg, c, x := start(t)
	const famRepoPath = "e2e/ren/provider-family-ren"
	famRepo := reg.Host + "/" + famRepoPath
	pushFamilyPackage(t, reg, famRepoPath, "v1.0.0", "", famCRD("ren.example.org", "ProviderConfig"), famCRD("ren.example.org", "ProviderConfigUsage"))
	for _, m := range []string{"a", "b", "c"} {
		pushFamilyPackage(t, reg, "e2e/ren/provider-ren-"+m, "v1.0.0", famRepo, famCRD(m+".ren.example.org", "Bucket"))
	}
	const (
		custom = "fam-custom"
		proper = "e2e-ren-provider-family-ren" // the resolver's name
	)
	members := []string{"e2e-ren-provider-ren-a", "e2e-ren-provider-ren-b", "e2e-ren-provider-ren-c"}
	pcs := schema.GroupVersionResource{Group: "ren.example.org", Version: "v1beta1", Resource: "providerconfigs"}
	t.Cleanup(func() {
		y := clitest.New(t).WithEnv(env)
		for _, n := range []string{"one", "two"} {
			_ = c.dyn.Resource(pcs).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
		y.Run("uninstall", "provider/"+members[0], "provider/"+members[1], "provider/"+members[2], "--force", "--yes", "--wait=2m")
		y.Run("uninstall", "provider/"+custom, "provider/"+proper, "--force", "--yes", "--wait=2m")
	})
	runningCrossplane(t)
	x.Run("install", famRepo+":v1.0.0", custom, "--wait=5m").Succeeds(t)
	for _, m := range []string{"a", "b", "c"} {
		x.Run("install", reg.Host+"/e2e/ren/provider-ren-"+m+":v1.0.0", "--wait=5m").Succeeds(t)
	}
	uids := map[string]string{}
	for _, n := range []string{"one", "two"} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ren.example.org/v1beta1", "kind": "ProviderConfig",
			"metadata": map[string]any{"name": n}, "spec": map[string]any{"credentials": map[string]any{"source": "None"}}}}
		made, err := c.dyn.Resource(pcs).Create(context.Background(), u, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids["providerconfig/"+n] = string(made.GetUID())
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, n := range []string{"providerconfigs.ren.example.org", "providerconfigusages.ren.example.org"} {
		u, err := c.dyn.Resource(crds).Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids["crd/"+n] = string(u.GetUID())
	}

	r := x.Run("doctor").Succeeds(t)
	contains(t, "doctor", r.Stdout, "[twin-name]", "kubectl xpkg rename provider/"+custom)

	r = x.Run("rename", "provider/"+custom, "fam-other-name", "--yes")
	if r.ExitCode != 3 || !strings.Contains(r.Stderr, "[twin-name]") {
		t.Errorf("rename to another custom name with dependents: exit %d, want 3 with twin-name\n%s", r.ExitCode, r.Stderr)
	}

	r = x.Run("rename", "provider/"+custom, "--dry-run").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg rename provider/%s --dry-run\n%s", custom, r.Stdout)
	contains(t, "rename --dry-run", r.Stdout, "Plan: rename provider/"+custom+" to provider/"+proper, "0 blocking",
		"installed 2 CRDs, 0 MRDs and 0 other objects (2 live objects of their kinds)", "provider/"+members[0]+", provider/"+members[1]+", provider/"+members[2]+" depend(s) on it", "[rename-handover]", "Steps (a failed step undoes those before it):")

	// Cut short: the undo puts the custom-named package back.
	r = x.Run("rename", "provider/"+custom, "--yes", "--timeout=1s")
	t.Logf("transcript:\n$ kubectl xpkg rename provider/%s --yes --timeout=1s\n%s%s", custom, r.Stderr, r.Stdout)
	if r.ExitCode != 124 || !strings.Contains(r.Stderr, "undoing the rename") || !strings.Contains(r.Stderr, "undone: provider/"+custom+" is installed and healthy under its name again") {
		t.Errorf("rename cut short by its timeout: exit %d, want 124 and undone\n%s", r.ExitCode, r.Stderr)
	}
	c.healthy("providers", custom)
	c.gone("providers", proper)
	if got := c.lockEntries(famRepo); len(got) != 1 {
		t.Errorf("after the undo the Lock holds %v for %s, want one entry", got, famRepo)
	}

	r = x.Run("rename", "provider/"+custom, "--yes")
	t.Logf("transcript:\n$ kubectl xpkg rename provider/%s --yes\n%s%s", custom, r.Stderr, r.Stdout)
	if r.ExitCode != 0 {
		t.Fatalf("rename: exit %d\n%s", r.ExitCode, r.Stderr)
	}
	contains(t, "rename", r.Stdout, "provider/"+custom+" renamed to provider/"+proper+": 2 objects handed over, 2 live objects of their kinds kept")
	c.gone("providers", custom)
	c.healthy("providers", proper)
	for _, m := range members {
		c.healthy("providers", m)
	}
	if got := c.lockEntries(famRepo); len(got) != 1 || !strings.HasPrefix(got[0], proper+"-") {
		t.Errorf("after the rename the Lock holds %v for %s, want one revision of %s", got, famRepo, proper)
	}
	for key, uid := range uids {
		res, name := pcs, strings.TrimPrefix(key, "providerconfig/")
		if strings.HasPrefix(key, "crd/") {
			res, name = crds, strings.TrimPrefix(key, "crd/")
		}
		u, err := c.dyn.Resource(res).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || string(u.GetUID()) != uid {
			t.Errorf("%s is not the object it was (uid %s): %v", key, uid, err)
			continue
		}
		if strings.HasPrefix(key, "crd/") {
			if ctl := metav1.GetControllerOf(u); ctl == nil || !strings.HasPrefix(ctl.Name, proper+"-") {
				t.Errorf("%s is controlled by %v, not a revision of %s", key, ctl, proper)
			}
		}
	}
	r = x.Run("doctor", "-o", "json")
	if strings.Contains(r.Stdout, "twin-name") || strings.Contains(r.Stdout, "duplicate-lock-node") {
		t.Errorf("doctor after the rename:\n%s", r.Stdout)
	}
}

// runningCrossplane records the release the test runs as the cluster's
// Deployment crossplane, which rename reads the release from; gone after.
func runningCrossplane(t *testing.T) {
	t.Helper()
	remove, err := crossplane.Get(t, testenv.Get(t)).RecordRelease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
}
