package action

import (
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

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// deleting marks u as deleted ago, held by finalizers.
func deleting(u *unstructured.Unstructured, ago time.Duration, finalizers ...string) *unstructured.Unstructured {
	u.SetDeletionTimestamp(&metav1.Time{Time: time.Now().Add(-ago)})
	u.SetFinalizers(finalizers)
	return u
}

// widget is a managed resource of the fake's Widget kind, carrying the
// managed-resource finalizer.
func widget(name string) *unstructured.Unstructured {
	u := obj("stored.example.org/v1beta1", "Widget", name, nil)
	u.SetFinalizers([]string{diagnose.ManagedFinalizer})
	return u
}

// widgetsOwnedBy is the CRD of Widgets, owned as Crossplane v2 owns a
// provider's CRD: by the MRD of its name and, as controller, by the
// revision that established it.
func widgetsOwnedBy(revision, uid string) *unstructured.Unstructured {
	ctl := true
	return withOwners(widgetsCRD(), "crd-widgets",
		metav1.OwnerReference{APIVersion: "apiextensions.crossplane.io/v1alpha1", Kind: "ManagedResourceDefinition", Name: "widgets.stored.example.org", UID: "mrd-gone"},
		metav1.OwnerReference{APIVersion: "pkg.crossplane.io/v1", Kind: "ProviderRevision", Name: revision, UID: types.UID(uid), Controller: &ctl})
}

// composingWidgets is a pipeline Composition whose
// function-patch-and-transform input composes a Widget.
func composingWidgets(name, kind string) *unstructured.Unstructured {
	return obj("apiextensions.crossplane.io/v1", "Composition", name, map[string]any{"spec": map[string]any{
		"compositeTypeRef": map[string]any{"apiVersion": "example.org/v1", "kind": "XWidget"},
		"mode":             "Pipeline",
		"pipeline": []any{map[string]any{"step": "pt", "functionRef": map[string]any{"name": "function-patch-and-transform"},
			"input": map[string]any{"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": []any{
				map[string]any{"name": "w", "base": map[string]any{"apiVersion": "stored.example.org/v1beta1", "kind": kind}}}}}},
	}})
}

// TestDoctorDefinitionTerminatingProviderGone is crossplane#6268: the
// provider deleted with its managed resources still there; the garbage
// collector deleted the revision's CRD, which four Widgets hold. doctor
// names the CRD, how long, the objects and their finalizer, the provider
// as not installed, the Composition it breaks and the way out, reading
// the Widgets and the Compositions with one list each.
func TestDoctorDefinitionTerminatingProviderGone(t *testing.T) {
	const rev = "provider-widgets-0123456789ab"
	objs := []*unstructured.Unstructured{
		deleting(widgetsOwnedBy(rev, "u-gone"), time.Hour, "customresourcecleanup.apiextensions.k8s.io"),
		composingWidgets("xwidgets", "Widget"), composingWidgets("xgadgets", "Gadget"),
	}
	for i := 1; i <= 4; i++ {
		objs = append(objs, deleting(widget(fmt.Sprintf("w-%d", i)), time.Hour, diagnose.ManagedFinalizer))
	}
	c, dyn := fakeClusterDyn(t, objs...)
	r := doctorOn(t, c)
	fs := want(t, r, findings.RuleDefinitionTerminating, 1, findings.Blocking,
		"CRD widgets.stored.example.org has been deleting for 60m and cannot finish while objects of its kind exist: 4 Widget object(s) remain and hold it: "+
			"w-1 (finalizers: finalizer.managedresource.crossplane.io), w-2 (finalizers: finalizer.managedresource.crossplane.io), w-3 (finalizers: finalizer.managedresource.crossplane.io), 1 more.",
		"Only the controller of provider/provider-widgets removes finalizer.managedresource.crossplane.io, and provider/provider-widgets is not installed: the revision that served the kind, "+rev+", is gone.",
		"Until it is gone the API server creates no Widget.stored.example.org, so the Compositions that compose it cannot: xwidgets.",
		"Install provider/provider-widgets again, then kubectl xpkg doctor --fix saves every object, removes its finalizer without deleting what it manages",
		"or let the deletion finish by orphaning what the objects manage: kubectl xpkg doctor --fix --orphan-external-resources lists it")
	if fs[0].Object != "customresourcedefinition/widgets.stored.example.org" || *fs[0].Count != 4 || strings.Contains(fs[0].Message, "xgadgets") {
		t.Errorf("finding %+v", fs[0])
	}
	want(t, r, findings.RuleManagedDeletionStuck, 0, findings.Blocking)
	// The gone revision's reference goes with the CRD: removing it ends nothing.
	want(t, r, findings.RuleControlConflict, 0, findings.Blocking)
	if got := requests(dyn.Actions()); got["list widgets"] != 1 || got["list compositions"] != 1 {
		t.Errorf("requests %v, want one list of widgets and one of compositions", got)
	}
}

// TestDoctorDefinitionTerminatingRevisionDropped: the garbage collector
// may drop the gone revision's reference while the MRD still stands, and
// then delete the MRD: only the MRD's name is left, and the provider is
// described by the kind.
func TestDoctorDefinitionTerminatingRevisionDropped(t *testing.T) {
	crd := deleting(widgetsOwnedBy("provider-widgets-0123456789ab", "u-gone"), time.Hour, "customresourcecleanup.apiextensions.k8s.io")
	crd.SetOwnerReferences(crd.GetOwnerReferences()[:1])
	r := doctor(t, crd, deleting(widget("w-1"), time.Hour, diagnose.ManagedFinalizer))
	want(t, r, findings.RuleDefinitionTerminating, 1, findings.Blocking,
		"The MRD it was made from is gone and no revision owns it any more: the provider that served Widget.stored.example.org is not installed, so nothing removes finalizer.managedresource.crossplane.io.",
		"Install the provider that serves Widget.stored.example.org again, then kubectl xpkg doctor --fix saves every object")
}

// TestDoctorDefinitionTerminatingProviderRuns: while the controller of
// the provider that serves the kind runs, it removes the finalizers
// itself: a warning, for two minutes. Once its runtime is unhealthy, or
// the deletion lasts, blocking. An MRD
// deleted with its CRD is named once, in the CRD's finding.
func TestDoctorDefinitionTerminatingProviderRuns(t *testing.T) {
	objs := func(runtime map[string]any, ago ...time.Duration) []*unstructured.Unstructured {
		rv := recording(pkgRev("Provider", "p", "p-2", "r.example.org/org/p:v2", 2, "Active", runtime), "u-p-2", "widgets.stored.example.org")
		return []*unstructured.Unstructured{
			withOwners(pkgObj("Provider", "p", "r.example.org/org/p:v2", "p-2"), "u-p"), rv,
			deleting(widgetsOwnedBy("p-2", "u-p-2"), append(ago, time.Hour)[0], "customresourcecleanup.apiextensions.k8s.io"),
			deleting(defMRD("widgets.stored.example.org", owner("ProviderRevision", "p-2", "u-p-2", true)), time.Hour, "foregroundDeletion"),
			deleting(widget("w-1"), time.Hour, diagnose.ManagedFinalizer),
		}
	}
	r := doctor(t, objs(map[string]any{"type": "RuntimeHealthy", "status": "True"}, 30*time.Second)...)
	want(t, r, findings.RuleDefinitionTerminating, 1, findings.Warning,
		"The controller of provider/p (active revision p-2) removes finalizer.managedresource.crossplane.io as it deletes what each object manages",
		"the revisions of provider/p own it and lose it when it goes", "If its controller cannot delete what they manage, kubectl xpkg doctor --fix saves every object")

	// Past two minutes, the running controller has not finished it: stuck.
	r = doctor(t, objs(map[string]any{"type": "RuntimeHealthy", "status": "True"})...)
	want(t, r, findings.RuleDefinitionTerminating, 1, findings.Blocking, "If its controller cannot delete what they manage, kubectl xpkg doctor --fix saves every object")

	r = doctor(t, objs(map[string]any{"type": "RuntimeHealthy", "status": "False", "message": "Deployment has no minimum availability"})...)
	want(t, r, findings.RuleDefinitionTerminating, 1, findings.Blocking,
		"Only the controller of provider/p removes finalizer.managedresource.crossplane.io, and its active revision p-2 does not run (RuntimeHealthy=False: Deployment has no minimum availability).",
		"kubectl xpkg doctor --fix saves every object", "or get provider/p's runtime running again: its controller then removes the finalizers, deleting what each object manages")
}

// TestDoctorDefinitionTerminatingNothingHolds: a CRD being deleted that
// no object holds finishes on its own: nothing to find, and no
// Compositions read.
func TestDoctorDefinitionTerminatingNothingHolds(t *testing.T) {
	c, dyn := fakeClusterDyn(t, deleting(widgetsOwnedBy("provider-widgets-0123456789ab", "u-gone"), time.Hour, "customresourcecleanup.apiextensions.k8s.io"))
	r := doctorOn(t, c)
	if !r.Healthy() {
		t.Errorf("report %+v", r.Report)
	}
	if got := requests(dyn.Actions()); got["list widgets"] != 1 || got["list compositions"] != 0 {
		t.Errorf("requests %v, want one list of widgets and none of compositions", got)
	}
}

// TestDoctorDefinitionTerminatingUnread: a kind that cannot be read is an
// Unread line, and no finding is made of it.
func TestDoctorDefinitionTerminatingUnread(t *testing.T) {
	c, dyn := fakeClusterDyn(t, deleting(widgetsOwnedBy("provider-widgets-0123456789ab", "u-gone"), time.Hour, "customresourcecleanup.apiextensions.k8s.io"),
		deleting(widget("w-1"), time.Hour, diagnose.ManagedFinalizer))
	dyn.PrependReactor("list", "widgets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "stored.example.org", Resource: "widgets"}, "", fmt.Errorf("RBAC"))
	})
	r := doctorOn(t, c)
	want(t, r, findings.RuleDefinitionTerminating, 0, findings.Blocking)
	if len(r.Unread) != 1 || !strings.Contains(r.Unread[0], "list the objects of CRD widgets.stored.example.org") || r.Healthy() {
		t.Errorf("unread %q", r.Unread)
	}
}

