package action

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

const xpNamespace = "crossplane-system"

// owner is an owner reference to a pkg.crossplane.io object; ctl makes it
// the controller.
func owner(kind, name, uid string, ctl bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "pkg.crossplane.io/v1", Kind: kind, Name: name, UID: types.UID(uid), Controller: &ctl}
}

func withOwners(u *unstructured.Unstructured, uid string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	u.SetUID(types.UID(uid))
	u.SetResourceVersion("42")
	u.SetOwnerReferences(owners)
	return u
}

// defCRD is a CRD of the given versions (the last is the storage one),
// storing objects at stored.
func defCRD(name string, versions, stored []string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	var vs, ss []any
	for i, v := range versions {
		vs = append(vs, map[string]any{"name": v, "served": true, "storage": i == len(versions)-1})
	}
	for _, v := range stored {
		ss = append(ss, v)
	}
	u := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", name, map[string]any{
		"spec": map[string]any{"group": "x.example.org", "versions": vs}, "status": map[string]any{"storedVersions": ss}})
	return withOwners(u, "crd-"+name, owners...)
}

func defMRD(name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
	u := obj("apiextensions.crossplane.io/v1alpha1", "ManagedResourceDefinition", name, map[string]any{
		"spec": map[string]any{"group": "x.example.org", "state": "Active",
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true}}}})
	return withOwners(u, "mrd-"+name, owners...)
}

// recording is a revision with a UID that records the named CRDs (and
// MRDs, named "mrd:NAME") in status.objectRefs.
func recording(u *unstructured.Unstructured, uid string, defs ...string) *unstructured.Unstructured {
	u.SetUID(types.UID(uid))
	var refs []any
	for _, d := range defs {
		ref := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": d}
		if name, ok := strings.CutPrefix(d, "mrd:"); ok {
			ref = map[string]any{"apiVersion": "apiextensions.crossplane.io/v1alpha1", "kind": "ManagedResourceDefinition", "name": name}
		}
		refs = append(refs, ref)
	}
	_ = unstructured.SetNestedSlice(u.Object, refs, "status", "objectRefs")
	return u
}

func healthy(status, msg string, since time.Duration) map[string]any {
	return map[string]any{"type": "RevisionHealthy", "status": status, "message": msg,
		"lastTransitionTime": time.Now().Add(-since).UTC().Format(time.RFC3339)}
}

func crossplaneAt(version string) *unstructured.Unstructured {
	u := obj("apps/v1", "Deployment", "crossplane", nil)
	u.SetNamespace(xpNamespace)
	u.SetLabels(map[string]string{"app.kubernetes.io/version": version})
	return u
}

// doctorXP runs doctor with Crossplane's namespace set, as the command
// does, so that rules may read its version.
func doctorXP(t *testing.T, objs ...*unstructured.Unstructured) *Report {
	t.Helper()
	rep, err := NewDoctor(&Config{cluster: fakeCluster(t, objs...), XPNamespace: xpNamespace}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// providerP is provider/p at its active revision p-2 (uid u-p2), recording
// what it is given, and the package's owner reference.
func providerP(records ...string) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		withOwners(pkgObj("Provider", "p", "r.example.org/org/p:v2", "p-2"), "u-p"),
		recording(pkgRev("Provider", "p", "p-2", "r.example.org/org/p:v2", 2, "Active", healthy("True", "", time.Hour)), "u-p2", records...),
	}
}

var pOwner = owner("Provider", "p", "u-p", false)

