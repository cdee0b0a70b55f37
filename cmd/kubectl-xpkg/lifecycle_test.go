package main

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

var (
	providersGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}
	revisionsGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providerrevisions"}
)

// lifecycle is one test's cluster: the environment, an admin client and a
// stand-in package manager that answers the packages the test names.
type lifecycle struct {
	env *testenv.Env
	dyn dynamic.Interface
	mgr *pkgmanager.Manager
}

func newLifecycle(t *testing.T) *lifecycle {
	t.Helper()
	env := testenv.Get(t)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := pkgmanager.Start(dyn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Stop)
	return &lifecycle{env: env, dyn: dyn, mgr: mgr}
}

func (l *lifecycle) providerExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := l.dyn.Resource(providersGVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// desiredStates maps the revisions (of the given resource) that the package
// manager labelled as pkg's to their desired state.
func (l *lifecycle) desiredStates(t *testing.T, revisions, pkg string) map[string]string {
	t.Helper()
	gvr := revisionsGVR
	gvr.Resource = revisions
	list, err := l.dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: "pkg.crossplane.io/package=" + pkg})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range list.Items {
		out[r.GetName()], _, _ = unstructured.NestedString(r.Object, "spec", "desiredState")
	}
	return out
}

// revisions names a provider's revisions.
func (l *lifecycle) revisions(t *testing.T, pkg string) []string {
	t.Helper()
	return slices.Sorted(maps.Keys(l.desiredStates(t, revisionsGVR.Resource, pkg)))
}

// tableRow is the fields of the table line that starts with name.
func tableRow(table, name string) []string {
	for line := range strings.Lines(table) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return f
		}
	}
	return nil
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func TestInstallWaitGetDescribeUninstall(t *testing.T) {
	l := newLifecycle(t)
	ref, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "lifecycle-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)

	// -v=8 logs request bodies: the proof of what was sent.
	r := x.Run("install", ref, name, "--wait=60s", "-v=8").Succeeds(t)
	rev := pkgmanager.RevisionName(name, ref)
	contains(t, "install stdout", r.Stdout, "provider.pkg.crossplane.io/"+name+" created")
	contains(t, "install progress", r.Stderr, "revision "+rev+" (Active) created", "Installed=True (ActivePackageRevision)", "Healthy=True (HealthyPackageRevision)")

	// Only spec.package was sent: everything else is the API server's default.
	contains(t, "request log", r.Stderr, `"spec":{"package":"`+ref+`"}}`)

	r = x.Run("get").Succeeds(t)
	if row := tableRow(r.Stdout, name); !slices.Equal(row[1:], []string{"Provider", ref[:strings.LastIndex(ref, ":")], "v0.4.0", "True", "True", rev, row[7]}) {
		t.Errorf("get row %q", row)
	}
	r = x.Run("describe", "provider/"+name).Succeeds(t)
	contains(t, "describe", r.Stdout, "Current revision:   "+rev, "Revisions:", rev+"   1 ", "Active", "Conditions:", "ActivePackageRevision")
	x.Run("install", ref, name).Succeeds(t) // identical: a no-op
	r = x.Run("install", "provider", strings.Replace(ref, ":v0.4.0", ":v0.2.1", 1), name).Fails(t, 1)
	contains(t, "another version", r.Stderr, "is already installed from "+ref+": use 'kubectl xpkg upgrade "+name+"'")
	r = x.Run("get", "-l", "team=none").Succeeds(t)
	contains(t, "get -l", r.Stderr, "No packages found.")

	r = x.Run("uninstall", name, "--wait=60s").Succeeds(t)
	contains(t, "uninstall", r.Stdout, "provider/"+name+" deleted")
	if l.providerExists(t, name) || len(l.revisions(t, name)) > 0 {
		t.Errorf("after uninstall --wait: provider exists %v, revisions %v", l.providerExists(t, name), l.revisions(t, name))
	}
}

// TestInstallServerDryRun: the API server admits the object and stores
// nothing. (The client dry run: plugin's TestInstallClientDryRun.)
func TestInstallServerDryRun(t *testing.T) {
	l := newLifecycle(t)
	ref, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
	x := clitest.New(t).WithEnv(l.env)
	r := x.Run("install", "provider", ref, "dry-run-nop", "--dry-run=server").Succeeds(t)
	contains(t, "server dry run", r.Stdout, "provider.pkg.crossplane.io/dry-run-nop created (server dry run)")
	if l.providerExists(t, "dry-run-nop") {
		t.Error("a dry run created the provider")
	}
}

