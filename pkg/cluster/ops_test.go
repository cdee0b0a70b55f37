package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// TestSetPackageNeverTakesACancelledPatchForSuccess: a PATCH that ends
// with the context (an interrupt, --request-timeout) is an error, also
// after conflicts; client-go's retry.RetryOnConflict returned nil for it,
// and the nil package read after it panicked.
func TestSetPackageNeverTakesACancelledPatchForSuccess(t *testing.T) {
	for name, errs := range map[string][]error{
		"cancelled":                {context.Canceled},
		"timed out":                {context.DeadlineExceeded},
		"cancelled after conflict": {apierrors.NewConflict(schema.GroupResource{Resource: "providers"}, "p", errors.New("changed")), context.Canceled},
	} {
		t.Run(name, func(t *testing.T) {
			prov := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
				"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"package": "r.example.org/p:v1"}}}
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}: "ProviderList"}, prov)
			patches := 0
			dyn.PrependReactor("patch", "providers", func(clienttesting.Action) (bool, runtime.Object, error) {
				err := errs[min(patches, len(errs)-1)]
				patches++
				return true, nil, err
			})
			c := NewCluster(dyn, StaticDialect(), "")
			p, err := c.Get(context.Background(), "Provider", "p")
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.SetPackage(context.Background(), p, "r.example.org/p:v2", false)
			if err == nil || got != nil {
				t.Fatalf("SetPackage returned %v, %v; want an error", got, err)
			}
			if last := errs[len(errs)-1]; !errors.Is(err, last) {
				t.Errorf("error %v, want %v", err, last)
			}
		})
	}
}

func TestWaitTimeoutSaysWholeSeconds(t *testing.T) {
	e := &WaitTimeoutError{What: "provider/p", After: 29999999950 * time.Nanosecond, Pending: []string{"Healthy"}}
	if got, want := e.Error(), "timed out after 30s waiting for provider/p: still pending: Healthy"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := Round(1500 * time.Microsecond); got != 2*time.Millisecond {
		t.Errorf("Round(1.5ms) = %s", got)
	}
}

// TestSetPackageBesideAnotherWriter: whatever another writer changes
// between the plugin's read and its PATCH, the PATCH lands only on the
// object and reference it read. Labels rewritten on every PATCH (a
// controller in a hot loop) neither conflict nor get lost; a reference
// changed, or the package deleted and made again, stops it unchanged.
func TestSetPackageBesideAnotherWriter(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}
	for name, c := range map[string]struct {
		edit    func(u *unstructured.Unstructured)
		changed string // the ChangedError's words; "" for success
	}{
		"labels": {edit: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"writer": "x"}) }},
		"reference": {edit: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "r.example.org/p:v3", "spec", "package")
		}, changed: "provider/p now points at r.example.org/p:v3, not at r.example.org/p:v1"},
		"made again": {edit: func(u *unstructured.Unstructured) { u.SetUID("uid-2") },
			changed: "provider/p was deleted and made again since the change was planned"},
		"spec": {edit: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "Manual", "spec", "revisionActivationPolicy")
			u.SetGeneration(2) // as the API server does
		}, changed: "provider/p's spec changed since the change was planned (generation 1, now 2)"},
	} {
		t.Run(name, func(t *testing.T) {
			prov := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
				"metadata": map[string]any{"name": "p", "uid": "uid-1", "generation": int64(1)}, "spec": map[string]any{"package": "r.example.org/p:v1"}}}
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{gvr: "ProviderList"}, prov)
			cl := NewCluster(dyn, StaticDialect(), "")
			p, err := cl.Get(context.Background(), "Provider", "p")
			if err != nil {
				t.Fatal(err)
			}
			patches := 0
			// The other writer gets in before every PATCH.
			dyn.PrependReactor("patch", "providers", func(a clienttesting.Action) (bool, runtime.Object, error) {
				patches++
				if a.(clienttesting.PatchAction).GetPatchType() != types.JSONPatchType {
					t.Errorf("patch type %s", a.(clienttesting.PatchAction).GetPatchType())
				}
				o, err := dyn.Tracker().Get(gvr, "", "p")
				if err != nil {
					return true, nil, err
				}
				u := o.(*unstructured.Unstructured).DeepCopy()
				c.edit(u)
				if err := dyn.Tracker().Update(gvr, u, ""); err != nil || c.changed == "" {
					return false, nil, err
				}
				// A test of the JSON patch fails: kube-apiserver answers
				// 422 Invalid with no details, not the patch library's
				// words the fake would give.
				return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "pkg.crossplane.io", Kind: "Provider"}, "p", nil)
			})
			got, err := cl.SetPackage(context.Background(), p, "r.example.org/p:v2", false)
			o, _ := dyn.Tracker().Get(gvr, "", "p")
			now, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "spec", "package")
			if c.changed == "" {
				if err != nil || got.Source != "r.example.org/p:v2" || now != got.Source || patches != 1 {
					t.Fatalf("SetPackage: %v, %v after %d patches; the object points at %s", got, err, patches, now)
				}
				if l := o.(*unstructured.Unstructured).GetLabels(); l["writer"] != "x" {
					t.Errorf("the other writer's labels are gone: %v", l)
				}
				return
			}
			var ce *ChangedError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.changed) {
				t.Fatalf("SetPackage: %v, want a ChangedError saying %q", err, c.changed)
			}
			if now == "r.example.org/p:v2" {
				t.Error("the package was changed all the same")
			}
		})
	}
}