// TestDoctorControlConflictOrphaned: a CRD and an MRD controlled by a
// revision that no longer exists, named with the reference to remove;
// one controlled by the current revision is no conflict.
func TestDoctorControlConflictOrphaned(t *testing.T) {
	objs := append(providerP("a.x.example.org", "b.x.example.org", "mrd:m.x.example.org"),
		defCRD("a.x.example.org", []string{"v1"}, []string{"v1"}, pOwner, owner("ProviderRevision", "p-1", "u-gone", true)),
		defCRD("b.x.example.org", []string{"v1"}, []string{"v1"}, pOwner, owner("ProviderRevision", "p-2", "u-p2", true)),
		defMRD("m.x.example.org", owner("ProviderRevision", "p-1", "u-gone", true), pOwner),
		crossplaneAt("v2.3.4"))
	r := doctorXP(t, objs...)
	fs := want(t, r, findings.RuleControlConflict, 2, findings.Blocking,
		"CRD a.x.example.org is controlled by ProviderRevision p-1 (uid u-gone, ownerReferences[1]), which no longer exists; provider/p install(s) it",
		`Remove it: kubectl patch crd a.x.example.org --type=json -p '[{"op":"test","path":"/metadata/ownerReferences/1/uid","value":"u-gone"},{"op":"remove","path":"/metadata/ownerReferences/1"}]'`)
	if fs[0].Object != "customresourcedefinition/a.x.example.org" || fs[1].Object != "managedresourcedefinition/m.x.example.org" ||
		!strings.Contains(fs[1].Message, "kubectl patch managedresourcedefinition m.x.example.org") || !strings.Contains(fs[1].Message, "/metadata/ownerReferences/0") {
		t.Errorf("findings %+v", fs)
	}

	s := diagnose.Read(context.Background(), fakeCluster(t, objs...))
	s.ReadObjects(context.Background(), fakeCluster(t, objs...), "")
	got := s.OrphanedControllers()
	want := diagnose.OrphanRef{Resource: cluster.ResourceCRDs, Name: "a.x.example.org", UID: "crd-a.x.example.org", ResourceVersion: "42",
		Index: 1, OwnerAPIVersion: "pkg.crossplane.io/v1", OwnerKind: "ProviderRevision", OwnerUID: "u-gone", OwnerName: "p-1"}
	if len(got) != 2 || got[0] != want || got[1].Resource != cluster.ResourceMRDs || got[1].Index != 0 {
		t.Errorf("orphanedControllers %+v, want %+v first", got, want)
	}
}

// TestDoctorControlConflictOrphanOnV242: Crossplane v2.4.2 takes control
// from a gone revision of its own kind: a warning. Installed by a package
// of another kind, it still blocks.
func TestDoctorControlConflictOrphanOnV242(t *testing.T) {
	r := doctorXP(t, append(providerP("a.x.example.org"),
		defCRD("a.x.example.org", []string{"v1"}, []string{"v1"}, pOwner, owner("ProviderRevision", "p-1", "u-gone", true)),
		crossplaneAt("v2.4.2"))...)
	want(t, r, findings.RuleControlConflict, 1, findings.Warning, "Crossplane v2.4.2 takes control from a gone revision of its own kind", "kubectl patch crd a.x.example.org")

	r = doctorXP(t,
		withOwners(pkgObj("Configuration", "c", "r.example.org/org/c:v1", "c-1"), "u-c"),
		recording(pkgRev("Configuration", "c", "c-1", "r.example.org/org/c:v1", 1, "Active"), "u-c1", "a.x.example.org"),
		defCRD("a.x.example.org", []string{"v1"}, []string{"v1"}, owner("ProviderRevision", "p-1", "u-gone", true)),
		crossplaneAt("v2.4.2"))
	want(t, r, findings.RuleControlConflict, 1, findings.Blocking, "configuration/c install(s) it")
}

// TestDoctorControlConflictUnreadRevisions: with the revisions of the
// controller's kind unread, a controller is never judged gone.
func TestDoctorControlConflictUnreadRevisions(t *testing.T) {
	c, dyn := fakeClusterDyn(t, append(providerP("a.x.example.org"),
		defCRD("a.x.example.org", []string{"v1"}, []string{"v1"}, pOwner, owner("ProviderRevision", "p-1", "u-gone", true)))...)
	dyn.PrependReactor("list", "providerrevisions", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "pkg.crossplane.io", Resource: "providerrevisions"}, "", fmt.Errorf("RBAC"))
	})
	r := doctorOn(t, c)
	want(t, r, findings.RuleControlConflict, 0, findings.Blocking)
	if len(r.Unread) != 1 || r.Healthy() {
		t.Errorf("unread %q", r.Unread)
	}
}

// TestDoctorControlConflictAnotherPackage: a CRD another package's
// revision controls, which an active revision records too; an upgrade's
// hand-over within one package is none.
func TestDoctorControlConflictAnotherPackage(t *testing.T) {
	r := doctor(t,
		withOwners(pkgObj("Provider", "a", "r.example.org/org/a:v1", "a-1"), "u-a"),
		recording(pkgRev("Provider", "a", "a-1", "r.example.org/org/a:v1", 1, "Active"), "u-a1", "w.x.example.org"),
		withOwners(pkgObj("Provider", "b", "r.example.org/org/b:v1", "b-1"), "u-b"),
		recording(pkgRev("Provider", "b", "b-1", "r.example.org/org/b:v1", 1, "Active"), "u-b1", "w.x.example.org"),
		defCRD("w.x.example.org", []string{"v1"}, []string{"v1"}, owner("Provider", "b", "u-b", false), owner("ProviderRevision", "b-1", "u-b1", true)))
	f := want(t, r, findings.RuleControlConflict, 1, findings.Blocking,
		"CRD w.x.example.org is controlled by revision b-1 of provider/b, and provider/a (revision a-1) install(s) it too",
		"w.x.example.org is already controlled by ProviderRevision b-1", "uninstall one of them")
	if f[0].Object != "customresourcedefinition/w.x.example.org" {
		t.Errorf("object %q", f[0].Object)
	}

	// p-1, inactive, still controls what p-2 now records: Crossplane hands
	// it over.
	r = doctor(t, append(providerP("a.x.example.org"),
		recording(pkgRev("Provider", "p", "p-1", "r.example.org/org/p:v1", 1, "Inactive"), "u-p1", "a.x.example.org"),
		defCRD("a.x.example.org", []string{"v1"}, []string{"v1"}, pOwner, owner("ProviderRevision", "p-1", "u-p1", true)))...)
	want(t, r, findings.RuleControlConflict, 0, findings.Blocking)
}