func TestInstallWaitStopsOnTerminalFailure(t *testing.T) {
	l := newLifecycle(t)
	ref, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const msg = "cannot unpack package: failed to fetch package digest from remote: MANIFEST_UNKNOWN"
	l.mgr.Manage("failing-nop", pkgmanager.Behaviour{Fail: msg})
	t.Cleanup(func() { clitest.New(t).WithEnv(l.env).Run("uninstall", "failing-nop") })
	r := clitest.New(t).WithEnv(l.env).Run("install", "provider", ref, "failing-nop", "--wait=5m").Fails(t, 1)
	contains(t, "stderr", r.Stderr, "error: provider/failing-nop failed: Installed=False (UnpackingPackage: "+msg+")")
}

// TestUpgradeWaitStopsOnUnpackFailure: Crossplane reports an image it
// cannot unpack for the package's present generation, and keeps the
// reference it had as its current identifier: the wait ends at once, on
// that failure, instead of sitting out its time.
func TestUpgradeWaitStopsOnUnpackFailure(t *testing.T) {
	l := newLifecycle(t)
	old, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
	pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name, msg = "unpack-nop", "cannot unpack package: failed to fetch package digest from remote: MANIFEST_UNKNOWN"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", old, name, "--wait=60s").Succeeds(t)
	l.mgr.Manage(name, pkgmanager.Behaviour{Fail: msg})
	r := x.Run("upgrade", name, "v0.4.0", "--wait=5m").Fails(t, 1)
	contains(t, "stderr", r.Stderr, "provider/"+name+" failed: Installed=False (UnpackingPackage: "+msg+")")
}

func TestInstallWaitTimesOutWithItsOwnCode(t *testing.T) {
	l := newLifecycle(t)
	ref, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	l.mgr.Manage("unhealthy-nop", pkgmanager.Behaviour{Unhealthy: true})
	t.Cleanup(func() { clitest.New(t).WithEnv(l.env).Run("uninstall", "unhealthy-nop") })
	r := clitest.New(t).WithEnv(l.env).Run("install", "provider", ref, "unhealthy-nop", "--wait=3s").Fails(t, 124)
	contains(t, "stderr", r.Stderr, "error: timed out after 3s waiting for provider/unhealthy-nop: still pending: Healthy=False (UnhealthyPackageRevision: runtime is not ready)")
}

func TestUninstallProtectsDependencies(t *testing.T) {
	l := newLifecycle(t)
	provRef, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	cfgRef, _ := pushSample(t, l.env, "configuration-aws-network", "v0.23.0")
	provRepo := provRef[:strings.LastIndex(provRef, ":")]
	oldRef, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
	// The package manager installs the provider as the configuration's
	// dependency; upgraded by hand, it is still the package manager's to
	// remove.
	dep := pkgmanager.Dependency{Package: provRepo, Constraints: ">=v0.2.0", Type: "Provider", Install: oldRef, As: "dep-nop"}
	l.mgr.Manage("dep-nop", pkgmanager.Behaviour{})
	l.mgr.Manage("dep-network", pkgmanager.Behaviour{DependsOn: []pkgmanager.Dependency{dep}})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", "configuration/dep-network"); x.Run("uninstall", "provider/dep-nop") })
	x.Run("install", "configuration", cfgRef, "dep-network", "--wait=60s").Succeeds(t)
	awaitHealthy(t, l.dyn, providersGVR, "dep-nop")
	x.Run("upgrade", "dep-nop", "v0.4.0", "--wait=60s").Succeeds(t)

	r := x.Run("tree", "dep-network").Succeeds(t)
	cfgRepo := cfgRef[:strings.LastIndex(cfgRef, ":")]
	want := "configuration/dep-network " + cfgRepo + " v0.23.0 [installed: True, healthy: True]\n" +
		"└── provider/dep-nop " + provRepo + " v0.4.0 (wants >=v0.2.0) [installed: True, healthy: True]\n"
	if r.Stdout != want {
		t.Errorf("tree:\n%s\nwant:\n%s", r.Stdout, want)
	}

	// A custom name for a package others depend on is planned against.
	r = x.Run("install", "provider", provRef, "custom-nop", "--dry-run=server").Fails(t, 3)
	contains(t, "custom name", r.Stderr, "BLOCKING installed packages depend on "+provRepo+" (the revisions "+pkgmanager.RevisionName("dep-network", cfgRef)+")", "[twin-name]")

	r = x.Run("uninstall", "dep-nop").Fails(t, 3)
	contains(t, "stderr", r.Stderr, "BLOCKING provider/dep-nop is a dependency of configuration/dep-network: uninstall it first [dependents]",
		"error: uninstall of provider/dep-nop refused: provider/dep-nop is a dependency of configuration/dep-network: uninstall it first; pass --force to go ahead anyway")
	if !l.providerExists(t, "dep-nop") {
		t.Fatal("the refused uninstall deleted the provider")
	}
	r = x.Run("uninstall", "configuration/dep-network", "--with-dependencies", "--wait=60s").Succeeds(t)
	contains(t, "uninstall", r.Stderr, "provider/dep-nop ("+provRepo+") is needed by nothing else: uninstalling it too")
	contains(t, "uninstall", r.Stdout, "configuration/dep-network deleted", "provider/dep-nop deleted")
	if l.providerExists(t, "dep-nop") {
		t.Error("--with-dependencies left the provider")
	}

	// Installed explicitly, the same dependency stays: refused, then
	// forced, only the configuration goes.
	l.mgr.Manage("own-nop", pkgmanager.Behaviour{})
	dep.As = "never-made"
	l.mgr.Manage("own-network", pkgmanager.Behaviour{DependsOn: []pkgmanager.Dependency{dep}})
	t.Cleanup(func() { x.Run("uninstall", "configuration/own-network"); x.Run("uninstall", "provider/own-nop") })
	x.Run("install", "provider", provRef, "own-nop", "--wait=60s").Succeeds(t)
	x.Run("install", "configuration", cfgRef, "own-network", "--wait=60s").Succeeds(t)
	// It stays, which blocks nothing: no --force needed.
	r = x.Run("uninstall", "configuration/own-network", "--with-dependencies", "--yes", "--wait=60s").Succeeds(t)
	contains(t, "explicit", r.Stderr, "INFO     provider/own-nop ("+provRepo+") is needed by nothing else but was installed explicitly (its package was set by kubectl-xpkg, not only by the package manager)",
		"uninstall it by name to remove it too [explicit-dependency]")
	contains(t, "uninstall", r.Stdout, "configuration/own-network deleted")
	if strings.Contains(r.Stdout, "own-nop deleted") || !l.providerExists(t, "own-nop") || l.providerExists(t, "never-made") {
		t.Errorf("--with-dependencies deleted the explicit provider, or the package manager made another:\n%s", r.Stdout)
	}
}