// TestDoctorManagedDeletionStuck: a provider under Manual activation
// whose revision is inactive serves Widgets, one of which is being
// deleted: nothing runs the controller that removes its finalizer. A
// provider whose revision is active costs no read of its kinds.
func TestDoctorManagedDeletionStuck(t *testing.T) {
	inactive := []*unstructured.Unstructured{
		withOwners(withSpec(pkgObj("Provider", "p", "r.example.org/org/p:v2", "p-2"), "revisionActivationPolicy", "Manual"), "u-p"),
		pkgRev("Provider", "p", "p-2", "r.example.org/org/p:v2", 2, "Inactive"),
		widgetsOwnedBy("p-2", "u-p-2"),
		deleting(widget("w-1"), 2*time.Hour, diagnose.ManagedFinalizer), widget("w-2"),
	}
	inactive[1].SetUID("u-p-2")
	r := doctor(t, inactive...)
	fs := want(t, r, findings.RuleManagedDeletionStuck, 1, findings.Blocking,
		"1 Widget object(s) (CRD widgets.stored.example.org) are being deleted and wait for finalizer.managedresource.crossplane.io, which only the controller of provider/p removes, and provider/p has no active revision: w-1 (deleting for 120m).",
		"Activate a revision of provider/p (kubectl xpkg upgrade provider/p --activate)")
	if *fs[0].Count != 1 {
		t.Errorf("count %d", *fs[0].Count)
	}
	want(t, r, findings.RuleDefinitionTerminating, 0, findings.Blocking)

	active := append(providerP("widgets.stored.example.org"), withOwners(widgetsCRD(), "crd-widgets", owner("ProviderRevision", "p-2", "u-p2", true)),
		deleting(widget("w-1"), 2*time.Hour, diagnose.ManagedFinalizer))
	c, dyn := fakeClusterDyn(t, active...)
	want(t, doctorOn(t, c), findings.RuleManagedDeletionStuck, 0, findings.Blocking)
	if got := requests(dyn.Actions()); got["list widgets"] != 0 {
		t.Errorf("requests %v: the kinds of a running provider were read", got)
	}
}