// TestDoctorControlConflictCondition: a revision that says it cannot take
// control is surfaced with who holds the object, once the hand-over
// moment has passed, and not twice for an object already named.
func TestDoctorControlConflictCondition(t *testing.T) {
	const msg = "cannot establish control of object: xcs.x.example.org is already controlled by ConfigurationRevision other-1 (UID u-o1)"
	other := []*unstructured.Unstructured{
		withOwners(pkgObj("Configuration", "other", "r.example.org/org/other:v1", "other-1"), "u-o"),
		recording(pkgRev("Configuration", "other", "other-1", "r.example.org/org/other:v1", 1, "Active"), "u-o1"),
		withOwners(pkgObj("Configuration", "c", "r.example.org/org/c:v1", "c-1"), "u-c"),
	}
	r := doctor(t, append(other, recording(pkgRev("Configuration", "c", "c-1", "r.example.org/org/c:v1", 1, "Active", healthy("False", msg, time.Hour)), "u-c1"))...)
	f := want(t, r, findings.RuleControlConflict, 1, findings.Blocking, "configuration/c's revision c-1 cannot take control of what its package installs: "+msg,
		"other-1 is a revision of configuration/other: two packages cannot both install xcs.x.example.org")
	if f[0].Object != "configuration/c" {
		t.Errorf("object %q", f[0].Object)
	}
	r = doctor(t, append(other, recording(pkgRev("Configuration", "c", "c-1", "r.example.org/org/c:v1", 1, "Active", healthy("False", msg, time.Second)), "u-c1"))...)
	want(t, r, findings.RuleControlConflict, 0, findings.Blocking)

	// The CRD's own references already say it: one finding.
	gone := "cannot establish control of object: a.x.example.org is already controlled by ProviderRevision p-1 (UID u-gone)"
	r = doctor(t,
		withOwners(pkgObj("Provider", "p", "r.example.org/org/p:v2", "p-2"), "u-p"),
		recording(pkgRev("Provider", "p", "p-2", "r.example.org/org/p:v2", 2, "Active", healthy("False", gone, time.Hour)), "u-p2"),
		defCRD("a.x.example.org", []string{"v1"}, []string{"v1"}, pOwner, owner("ProviderRevision", "p-1", "u-gone", true)))
	want(t, r, findings.RuleControlConflict, 1, findings.Blocking, "which no longer exists")
}

// TestDoctorStoredVersionUndefined: a CRD storing at a version its spec no
// longer defines, with the status patch that drops it; a revision the API
// server refuses for that reason; a CRD whose stored versions are defined
// is neither.
func TestDoctorStoredVersionUndefined(t *testing.T) {
	refusal := `cannot establish control of object: CustomResourceDefinition.apiextensions.k8s.io "routes.x.example.org" is invalid: status.storedVersions[0]: Invalid value: "v1alpha4": must appear in spec.versions`
	r := doctor(t, widgetsCRD(),
		defCRD("old.x.example.org", []string{"v1beta1"}, []string{"v1alpha1", "v1beta1"}),
		withOwners(pkgObj("Provider", "q", "r.example.org/org/q:v2", "q-2"), "u-q"),
		recording(pkgRev("Provider", "q", "q-2", "r.example.org/org/q:v2", 2, "Active", healthy("False", refusal, time.Hour)), "u-q2"))
	fs := want(t, r, findings.RuleStoredUndefined, 2, findings.Blocking,
		"CRD old.x.example.org stores objects at v1alpha1 (status.storedVersions), which its spec.versions no longer defines",
		`kubectl patch crd old.x.example.org --subresource=status --type=json -p '[{"op":"replace","path":"/status/storedVersions","value":["v1beta1"]}]'`)
	if fs[0].Object != "customresourcedefinition/old.x.example.org" || fs[1].Object != "provider/q" ||
		!strings.Contains(fs[1].Message, "provider/q's revision q-2 cannot update CRD routes.x.example.org") || !strings.Contains(fs[1].Message, "kubectl xpkg rollback provider/q") {
		t.Errorf("findings %+v", fs)
	}
	want(t, doctor(t, widgetsCRD()), findings.RuleStoredUndefined, 0, findings.Blocking)
}