// awaitHealthy waits until the package is Healthy at its generation.
func awaitHealthy(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Healthy" && m["status"] == "True" && m["observedGeneration"] == u.GetGeneration() {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%s %s never became healthy: %v", gvr.Resource, name, err)
	}
}

func TestInstallRBACDenial(t *testing.T) {
	l := newLifecycle(t)
	ref, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	r := clitest.New(t).WithEnv(l.env).Run("install", "provider", ref, "rbac-nop", "--context", testenv.ContextUser).Fails(t, 1)
	// The identity may not list ImageConfigs either: one warning line says
	// so, then the error, in one line.
	warning, errLine, _ := strings.Cut(r.Stderr, "\n")
	if !strings.HasPrefix(warning, "Warning: you may not list ImageConfigs") || strings.Count(errLine, "\n") != 1 || !strings.HasPrefix(errLine, "error: ") {
		t.Errorf("want a warning and a one-line error, got:\n%s", r.Stderr)
	}
	contains(t, "stderr", r.Stderr, `User "xpkg-dev" cannot get resource "providers" in API group "pkg.crossplane.io"`, "RBAC")
}

// TestWaitFailsFastWhenRBACDeniesTheWatch: an identity that may install a
// provider but not list its revisions gets, within seconds, one line that
// names what it may not watch, not a silent wait until the timeout.
func TestWaitFailsFastWhenRBACDeniesTheWatch(t *testing.T) {
	l := newLifecycle(t)
	ref, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "rbac-wait-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	ctx := context.Background()
	roles := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	bindings := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
	role := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": name},
		"rules": []any{
			// Everything the wait watches but provider revisions.
			map[string]any{"apiGroups": []any{"pkg.crossplane.io"}, "resources": []any{"providers", "configurations", "functions", "locks",
				"configurationrevisions", "functionrevisions"},
				"verbs": []any{"get", "list", "watch", "create", "patch"}},
		},
	}}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": name},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": testenv.ContextUser}},
	}}
	for _, o := range []struct {
		gvr schema.GroupVersionResource
		u   *unstructured.Unstructured
	}{{roles, role}, {bindings, binding}} {
		if _, err := l.dyn.Resource(o.gvr).Create(ctx, o.u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = l.dyn.Resource(bindings).Delete(ctx, name, metav1.DeleteOptions{})
		_ = l.dyn.Resource(roles).Delete(ctx, name, metav1.DeleteOptions{})
		_ = l.dyn.Resource(providersGVR).Delete(ctx, name, metav1.DeleteOptions{})
	})
	start := time.Now()
	// Failing within waitBound, far below --wait, means it did not wait.
	r := clitest.New(t).WithEnv(l.env).Run("install", "provider", ref, name, "--context", testenv.ContextUser, "--wait=10m").Fails(t, 1)
	if took := time.Since(start); took > waitBound {
		t.Errorf("took %s to fail", took)
	}
	contains(t, "stdout", r.Stdout, "provider.pkg.crossplane.io/"+name+" created")
	contains(t, "stderr", r.Stderr, "error: cannot watch providerrevisions.pkg.crossplane.io", `cannot list resource "providerrevisions"`)
}