// TestDoctorDeletionStuck: a revision held by the package manager's
// finalizer past the grace, and a package held by foregroundDeletion;
// a deletion just begun is not judged.
func TestDoctorDeletionStuck(t *testing.T) {
	r := doctorXP(t,
		deleting(pkgObj("Provider", "p", "r.example.org/org/p:v2", "p-2"), 10*time.Minute, "foregroundDeletion"),
		deleting(pkgRev("Provider", "p", "p-2", "r.example.org/org/p:v2", 2, "Active"), 10*time.Minute, "revision.pkg.crossplane.io"),
		deleting(pkgObj("Function", "f", "r.example.org/org/f:v1", "f-1"), 10*time.Second, "foregroundDeletion"))
	fs := want(t, r, findings.RuleDeletionStuck, 2, findings.Blocking,
		"package provider/p has been deleting for 10m, held by foregroundDeletion, which the garbage collector removes once every object it owns (with blockOwnerDeletion) is gone",
		"Until it is gone nothing of its name can be made again (kubectl get provider/p -o yaml shows it)")
	if fs[1].Object != "provider/p" || !strings.Contains(fs[1].Message, "revision p-2 of provider/p has been deleting for 10m, held by revision.pkg.crossplane.io, which Crossplane's package manager removes once it has taken the revision out of the Lock: check that Crossplane runs (kubectl -n crossplane-system get deployment crossplane)") {
		t.Errorf("findings %+v", fs)
	}
}

