package action

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// The scale scenario: provider-many defines manyCRDs kinds. Its v2.0.0
// no longer defines kind droppedKind (one object of it lives in the
// cluster) and no longer defines v1alpha1 of storedKind (the cluster
// stores objects at it); configuration-many allows only v1.
const (
	manyCRDs    = 60
	droppedKind = 37
	storedKind  = 11
	manyRepo    = "org/provider-many"
)

func manyName(i int) string { return fmt.Sprintf("kind%03ds.many.example.org", i) }

// manyPackage is provider-many's package.yaml at v1 or v2.
func manyPackage(v2 bool) []byte {
	var sb strings.Builder
	sb.WriteString("apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-many\n")
	for i := range manyCRDs {
		if v2 && i == droppedKind {
			continue
		}
		fmt.Fprintf(&sb, "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s\nspec:\n  group: many.example.org\n  scope: Cluster\n  names:\n    kind: Kind%03d\n    plural: kind%03ds\n  versions:\n", manyName(i), i, i)
		if !v2 || i != storedKind {
			sb.WriteString("  - name: v1alpha1\n    served: true\n    storage: false\n    schema:\n      openAPIV3Schema:\n        type: object\n")
		}
		sb.WriteString("  - name: v1beta1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n")
	}
	return []byte(sb.String())
}

// manyCluster is the fake cluster with provider-many v1.0.0 installed
// from the registry at host: its revision, every CRD it defines (stored at
// both versions), one object of droppedKind, and the Lock.
func manyCluster(t *testing.T, host string) (*cluster.Cluster, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	repo := host + "/" + manyRepo
	var refs []map[string]any
	objs := []*unstructured.Unstructured{
		provider("provider-many", repo+":v1.0.0", "provider-many-aaa"),
		lock(
			map[string]any{"name": "provider-many-aaa", "source": repo, "version": "v1.0.0", "type": "Provider"},
			map[string]any{"name": "configuration-many-bbb", "source": host + "/org/configuration-many", "version": "v1.0.0", "type": "Configuration",
				"dependencies": []any{map[string]any{"package": repo, "constraints": ">=v1.0.0 <v2.0.0", "type": "Provider"}}},
		),
		obj("pkg.crossplane.io/v1", "Configuration", "configuration-many", map[string]any{"spec": map[string]any{"package": host + "/org/configuration-many:v1.0.0"}}),
		obj("many.example.org/v1beta1", fmt.Sprintf("Kind%03d", droppedKind), "the-one", nil),
	}
	lists := map[schema.GroupVersionResource]string{}
	for i := range manyCRDs {
		refs = append(refs, map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": manyName(i)})
		objs = append(objs, obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", manyName(i), map[string]any{
			"spec": map[string]any{"group": "many.example.org", "scope": "Cluster",
				"names":    map[string]any{"plural": fmt.Sprintf("kind%03ds", i), "kind": fmt.Sprintf("Kind%03d", i)},
				"versions": []any{map[string]any{"name": "v1alpha1", "served": true, "storage": false}, map[string]any{"name": "v1beta1", "served": true, "storage": true}}},
			"status": map[string]any{"storedVersions": []any{"v1alpha1", "v1beta1"}},
		}))
		lists[schema.GroupVersionResource{Group: "many.example.org", Version: "v1beta1", Resource: fmt.Sprintf("kind%03ds", i)}] = fmt.Sprintf("Kind%03dList", i)
	}
	objs = append(objs, revision("provider-many", "provider-many-aaa", repo+":v1.0.0", 1, "Active", refs...))
	return fakeClusterWithLists(t, lists, objs...)
}

// fakeClusterWithLists is fakeClusterDyn with more list kinds.
func fakeClusterWithLists(t *testing.T, more map[schema.GroupVersionResource]string, objs ...*unstructured.Unstructured) (*cluster.Cluster, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	f := fakecluster.NewWithLists(more, objs...)
	return f.Cluster(), f.Dynamic
}

// requests tallies a fake's actions as "verb resource".
func requests(actions []clienttesting.Action) map[string]int {
	out := map[string]int{}
	for _, a := range actions {
		r := a.GetResource().Resource
		if strings.HasPrefix(r, "kind") {
			r = "objects of a kind"
		}
		out[a.GetVerb()+" "+r]++
	}
	return out
}

