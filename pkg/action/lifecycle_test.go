package action

import (
	"context"
	"errors"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

// listKinds are the resources the fake cluster serves.
var listKinds = fakecluster.ListKinds

// fakeCluster is a cluster over client-go's dynamic fake, holding objs.
func fakeCluster(t *testing.T, objs ...*unstructured.Unstructured) *cluster.Cluster {
	t.Helper()
	c, _ := fakeClusterDyn(t, objs...)
	return c
}

// fakeClusterDyn is fakeCluster with its dynamic fake, whose actions tell
// the requests made.
func fakeClusterDyn(t *testing.T, objs ...*unstructured.Unstructured) (*cluster.Cluster, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	f := fakecluster.New(objs...)
	return f.Cluster(), f.Dynamic
}

var obj = fakecluster.Object

func provider(name, pkg, currentRevision string) *unstructured.Unstructured {
	return obj("pkg.crossplane.io/v1", "Provider", name, map[string]any{
		"spec":   map[string]any{"package": pkg},
		"status": map[string]any{"currentRevision": currentRevision},
	})
}

// madeBy records manager as the field manager that set the package's
// reference: the package manager's resolver when it installs a
// dependency, a user's tool when a package is installed explicitly.
func madeBy(manager string, u *unstructured.Unstructured) *unstructured.Unstructured {
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{".":{},"f:package":{}}}`)}}})
	return u
}

func revision(pkgName, name, image string, n int64, state string, refs ...map[string]any) *unstructured.Unstructured {
	var objectRefs []any
	for _, r := range refs {
		objectRefs = append(objectRefs, r)
	}
	u := obj("pkg.crossplane.io/v1", "ProviderRevision", name, map[string]any{
		"spec":   map[string]any{"image": image, "revision": n, "desiredState": state},
		"status": map[string]any{"objectRefs": objectRefs},
	})
	u.SetLabels(map[string]string{"pkg.crossplane.io/package": pkgName})
	return u
}

func lock(pkgs ...map[string]any) *unstructured.Unstructured {
	var list []any
	for _, p := range pkgs {
		list = append(list, p)
	}
	return obj("pkg.crossplane.io/v1beta1", "Lock", "lock", map[string]any{"packages": list})
}

func widgetsCRD() *unstructured.Unstructured {
	return obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.stored.example.org", map[string]any{
		"spec": map[string]any{"group": "stored.example.org", "scope": "Cluster",
			"names":    map[string]any{"plural": "widgets", "kind": "Widget"},
			"versions": []any{map[string]any{"name": "v1alpha1", "served": true, "storage": false}, map[string]any{"name": "v1beta1", "served": true, "storage": true}}},
		"status": map[string]any{"storedVersions": []any{"v1alpha1", "v1beta1"}},
	})
}

const (
	provRepo = "r.example.org/org/provider-stored"
	cfgRepo  = "r.example.org/org/configuration-stored"
)

// storedCluster: provider-stored v1.1.0 (revision 2; revision 1 ran
// v1.0.0), defining widgets, with one widget; configuration-stored
// depending on it.
func storedCluster(t *testing.T, widgets int) *cluster.Cluster {
	c, _ := storedClusterDyn(t, widgets)
	return c
}

// storedClusterDyn is storedCluster with its dynamic fake.
func storedClusterDyn(t *testing.T, widgets int) (*cluster.Cluster, *dynamicfake.FakeDynamicClient) {
	mrd := map[string]any{"apiVersion": "apiextensions.crossplane.io/v1alpha1", "kind": "ManagedResourceDefinition", "name": "widgets.stored.example.org"}
	objs := []*unstructured.Unstructured{
		madeBy(installed.PackageManagerFieldManager, provider("provider-stored", provRepo+":v1.1.0", "provider-stored-bbb")),
		revision("provider-stored", "provider-stored-aaa", provRepo+":v1.0.0", 1, "Inactive", mrd),
		revision("provider-stored", "provider-stored-bbb", provRepo+":v1.1.0", 2, "Active", mrd),
		obj("pkg.crossplane.io/v1", "Configuration", "configuration-stored", map[string]any{"spec": map[string]any{"package": cfgRepo + ":v1.0.0"}}),
		lock(
			map[string]any{"name": "configuration-stored-ccc", "source": cfgRepo, "version": "v1.0.0",
				"dependencies": []any{map[string]any{"package": provRepo, "constraints": ">=v1.0.0 <v2.0.0", "type": "Provider"}}},
			map[string]any{"name": "provider-stored-bbb", "source": provRepo, "version": "v1.1.0"},
		),
		widgetsCRD(),
	}
	for i := range widgets {
		objs = append(objs, obj("stored.example.org/v1beta1", "Widget", "widget-"+string(rune('a'+i)), nil))
	}
	return fakeClusterDyn(t, objs...)
}

func planFindings(p *Plan, rule string) []findings.Finding {
	var out []findings.Finding
	for _, f := range p.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func TestUninstallPlanRefusesLiveObjectsAndDependents(t *testing.T) {
	c := storedCluster(t, 2)
	up, err := (&Uninstall{Cluster: c}).Plan(context.Background(), []string{"provider-stored"})
	if err != nil {
		t.Fatal(err)
	}
	if !up.Blocking() {
		t.Fatalf("plan does not block: %+v", up.Findings)
	}
	deps := planFindings(up.Plan, findings.RuleDependents)
	if len(deps) != 1 || deps[0].Severity != findings.Blocking || !strings.Contains(deps[0].Message, "provider/provider-stored is a dependency of configuration/configuration-stored") {
		t.Errorf("dependents: %+v", deps)
	}
	live := planFindings(up.Plan, findings.RuleLiveObjects)
	if len(live) != 1 || live[0].Count == nil || *live[0].Count != 2 || live[0].Object != "widgets.stored.example.org" || live[0].Severity != findings.Blocking {
		t.Errorf("live objects: %+v", live)
	}
	if got := strings.Join(up.Packages, ","); got != "provider/provider-stored" {
		t.Errorf("packages: %s", got)
	}

	// Both together, with no widget left: nothing blocks.
	c = storedCluster(t, 0)
	up, err = (&Uninstall{Cluster: c}).Plan(context.Background(), []string{"configuration/configuration-stored", "provider/provider-stored"})
	if err != nil {
		t.Fatal(err)
	}
	if up.Blocking() {
		t.Errorf("removing a package with its dependent blocks: %+v", up.Findings)
	}
}

func TestUninstallWithDependencies(t *testing.T) {
	c := storedCluster(t, 0)
	u := &Uninstall{Cluster: c, WithDependencies: true}
	up, err := u.Plan(context.Background(), []string{"configuration-stored"})
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Dependencies) != 1 || up.Dependencies[0].Name != "provider-stored" {
		t.Fatalf("dependencies: %+v", up.Dependencies)
	}
	if got := strings.Join(up.Packages, ","); got != "configuration/configuration-stored,provider/provider-stored" {
		t.Errorf("packages: %s", got)
	}
	// A dry run (the fake deletes anyway) needs no wait between the two.
	var deleted []string
	err = u.Apply(context.Background(), up, UninstallOptions{DryRun: true,
		Deleted: func(p *installed.Package) { deleted = append(deleted, p.KindName()) }})
	if err != nil || strings.Join(deleted, ",") != "configuration/configuration-stored,provider/provider-stored" {
		t.Errorf("deleted %v, %v", deleted, err)
	}
}

// TestUninstallNamedInDependencyOrder: a configuration and the provider
// it needs, both named, go one after the other, the configuration first
// and gone before the provider is deleted (else the resolver installs
// the provider again), whatever order they are named in.
func TestUninstallNamedInDependencyOrder(t *testing.T) {
	c := storedCluster(t, 0)
	u := &Uninstall{Cluster: c}
	up, err := u.Plan(context.Background(), []string{"provider/provider-stored", "configuration/configuration-stored"})
	if err != nil {
		t.Fatal(err)
	}
	phases := deletionPhases(up.lock, up.Named)
	if len(phases) != 2 || phases[0][0].Name != "configuration-stored" || phases[1][0].Name != "provider-stored" {
		t.Fatalf("phases: %v", phases)
	}
	// A dry run (the fake deletes anyway) needs no wait between the two.
	var deleted []string
	err = u.Apply(context.Background(), up, UninstallOptions{DryRun: true,
		Deleted: func(p *installed.Package) { deleted = append(deleted, p.KindName()) }})
	if err != nil || strings.Join(deleted, ",") != "configuration/configuration-stored,provider/provider-stored" {
		t.Errorf("deleted %v, %v", deleted, err)
	}
	// Until the configuration's Lock entry goes, the provider stays.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var progress strings.Builder
	u = &Uninstall{Cluster: storedCluster(t, 0), Events: Events{Progress: &progress}}
	if up, err = u.Plan(ctx, []string{"provider/provider-stored", "configuration/configuration-stored"}); err != nil {
		t.Fatal(err)
	}
	deleted = nil
	err = u.Apply(ctx, up, UninstallOptions{Wait: time.Minute,
		Deleted: func(p *installed.Package) { deleted = append(deleted, p.KindName()) }})
	if strings.Join(deleted, ",") != "configuration/configuration-stored" || err == nil ||
		!strings.Contains(progress.String(), "Waiting up to 1m0s for configuration/configuration-stored to go before removing what it depends on") {
		t.Errorf("deleted %v before the Lock entry went (%v)\n%s", deleted, err, progress.String())
	}
}

// TestUninstallWithDependenciesKeepsExplicitOnes: a dependency nothing
// else needs that the package manager did not install (its reference set
// by someone else, or by no one on record) stays, with a blocking finding;
// forced, only the named package goes.
func TestUninstallWithDependenciesKeepsExplicitOnes(t *testing.T) {
	for who, fields := range map[string]func(*unstructured.Unstructured){
		"kubectl-xpkg": func(u *unstructured.Unstructured) { madeBy("kubectl-xpkg", u) },
		"no record":    func(u *unstructured.Unstructured) { u.SetManagedFields(nil) },
	} {
		t.Run(who, func(t *testing.T) {
			c, dyn := storedClusterDyn(t, 0)
			ctx := context.Background()
			prov, err := dyn.Resource(providersGVR).Get(ctx, "provider-stored", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fields(prov)
			if _, err := dyn.Resource(providersGVR).Update(ctx, prov, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			u := &Uninstall{Cluster: c, WithDependencies: true}
			up, err := u.Plan(ctx, []string{"configuration-stored"})
			if err != nil {
				t.Fatal(err)
			}
			if len(up.Dependencies) != 0 || strings.Join(up.Packages, ",") != "configuration/configuration-stored" {
				t.Errorf("dependencies %+v, packages %v", up.Dependencies, up.Packages)
			}
			f := planFindings(up.Plan, findings.RuleExplicitDependency)
			if len(f) != 1 || f[0].Severity != findings.Info || up.Blocking() || f[0].Object != "provider/provider-stored" ||
				!strings.Contains(f[0].Message, "installed explicitly") || !strings.Contains(f[0].Message, "uninstall it by name") {
				t.Fatalf("findings: %+v", up.Findings)
			}
			if who == "kubectl-xpkg" && !strings.Contains(f[0].Message, "set by kubectl-xpkg") {
				t.Errorf("the finding does not say who: %s", f[0].Message)
			}
			var deleted []string
			err = u.Apply(ctx, up, UninstallOptions{DryRun: true,
				Deleted: func(p *installed.Package) { deleted = append(deleted, p.KindName()) }})
			if err != nil || strings.Join(deleted, ",") != "configuration/configuration-stored" {
				t.Errorf("deleted %v, %v", deleted, err)
			}
			if _, err := c.Lookup(ctx, "provider-stored"); err != nil {
				t.Errorf("the explicit dependency was deleted: %v", err)
			}
		})
	}
}

func installedPkg(t *testing.T, c *cluster.Cluster, name string) *Installed {
	t.Helper()
	p, err := c.Lookup(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	revs, err := c.Revisions(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	in := &Installed{Package: p, Revisions: revs}
	in.Image = in.Current().Image
	return in
}

func TestRollbackTarget(t *testing.T) {
	in := installedPkg(t, storedCluster(t, 0), "provider-stored")
	for _, c := range []struct{ to, want, err string }{
		{"", provRepo + ":v1.0.0", ""},
		{"1", provRepo + ":v1.0.0", ""},
		{"provider-stored-aaa", provRepo + ":v1.0.0", ""},
		{"2", "", "is the current revision"},
		{"7", "", `has no revision "7"`},
	} {
		got, err := RollbackTarget(in, c.to)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("--to-revision %q: %q, %v; want %q, %q", c.to, got, err, c.want, c.err)
		}
	}
	// An upgrade Crossplane could not unpack: the package points at an
	// image with no revision, the current revision is still the one that
	// ran: back to it.
	moved := *in.Package
	moved.Source = provRepo + ":v9.9.9"
	failed := *in
	failed.Package = &moved
	if got, err := RollbackTarget(&failed, ""); got != provRepo+":v1.1.0" || err != nil {
		t.Errorf("after an upgrade Crossplane could not unpack: %q, %v; want back to what runs", got, err)
	}
	in.Revisions = in.Revisions[:1] // only the current one kept
	if _, err := RollbackTarget(in, ""); err == nil || !strings.Contains(err.Error(), "keeps no revision older than provider-stored-bbb") {
		t.Errorf("no older revision: %v", err)
	}
}

func TestRules(t *testing.T) {
	c := storedCluster(t, 1)
	ctx := context.Background()
	pkgs, _ := c.List(ctx, "", "")
	lk, _ := c.Lock(ctx)

	deps := diagnose.DependentFindings(lk, pkgs, provRepo, "v2.0.0")
	if len(deps) != 1 || deps[0].Severity != findings.Blocking || deps[0].Object != "configuration/configuration-stored" ||
		!strings.Contains(deps[0].Message, ">=v1.0.0 <v2.0.0, which excludes v2.0.0") {
		t.Errorf("dependent-constraint: %+v", deps)
	}
	if deps := diagnose.DependentFindings(lk, pkgs, provRepo, "v1.2.0"); len(deps) != 0 {
		t.Errorf("v1.2.0 is allowed: %+v", deps)
	}

	crds, err := c.CRDs(ctx, []string{"widgets.stored.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	live, err := diagnose.LiveObjectFindings(ctx, c, crds, map[string][]string{"widgets.stored.example.org": {"v1alpha1"}}, "v2")
	if err != nil || len(live) != 1 || *live[0].Count != 1 || live[0].Severity != findings.Warning {
		t.Errorf("a dropped version with objects: %+v, %v", live, err)
	}
	live, _ = diagnose.LiveObjectFindings(ctx, c, crds, map[string][]string{"widgets.stored.example.org": nil}, "v2")
	if len(live) != 1 || live[0].Severity != findings.Blocking {
		t.Errorf("a kind that goes with objects: %+v", live)
	}

	for _, tc := range []struct {
		action, from, to string
		want             findings.Severity
	}{{ActionUpgrade, "v1.1.0", "v1.0.0", findings.Blocking}, {ActionRollback, "v1.1.0", "v1.0.0", findings.Info}, {ActionUpgrade, "v1.0.0", "v1.1.0", ""}} {
		f := diagnose.DowngradeFinding(tc.action == ActionRollback, tc.from, tc.to)
		if (f == nil) != (tc.want == "") || f != nil && f.Severity != tc.want {
			t.Errorf("%s %s→%s: %+v", tc.action, tc.from, tc.to, f)
		}
	}

	for _, tc := range []struct {
		constraint, running string
		want                findings.Severity
	}{{">=v2.0.0", "v2.3.4", findings.Info}, {">=v2.4.0", "v2.3.4", findings.Blocking}, {">=v2.0.0", "", findings.Warning}, {"", "v2.3.4", ""}} {
		f := diagnose.CrossplaneVersionFinding(tc.constraint, tc.running, nil, "crossplane-system", "target")
		if (f == nil) != (tc.want == "") || f != nil && f.Severity != tc.want {
			t.Errorf("crossplane %q on %q: %+v", tc.constraint, tc.running, f)
		}
	}
}

// TestCrossplaneVersionThatCannotBeChecked: a Deployment that cannot be
// read (forbidden, absent) is no pass: a warning that says why.
func TestCrossplaneVersionThatCannotBeChecked(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{apierrors.NewForbidden(gr, "crossplane", errors.New("RBAC")), "could not be checked: you may not read the Deployment crossplane in crossplane-system"},
		{apierrors.NewNotFound(gr, "crossplane"), "could not be checked: no Deployment crossplane in crossplane-system (--crossplane-namespace names another)"},
	} {
		f := diagnose.CrossplaneVersionFinding(">=v2.0.0", "", tc.err, "crossplane-system", "target")
		if f == nil || f.Severity != findings.Warning || !strings.Contains(f.Message, tc.want) {
			t.Errorf("%v: %+v", tc.err, f)
		}
	}
}

func TestCrossplaneVersionFromItsDeployment(t *testing.T) {
	dep := obj("apps/v1", "Deployment", "crossplane", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "universal-crossplane", "image": "xpkg.crossplane.io/crossplane/crossplane:v2.3.4"}}}}}})
	dep.SetNamespace("crossplane-system")
	c := fakeCluster(t, dep)
	if v, _ := c.CrossplaneVersion(context.Background(), "crossplane-system"); v != "v2.3.4" {
		t.Errorf("version from the image: %q", v)
	}
	// The tag that runs decides over the chart's label.
	dep.SetLabels(map[string]string{"app.kubernetes.io/version": "2.3.5"})
	if v, _ := fakeCluster(t, dep).CrossplaneVersion(context.Background(), "crossplane-system"); v != "v2.3.4" {
		t.Errorf("version from the image beside the label: %q", v)
	}
	// An image pinned by digest alone: the label, as the chart writes it.
	_ = unstructured.SetNestedSlice(dep.Object, []any{map[string]any{"name": "crossplane", "image": "xpkg.crossplane.io/crossplane/crossplane@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}, "spec", "template", "spec", "containers")
	if v, _ := fakeCluster(t, dep).CrossplaneVersion(context.Background(), "crossplane-system"); v != "v2.3.5" {
		t.Errorf("version from the label: %q", v)
	}
	if v, err := fakeCluster(t).CrossplaneVersion(context.Background(), "crossplane-system"); v != "" || !apierrors.IsNotFound(err) {
		t.Errorf("no Deployment: %q, %v", v, err)
	}
}

func TestRefusal(t *testing.T) {
	p := &Plan{Action: ActionUpgrade, Package: "provider/p", From: "r/p:v1", To: "r/p:v2", Findings: []findings.Finding{
		{Rule: findings.RuleBreakingChange, Severity: findings.Warning, Message: "w"},
		{Rule: findings.RuleStoredVersionDropped, Severity: findings.Blocking, Message: "b1"},
		{Rule: findings.RuleLiveObjects, Severity: findings.Blocking, Message: "b2", Count: findings.Count(3)},
	}}
	if err := (&RefusedError{Plan: p}).Error(); err != "upgrade of provider/p refused: b1 (and 1 more blocking findings); pass --force to go ahead anyway" {
		t.Errorf("refusal: %s", err)
	}
}

// TestRunningUnderManualActivation: Crossplane makes a new revision
// current before it is activated; what runs is the active one.
func TestRunningUnderManualActivation(t *testing.T) {
	c := fakeCluster(t,
		provider("p", provRepo+":v1.1.0", "p-new"),
		revision("p", "p-old", provRepo+":v1.0.0", 1, "Active"),
		revision("p", "p-new", provRepo+":v1.1.0", 2, "Inactive"),
	)
	p, err := c.Lookup(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadInstalled(context.Background(), &resolve.Registry{Cluster: c}, p)
	if err != nil {
		t.Fatal(err)
	}
	if in.Image != provRepo+":v1.0.0" || in.Current().Name != "p-new" {
		t.Errorf("runs %s (current %s)", in.Image, in.Current().Name)
	}
}

// TestUninstallNamedExplicitDependencyTakesItsOwn: a dependency installed
// explicitly but named too goes, and takes the dependencies the package
// manager installed for it.
func TestUninstallNamedExplicitDependencyTakesItsOwn(t *testing.T) {
	leafRepo := "r.example.org/org/provider-leaf"
	objs := []*unstructured.Unstructured{
		obj("pkg.crossplane.io/v1", "Configuration", "cfg", map[string]any{"spec": map[string]any{"package": cfgRepo + ":v1.0.0"}}),
		madeBy("kubectl-xpkg", provider("prov", provRepo+":v1.1.0", "")),
		madeBy(installed.PackageManagerFieldManager, provider("leaf", leafRepo+":v1.0.0", "")),
		lock(
			map[string]any{"name": "cfg-a", "source": cfgRepo, "version": "v1.0.0",
				"dependencies": []any{map[string]any{"package": provRepo, "constraints": ">=v1.0.0", "type": "Provider"}}},
			map[string]any{"name": "prov-b", "source": provRepo, "version": "v1.1.0",
				"dependencies": []any{map[string]any{"package": leafRepo, "constraints": ">=v1.0.0", "type": "Provider"}}},
			map[string]any{"name": "leaf-c", "source": leafRepo, "version": "v1.0.0"},
		),
	}
	c, _ := fakeClusterDyn(t, objs...)
	up, err := (&Uninstall{Cluster: c, WithDependencies: true}).Plan(context.Background(), []string{"configuration/cfg", "provider/prov"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(up.Packages, ","); got != "configuration/cfg,provider/prov,provider/leaf" {
		t.Errorf("packages %s", got)
	}
	if f := planFindings(up.Plan, findings.RuleExplicitDependency); len(f) != 0 {
		t.Errorf("findings about what was named: %+v", f)
	}
	// Not named, the explicit provider stays, and so does the leaf it needs.
	up, err = (&Uninstall{Cluster: c, WithDependencies: true}).Plan(context.Background(), []string{"configuration/cfg"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(up.Packages, ","); got != "configuration/cfg" || len(planFindings(up.Plan, findings.RuleExplicitDependency)) != 1 {
		t.Errorf("packages %s, findings %+v", got, up.Findings)
	}
}

// TestReleaseFindings: what a change of a package under Manual activation
// does depends on the running Crossplane, and a provider's or function's
// activated change restarts its runtime; a configuration has none.
func TestReleaseFindings(t *testing.T) {
	run := &installed.Revision{Name: "fn-0123456789ab", DesiredState: "Active"}
	for _, tc := range []struct {
		crossplane string
		run        *installed.Revision
		want, not  string
	}{
		{"v2.4.2", run, "Crossplane deactivates its running revision fn-0123456789ab at once and function/fn runs nothing until the new revision is activated (pass --activate); on Crossplane v2.4.2, running here, any edit of its spec does the same", ""},
		{"v2.3.4", run, "Crossplane deactivates its running revision fn-0123456789ab at once", "edit of its spec"},
		{"", run, "; from Crossplane v2.4 any edit of its spec does the same", ""},
		{"v2.3.4", nil, "function/fn activates revisions by hand: the new revision waits until activated (pass --activate)", "deactivates"},
	} {
		f := diagnose.ManualActivationFinding("function/fn", tc.run, tc.crossplane)
		if f.Rule != findings.RuleManualActivation || f.Severity != findings.Info || !strings.Contains(f.Message, tc.want) || tc.not != "" && strings.Contains(f.Message, tc.not) {
			t.Errorf("on Crossplane %q: %+v", tc.crossplane, f)
		}
	}
	for _, tc := range []struct {
		kind   string
		run    *installed.Revision
		manual bool
		want   bool
	}{{"Provider", run, false, true}, {"Function", run, false, true}, {"Configuration", run, false, false}, {"Provider", run, true, false}, {"Provider", nil, false, false}} {
		f := diagnose.RuntimeRestartFinding(&installed.Package{Kind: tc.kind, Name: "p"}, tc.run, tc.manual, "Deployment")
		if (f != nil) != tc.want || f != nil && (f.Rule != findings.RuleRuntimeRestart || !strings.Contains(f.Message, "deletes the Deployment of its running revision fn-0123456789ab")) {
			t.Errorf("%s, manual %v: %+v", tc.kind, tc.manual, f)
		}
	}
	// The runtime controller skips a paused revision: its Deployment stays.
	paused := &installed.Revision{Name: "fn-0123456789ab", Object: &unstructured.Unstructured{}}
	paused.Object.SetAnnotations(map[string]string{"crossplane.io/paused": "true"})
	if f := diagnose.RuntimeRestartFinding(&installed.Package{Kind: "Provider", Name: "p"}, paused, false, "Deployment"); f == nil || f.Severity != findings.Warning ||
		!strings.Contains(f.Message, "is paused (crossplane.io/paused): Crossplane's runtime controller skips it, so its Deployment is not deleted") {
		t.Errorf("paused: %+v", f)
	}
	if f := diagnose.RuntimeRestartFinding(&installed.Package{Kind: "Provider", Name: "p"}, run, false, "External"); f != nil {
		t.Errorf("an External runtime restarts nothing: %+v", f)
	}
}