// TestDoctorProviderConfigHeldByUsages is crossplane#3271: a
// ProviderConfig deleted an hour ago, held by in-use.crossplane.io and two
// usages: one of a Widget that exists, one of a Widget that is gone.
// doctor names both, the stale one to delete, reading the ProviderConfigs,
// the usages and the Widgets with one list each.
func TestDoctorProviderConfigHeldByUsages(t *testing.T) {
	crd := func(kind, plural string) *unstructured.Unstructured {
		return obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", plural+".stored.example.org", map[string]any{"spec": map[string]any{
			"group": "stored.example.org", "scope": "Cluster", "names": map[string]any{"kind": kind, "plural": plural},
			"versions": []any{map[string]any{"name": "v1beta1", "served": true, "storage": true}}}})
	}
	use := func(name, widget string) *unstructured.Unstructured {
		u := obj("stored.example.org/v1beta1", "ProviderConfigUsage", name, map[string]any{
			"providerConfigRef": map[string]any{"name": "default"},
			"resourceRef":       map[string]any{"apiVersion": "stored.example.org/v1beta1", "kind": "Widget", "name": widget}})
		u.SetLabels(map[string]string{"crossplane.io/provider-config": "default"})
		return u
	}
	live := widget("w-live")
	live.SetUID("uid-live")
	objs := []*unstructured.Unstructured{crd("ProviderConfig", "providerconfigs"), crd("ProviderConfigUsage", "providerconfigusages"), widgetsCRD(),
		deleting(obj("stored.example.org/v1beta1", "ProviderConfig", "default", nil), time.Hour, diagnose.InUseFinalizer),
		use("uid-live", "w-live"), use("uid-gone", "w-gone"), live}
	c, dyn := fakeClusterDyn(t, objs...)
	r := doctorOn(t, c)
	want(t, r, findings.RuleProviderConfigStuck, 1, findings.Blocking,
		"ProviderConfig default has been deleting for 60m, held by in-use.crossplane.io, which its provider's controller removes once no ProviderConfigUsage names it: 2 usage(s) remain: ",
		"uid-gone (Widget w-gone, gone)", "uid-live (Widget w-live, exists)",
		"1 tell of resources that are gone: kubectl delete providerconfigusages.stored.example.org uid-gone removes them")
	if got := requests(dyn.Actions()); got["list providerconfigs"] != 1 || got["list providerconfigusages"] != 1 || got["list widgets"] != 1 {
		t.Errorf("requests %v, want one list of each kind", got)
	}
}