func pushMany(t *testing.T) string {
	t.Helper()
	reg := fixture.NewRegistry(t)
	for tag, v2 := range map[string]bool{"v1.0.0": false, "v2.0.0": true} {
		img, err := fixture.Image(manyPackage(v2))
		if err != nil {
			t.Fatal(err)
		}
		if err := fixture.Push(reg.Host+"/"+manyRepo+":"+tag, img); err != nil {
			t.Fatal(err)
		}
	}
	return reg.Host
}

// TestUpgradePlanRequestsDoNotGrowWithCRDs: the upgrade plan of a
// provider of 60 CRDs reads them with one list, never a GET each, counts
// objects only of the two kinds that lose something, and still finds the
// stored version dropped, the one live object of one kind among 60, and
// the dependent whose range excludes the target.
func TestUpgradePlanRequestsDoNotGrowWithCRDs(t *testing.T) {
	host := pushMany(t)
	c, dyn := manyCluster(t, host)
	in := installedPkg(t, c, "provider-many")
	in.Registry = resolve.Direct(source.Options{})
	dyn.ClearActions()
	cfg := &Config{cluster: c, registry: in.Registry, Limits: xpkg.DefaultLimits, XPNamespace: "crossplane-system"}
	ch := cfg.change(false)
	p, err := ch.Plan(context.Background(), ActionUpgrade, in, host+"/"+manyRepo+":v2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	// The version storedKind loses, and both of droppedKind's.
	if f := planFindings(p, findings.RuleStoredVersionDropped); len(f) != 3 || f[0].Object != manyName(storedKind) || f[1].Object != manyName(droppedKind) || f[2].Object != manyName(droppedKind) {
		t.Errorf("stored-version-dropped: %+v", f)
	}
	if f := planFindings(p, findings.RuleLiveObjects); len(f) != 1 || f[0].Object != manyName(droppedKind) || f[0].Severity != findings.Blocking || *f[0].Count != 1 {
		t.Errorf("live-objects: %+v", f)
	}
	if f := planFindings(p, findings.RuleDependentConstraint); len(f) != 1 || f[0].Object != "configuration/configuration-many" {
		t.Errorf("dependent-constraint: %+v", f)
	}
	got := requests(dyn.Actions())
	if got["list customresourcedefinitions"] != 1 || got["get customresourcedefinitions"] != 0 || got["list objects of a kind"] != 2 {
		t.Errorf("requests %v: want one list of CRDs, no GET of one, and two counts", got)
	}
}

// TestUninstallPlanRequestsDoNotGrowWithCRDs: the uninstall plan reads
// the CRDs with one list, counts the objects of every kind (a request a
// kind), and finds the one live object among 60 kinds.
func TestUninstallPlanRequestsDoNotGrowWithCRDs(t *testing.T) {
	c, dyn := manyCluster(t, "r.example.org")
	dyn.ClearActions()
	up, err := (&Uninstall{Cluster: c}).Plan(context.Background(), []string{"provider-many"})
	if err != nil {
		t.Fatal(err)
	}
	if f := planFindings(up.Plan, findings.RuleLiveObjects); len(f) != 1 || f[0].Object != manyName(droppedKind) {
		t.Errorf("live-objects: %+v", f)
	}
	got := requests(dyn.Actions())
	if got["list customresourcedefinitions"] != 1 || got["get customresourcedefinitions"] != 0 || got["list objects of a kind"] != manyCRDs {
		t.Errorf("requests %v: want one list of CRDs, no GET of one, and a count a kind", got)
	}
}

// TestPlanWithoutFindingsPrintsAnEmptyList: "findings": [], never null.
func TestPlanWithoutFindingsPrintsAnEmptyList(t *testing.T) {
	c := fakeCluster(t, provider("provider-lone", "r.example.org/org/provider-lone:v1.0.0", ""))
	up, err := (&Uninstall{Cluster: c}).Plan(context.Background(), []string{"provider-lone"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(up.Plan)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"findings":[]`) {
		t.Errorf("plan JSON %s", b)
	}
}

// TestUpgradePlanBlocksWhatCrossplaneWouldRefuse: the target's meta has
// an annotation YAML reads as a boolean (Crossplane refuses the package),
// and depends first on a package with no matching version in its
// registry: the resolver stops there, and the Lock's resolution stalls
// for every package. Each blocks.
func TestUpgradePlanBlocksWhatCrossplaneWouldRefuse(t *testing.T) {
	reg := fixture.NewRegistry(t)
	push := func(ref, stream string) { reg.PushStream(t, ref, stream) }
	push("org/provider-dep:v1.0.0", "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-dep\n")
	push(manyRepo+":v1.0.0", string(manyPackage(false)))
	v2 := strings.Replace(string(manyPackage(false)), "  name: provider-many\n",
		"  name: provider-many\n  annotations:\n    supported: yes\nspec:\n  dependsOn:\n  - provider: "+reg.Host+"/org/provider-dep\n    version: \">=v2.0.0\"\n  - provider: "+reg.Host+"/org/provider-dep\n    version: \">=v1.0.0\"\n  - provider: "+reg.Host+"/org/provider-nowhere\n    version: \">=v1.0.0\"\n", 1)
	push(manyRepo+":v2.0.0", v2)
	c, _ := manyCluster(t, reg.Host)
	in := installedPkg(t, c, "provider-many")
	in.Registry = resolve.Direct(source.Options{})
	cfg := &Config{cluster: c, registry: in.Registry, Limits: xpkg.DefaultLimits, XPNamespace: "crossplane-system"}
	ch := cfg.change(false)
	p, err := ch.Plan(context.Background(), ActionUpgrade, in, reg.Host+"/"+manyRepo+":v2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if f := planFindings(p, findings.RuleInvalidPackage); len(f) != 1 || f[0].Severity != findings.Blocking || !strings.Contains(f[0].Message, "metadata.annotations[supported] is a boolean (true), not a string") {
		t.Errorf("invalid-package: %+v", f)
	}
	stall := planFindings(p, findings.RuleLockStall)
	if len(stall) != 1 || stall[0].Severity != findings.Blocking || !strings.Contains(stall[0].Message, "no valid version for "+reg.Host+"/org/provider-dep with constraints >=v2.0.0") ||
		!strings.Contains(stall[0].Message, "its newest version is v1.0.0") || p.Resolution == nil || p.Resolution.Resolves {
		t.Errorf("lock-stall: %+v", stall)
	}
}

// TestPredictionReadsWhatAMoveDrops: a configuration moves to a version
// that needs its provider at v2.0.0; with automatic dependency upgrades
// the resolver upgrades the provider, whose v2.0.0 drops a kind with a
// live object: the prediction says what the move drops, and the object
// blocks it.
func TestPredictionReadsWhatAMoveDrops(t *testing.T) {
	ctx := context.Background()
	reg := fixture.NewRegistry(t)
	reg.PushStream(t, manyRepo+":v1.0.0", string(manyPackage(false)))
	reg.PushStream(t, manyRepo+":v2.0.0", string(manyPackage(true)))
	c, _ := manyCluster(t, reg.Host)
	cfg := &Config{cluster: c, registry: resolve.Direct(source.Options{}), Limits: xpkg.DefaultLimits, XPNamespace: "crossplane-system", AssumeUpgrades: "upgrades"}
	lock, _, err := c.LockState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := c.List(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	before := diagnose.StateOf(lock, pkgs)
	moved := installed.LockPackage{Name: "configuration-many", Type: "Configuration", Source: reg.Host + "/org/configuration-many", Version: "v2.0.0",
		Dependencies: []installed.LockDependency{{Package: reg.Host + "/" + manyRepo, Constraints: ">=v2.0.0", Type: "Provider"}}}
	p, err := cfg.predict(ctx, nil, before, before.With(moved))
	if err != nil {
		t.Fatal(err)
	}
	ch := p.Resolution.Changes
	if len(ch) != 1 || ch[0].Package != "provider/provider-many" || ch[0].Action != "upgrade" || ch[0].To != "v2.0.0" || ch[0].Definitions == nil ||
		!slices.Contains(ch[0].Definitions.Drops, manyName(droppedKind)) || len(ch[0].Definitions.Brings) != 0 {
		t.Fatalf("changes %+v, definitions %+v", ch, ch[0].Definitions)
	}
	live := planFindings(&Plan{Findings: p.Findings("the change")}, findings.RuleLiveObjects)
	if len(live) != 1 || live[0].Severity != findings.Blocking || live[0].Object != manyName(droppedKind) || !strings.Contains(live[0].Message, "provider/provider-many at v2.0.0 (the resolver's upgrade)") {
		t.Errorf("live-objects %+v", live)
	}
}
