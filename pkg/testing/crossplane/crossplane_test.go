package crossplane

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Bounds for what the package manager does; generous, since this checks
// the harness works, not how fast Crossplane is (it takes seconds here).
const (
	installTimeout = 3 * time.Minute
	deleteTimeout  = 2 * time.Minute
)

// TestPackageManagerInstallsAndCascades installs a Configuration through the
// real package manager, which must pull it from the authenticated registry,
// resolve and install its provider and function dependencies and report all
// three Healthy; deleting it must garbage-collect its revisions.
func TestPackageManagerInstallsAndCascades(t *testing.T) {
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	xp := Get(t, env)
	pushE2ESamples(t, reg)
	requireAuth(t, reg)

	ctx := context.Background()
	dc, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	repo := reg.Host + "/e2e/crossplane-contrib/"
	const cfgName = "smoke-configuration-aws-network"
	cfg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "Configuration",
		"metadata": map[string]any{"name": cfgName},
		"spec":     map[string]any{"package": repo + "configuration-aws-network:v0.23.0"},
	}}
	deps := []dependency{
		{ProviderGVR, ProviderRevisionGVR, repo + "provider-nop"},
		{FunctionGVR, FunctionRevisionGVR, repo + "function-patch-and-transform"},
	}
	t.Cleanup(func() { cleanUp(t, dc, repo+"configuration-aws-network", cfgName, deps) })
	if _, err := dc.Resource(ConfigurationGVR).Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Configuration: %v", err)
	}

	requireInstalled(t, xp, dc, cfgName, repo, deps)
	revs := revisionsOf(t, dc, ConfigurationRevisionGVR, cfgName)
	if len(revs) == 0 {
		t.Fatal("the Configuration is Healthy but has no ConfigurationRevision")
	}

	if err := dc.Resource(ConfigurationGVR).Delete(ctx, cfgName, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete Configuration: %v", err)
	}
	if _, err := WaitFor(ctx, dc.Resource(ConfigurationGVR), cfgName, deleteTimeout, Gone); err != nil {
		t.Fatalf("Configuration not deleted: %v", err)
	}
	for _, rev := range revs {
		if _, err := WaitFor(ctx, dc.Resource(ConfigurationRevisionGVR), rev, deleteTimeout, Gone); err != nil {
			t.Errorf("revision of the deleted Configuration not garbage-collected: %v", err)
		}
	}
}

// requireInstalled waits for the Configuration and the dependencies
// Crossplane installed for it to be Installed and Healthy, and listed in
// the Lock.
func requireInstalled(t *testing.T, xp *Crossplane, dc dynamic.Interface, cfgName, repo string, deps []dependency) {
	t.Helper()
	ctx := context.Background()
	if _, err := WaitFor(ctx, dc.Resource(ConfigurationGVR), cfgName, installTimeout, Ready); err != nil {
		t.Fatalf("Configuration not Installed and Healthy: %v\n%s", err, xp.Logs(30))
	}
	want := []string{repo + "configuration-aws-network"}
	for _, d := range deps {
		pkg := findDependency(t, dc, d)
		if _, err := WaitFor(ctx, dc.Resource(d.gvr), pkg.GetName(), installTimeout, Ready); err != nil {
			t.Errorf("dependency not Installed and Healthy: %v", err)
		}
		want = append(want, d.repository)
	}
	if err := Eventually(ctx, installTimeout, func(context.Context) error { return lockHas(dc, want) }); err != nil {
		t.Errorf("the Lock does not list the packages: %v", err)
	}
	// Providers and functions are Healthy only through the stand-in.
	if n := xp.standIn.count(); n < len(deps) {
		t.Errorf("the Deployment stand-in marked %d Deployments available; want at least one per provider and function (%d)", n, len(deps))
	}
}

// dependency is a package Crossplane installs for the Configuration.
type dependency struct {
	gvr, revGVR schema.GroupVersionResource
	repository  string // without tag
}

// findDependency returns the one package of d's kind whose image comes from
// d's repository: Crossplane names dependencies itself.
func findDependency(t *testing.T, dc dynamic.Interface, d dependency) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	err := Eventually(context.Background(), installTimeout, func(context.Context) error {
		found = packagesFrom(t, dc, d)
		if len(found) != 1 {
			return errors.New("want exactly one package from " + d.repository + ", found " + names(found))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Crossplane did not install the dependency: %v", err)
	}
	return found[0]
}

func packagesFrom(t *testing.T, dc dynamic.Interface, d dependency) []*unstructured.Unstructured {
	t.Helper()
	list, err := dc.Resource(d.gvr).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		src, _, _ := unstructured.NestedString(list.Items[i].Object, "spec", "package")
		if strings.HasPrefix(src, d.repository+":") || strings.HasPrefix(src, d.repository+"@") {
			out = append(out, &list.Items[i])
		}
	}
	return out
}