// TestDoctorObjectsMissing: a healthy active revision that records one of
// the three MRDs naming it as owner (crossplane#7712's truncated record).
func TestDoctorObjectsMissing(t *testing.T) {
	p2 := owner("ProviderRevision", "p-2", "u-p2", true)
	r := doctor(t, append(providerP("mrd:m1.x.example.org"),
		defMRD("m1.x.example.org", pOwner, p2), defMRD("m2.x.example.org", pOwner, p2), defMRD("m3.x.example.org", pOwner, p2))...)
	f := want(t, r, findings.RuleObjectsMissing, 1, findings.Blocking,
		"provider/p's active revision p-2 reports itself healthy and records 1 CRDs and MRDs in status.objectRefs, but lacks 2 that name it among their owners: MRD m2.x.example.org, MRD m3.x.example.org",
		"kubectl -n crossplane-system rollout restart deployment crossplane", "kubectl get providerrevision p-2")
	if f[0].Object != "provider/p" || *f[0].Count != 2 {
		t.Errorf("object %q, count %d", f[0].Object, *f[0].Count)
	}
}

// TestDoctorObjectsMissingNotOnUpgrade: a new version that drops a CRD is
// no missing object (the CRD names the old revision and the package, not
// the new revision), and an unhealthy revision's record is not judged.
func TestDoctorObjectsMissingNotOnUpgrade(t *testing.T) {
	objs := append(providerP("a.x.example.org"),
		recording(pkgRev("Provider", "p", "p-1", "r.example.org/org/p:v1", 1, "Inactive"), "u-p1", "a.x.example.org", "dropped.x.example.org"),
		defCRD("a.x.example.org", []string{"v1"}, []string{"v1"}, pOwner, owner("ProviderRevision", "p-1", "u-p1", false), owner("ProviderRevision", "p-2", "u-p2", true)),
		defCRD("dropped.x.example.org", []string{"v1"}, []string{"v1"}, pOwner, owner("ProviderRevision", "p-1", "u-p1", false)))
	r := doctor(t, objs...)
	want(t, r, findings.RuleObjectsMissing, 0, findings.Blocking)
	if !r.Healthy() {
		t.Errorf("an upgrade that drops a CRD is not healthy: %+v %q", r.Findings, r.Unread)
	}

	r = doctor(t,
		withOwners(pkgObj("Provider", "p", "r.example.org/org/p:v2", "p-2"), "u-p"),
		recording(pkgRev("Provider", "p", "p-2", "r.example.org/org/p:v2", 2, "Active", healthy("False", "cannot establish control of object: boom", time.Hour)), "u-p2"),
		defCRD("a.x.example.org", []string{"v1"}, []string{"v1"}, pOwner, owner("ProviderRevision", "p-2", "u-p2", true)))
	want(t, r, findings.RuleObjectsMissing, 0, findings.Blocking)
}

// TestDoctorObjectsMissingSameDigest: an inactive revision made from the
// same digest recorded more definitions than the active one; one made from
// another image, or from the same tag, proves nothing.
func TestDoctorObjectsMissingSameDigest(t *testing.T) {
	const img = "r.example.org/org/p@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	rev := func(name, image, state string, n int64, defs ...string) *unstructured.Unstructured {
		var conds []map[string]any
		if state == "Active" {
			conds = append(conds, healthy("True", "", time.Hour))
		}
		return recording(pkgRev("Provider", "p", name, image, n, state, conds...), "u-"+name, defs...)
	}
	pkg := withOwners(pkgObj("Provider", "p", img, "p-2"), "u-p")
	r := doctor(t, pkg, rev("p-1", img, "Inactive", 1, "a.x.example.org", "b.x.example.org", "c.x.example.org"), rev("p-2", img, "Active", 2, "a.x.example.org"))
	want(t, r, findings.RuleObjectsMissing, 1, findings.Blocking, "lacks 2 that its inactive revision p-1, made from the same image "+img+", recorded: b.x.example.org, c.x.example.org")

	const tag = "r.example.org/org/p:v1"
	r = doctor(t, pkg, rev("p-1", tag, "Inactive", 1, "a.x.example.org", "b.x.example.org"), rev("p-2", tag, "Active", 2, "a.x.example.org"))
	want(t, r, findings.RuleObjectsMissing, 0, findings.Blocking)
}