// TestSetPackageKeepsTheRecordOfADependency: changing the reference of a
// package the package manager installed (its field manager alone set it)
// makes this plugin its reference's field manager; the annotation keeps
// the record, so that uninstall --with-dependencies still removes it.
func TestSetPackageKeepsTheRecordOfADependency(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}
	for name, manager := range map[string]string{"dependency": installed.PackageManagerFieldManager, "explicit": "kubectl"} {
		t.Run(name, func(t *testing.T) {
			prov := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
				"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"package": "r.example.org/p:v1"}}}
			prov.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:package":{}}}`)}}})
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ProviderList"}, prov)
			cl := NewCluster(dyn, StaticDialect(), "")
			p, err := cl.Get(context.Background(), "Provider", "p")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cl.SetPackage(context.Background(), p, "r.example.org/p:v2", false); err != nil {
				t.Fatal(err)
			}
			o, _ := dyn.Tracker().Get(gvr, "", "p")
			u := o.(*unstructured.Unstructured)
			// What the API server does: the reference is now this plugin's.
			u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:package":{}}}`)}}})
			want := map[string]installed.Origin{"dependency": installed.OriginDependency, "explicit": installed.OriginExplicit}[name]
			if got, _ := installed.PackageOrigin(u); got != want {
				t.Errorf("after the change: origin %v, want %v (annotations %v)", got, want, u.GetAnnotations())
			}
		})
	}
}

// TestDeleteExactlyBesideThePackageManager: the package manager writing
// the package's status between the plan's read and the DELETE is no
// change of what was planned: the delete goes through. A spec or reference
// changed, or the package made again, is: nothing is deleted.
func TestDeleteExactlyBesideThePackageManager(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}
	for name, c := range map[string]struct {
		edit    func(u *unstructured.Unstructured)
		deleted bool
	}{
		"status": {func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"currentRevision": "p-2"} }, true},
		"spec":   {func(u *unstructured.Unstructured) { u.SetGeneration(2) }, false},
		"reference": {func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "r.example.org/p:v3", "spec", "package")
		}, false},
		"made again": {func(u *unstructured.Unstructured) { u.SetUID("uid-2") }, false},
	} {
		t.Run(name, func(t *testing.T) {
			prov := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
				"metadata": map[string]any{"name": "p", "uid": "uid-1", "resourceVersion": "1", "generation": int64(1)},
				"spec":     map[string]any{"package": "r.example.org/p:v1"}}}
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ProviderList"}, prov)
			cl := NewCluster(dyn, StaticDialect(), "")
			p, err := cl.Get(context.Background(), "Provider", "p")
			if err != nil {
				t.Fatal(err)
			}
			deletes := 0
			// The API server's preconditions; the other writer gets in
			// before the first DELETE.
			dyn.PrependReactor("delete", "providers", func(a clienttesting.Action) (bool, runtime.Object, error) {
				deletes++
				o, err := dyn.Tracker().Get(gvr, "", "p")
				if err != nil {
					return true, nil, err
				}
				u := o.(*unstructured.Unstructured).DeepCopy()
				if deletes == 1 {
					c.edit(u)
					u.SetResourceVersion("2")
					if err := dyn.Tracker().Update(gvr, u, ""); err != nil {
						return true, nil, err
					}
				}
				pre := a.(clienttesting.DeleteActionImpl).DeleteOptions.Preconditions
				if pre == nil || pre.UID == nil || *pre.UID != u.GetUID() || pre.ResourceVersion == nil || *pre.ResourceVersion != u.GetResourceVersion() {
					return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "providers"}, "p", errors.New("precondition failed"))
				}
				return true, nil, dyn.Tracker().Delete(gvr, "", "p")
			})
			err = cl.DeleteExactly(context.Background(), p, false)
			_, gerr := dyn.Tracker().Get(gvr, "", "p")
			if gone := apierrors.IsNotFound(gerr); gone != c.deleted {
				t.Fatalf("deleted: %v, want %v (DeleteExactly: %v)", gone, c.deleted, err)
			}
			if c.deleted && err != nil || !c.deleted && !apierrors.IsConflict(err) {
				t.Errorf("DeleteExactly: %v", err)
			}
		})
	}
}