func revisionsOf(t *testing.T, dc dynamic.Interface, gvr schema.GroupVersionResource, pkg string) []string {
	t.Helper()
	list, err := dc.Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: LabelPackage + "=" + pkg})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range list.Items {
		out = append(out, r.GetName())
	}
	return out
}

// cleanUp deletes the Configuration (from repository cfgRepo) and the
// dependencies Crossplane installed for it (Crossplane leaves those), and
// waits until they, their revisions and their Lock entries are gone, so
// that later tests in the cluster start from nothing. Only their own Lock
// entries count: what another test of the cluster left is not theirs.
func cleanUp(t *testing.T, dc dynamic.Interface, cfgRepo, cfgName string, deps []dependency) {
	ctx := context.Background()
	type victim struct {
		gvr, revGVR schema.GroupVersionResource
		name        string
	}
	victims := []victim{{ConfigurationGVR, ConfigurationRevisionGVR, cfgName}}
	for _, d := range deps {
		for _, p := range packagesFrom(t, dc, d) {
			victims = append(victims, victim{d.gvr, d.revGVR, p.GetName()})
		}
	}
	var owners []string
	for _, v := range victims {
		owners = append(owners, v.name)
		owners = append(owners, revisionsOf(t, dc, v.revGVR, v.name)...)
		_ = dc.Resource(v.gvr).Delete(ctx, v.name, metav1.DeleteOptions{})
	}
	for _, v := range victims {
		if _, err := WaitFor(ctx, dc.Resource(v.gvr), v.name, deleteTimeout, Gone); err != nil {
			t.Errorf("clean-up: %v", err)
		}
		for _, rev := range revisionsOf(t, dc, v.revGVR, v.name) {
			if _, err := WaitFor(ctx, dc.Resource(v.revGVR), rev, deleteTimeout, Gone); err != nil {
				t.Errorf("clean-up: %v", err)
			}
		}
	}
	// Their Deployments, Services and secrets go last, by garbage collection.
	err := Eventually(ctx, deleteTimeout, func(ctx context.Context) error {
		left, err := OwnedObjects(ctx, dc, owners...)
		if err == nil && len(left) > 0 {
			err = fmt.Errorf("left: %v", left)
		}
		return err
	})
	if err != nil {
		t.Errorf("clean-up: %v", err)
	}
	err = Eventually(ctx, deleteTimeout, func(ctx context.Context) error {
		lock, err := dc.Resource(LockGVR).Get(ctx, "lock", metav1.GetOptions{})
		if err != nil {
			return err
		}
		ours := []string{cfgRepo}
		for _, d := range deps {
			ours = append(ours, d.repository)
		}
		for _, src := range lockSources(lock) {
			if slices.Contains(ours, src) {
				return fmt.Errorf("the Lock still lists %s", src)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("clean-up: %v", err)
	}
}

// lockHas says which of the sources the Lock lacks.
func lockHas(dc dynamic.Interface, sources []string) error {
	lock, err := dc.Resource(LockGVR).Get(context.Background(), "lock", metav1.GetOptions{})
	if err != nil {
		return err
	}
	have := lockSources(lock)
	var missing []string
	for _, s := range sources {
		if !slices.Contains(have, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("Lock lacks %v; it lists %v", missing, have)
	}
	return nil
}

func lockSources(lock *unstructured.Unstructured) []string {
	pkgs, _, _ := unstructured.NestedSlice(lock.Object, "packages")
	var out []string
	for _, p := range pkgs {
		if m, ok := p.(map[string]any); ok {
			src, _ := m["source"].(string)
			out = append(out, src)
		}
	}
	return out
}

// pushE2ESamples puts the e2e packages in the registry, with their
// dependencies pointing at it.
func pushE2ESamples(t *testing.T, reg *testenv.Registry) {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	basic := remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})
	if _, err := fixture.PushSamples(root, reg.Host, basic); err != nil {
		t.Fatalf("push samples: %v", err)
	}
}

// requireAuth proves the registry refuses anonymous pulls, so that an
// install can only succeed through the credentials Start gave Crossplane.
func requireAuth(t *testing.T, reg *testenv.Registry) {
	t.Helper()
	ref, err := name.ParseReference(reg.Host + "/e2e/crossplane-contrib/provider-nop:v0.4.0")
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.Head(ref)
	var terr *transport.Error
	if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous HEAD of %s: %v; want 401 Unauthorized", ref, err)
	}
}

func names(us []*unstructured.Unstructured) string {
	var n []string
	for _, u := range us {
		n = append(n, u.GetName())
	}
	return "[" + strings.Join(n, " ") + "]"
}