// drc is a DeploymentRuntimeConfig pinning sa (and naming deploySA in its
// Deployment, when set).
func drc(name, sa, deploySA string) *unstructured.Unstructured {
	spec := map[string]any{"serviceAccountTemplate": map[string]any{"metadata": map[string]any{"name": sa}}}
	if deploySA != "" {
		spec["deploymentTemplate"] = map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"serviceAccountName": deploySA}}}}
	}
	return obj("pkg.crossplane.io/v1beta1", "DeploymentRuntimeConfig", name, map[string]any{"spec": spec})
}

func usingConfig(u *unstructured.Unstructured, config string) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(u.Object, config, "spec", "runtimeConfigRef", "name")
	return u
}

// TestDoctorPinnedServiceAccount: a pinned name two packages share is a
// warning (one package leaves the default config unset); one package's is
// nothing, unless Crossplane is v2.4.0 or v2.4.1; a Deployment that names
// another account gets none made.
func TestDoctorPinnedServiceAccount(t *testing.T) {
	objs := []*unstructured.Unstructured{
		drc("default", "shared-sa", ""), drc("solo", "solo-sa", ""), drc("external", "ext-sa", "my-own-sa"),
		pkgObj("Provider", "a", "r.example.org/org/a:v1", "a-1"),
		usingConfig(pkgObj("Function", "f", "r.example.org/org/f:v1", "f-1"), "default"),
		usingConfig(pkgObj("Provider", "s", "r.example.org/org/s:v1", "s-1"), "solo"),
		usingConfig(pkgObj("Provider", "e", "r.example.org/org/e:v1", "e-1"), "external"),
		usingConfig(pkgObj("Provider", "e2", "r.example.org/org/e2:v1", "e2-1"), "external"),
	}
	r := doctorXP(t, objs...)
	f := want(t, r, findings.RulePinnedServiceAccount, 1, findings.Warning,
		"DeploymentRuntimeConfig default names the runtime's ServiceAccount shared-sa (spec.serviceAccountTemplate.metadata.name)",
		"2 packages use it (provider/a, function/f)", "crossplane#7769", "spec.deploymentTemplate.spec.template.spec.serviceAccountName")
	if f[0].Object != "deploymentruntimeconfig/default" || *f[0].Count != 2 {
		t.Errorf("object %q, count %d", f[0].Object, *f[0].Count)
	}

	r = doctorXP(t, append(objs, crossplaneAt("v2.4.1"))...)
	fs := want(t, r, findings.RulePinnedServiceAccount, 2, findings.Blocking, "Crossplane v2.4.1 adds a new revision's controller reference", "upgrade Crossplane to v2.4.2 or later")
	if fs[1].Object != "deploymentruntimeconfig/solo" || fs[1].Severity != findings.Blocking || !strings.Contains(fs[1].Message, "the runtime of provider/s stops at the next revision") {
		t.Errorf("findings %+v", fs)
	}
	want(t, doctorXP(t, append(objs, crossplaneAt("2.4.2"))...), findings.RulePinnedServiceAccount, 1, findings.Warning)
}

// TestDoctorDefinitionsUnread: CRDs RBAC keeps from doctor are one Unread
// line and no finding about them; MRDs and DeploymentRuntimeConfigs the
// cluster does not serve are nothing to read.
func TestDoctorDefinitionsUnread(t *testing.T) {
	c, dyn := fakeClusterDyn(t, append(providerP("a.x.example.org"),
		defCRD("a.x.example.org", []string{"v1"}, []string{"v1alpha1", "v1"}, pOwner, owner("ProviderRevision", "p-1", "u-gone", true)))...)
	dyn.PrependReactor("list", "customresourcedefinitions", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, "", fmt.Errorf("RBAC"))
	})
	for _, res := range []string{"managedresourcedefinitions", "deploymentruntimeconfigs"} {
		dyn.PrependReactor("list", res, func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: res}, "")
		})
	}
	r := doctorOn(t, c)
	if len(r.Unread) != 1 || !strings.Contains(r.Unread[0], "customresourcedefinitions") || r.Healthy() {
		t.Errorf("unread %q, want one line about CRDs", r.Unread)
	}
	for _, rule := range []string{findings.RuleControlConflict, findings.RuleStoredUndefined, findings.RuleObjectsMissing} {
		want(t, r, rule, 0, findings.Blocking)
	}
}
