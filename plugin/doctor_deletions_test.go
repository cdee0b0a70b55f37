package plugin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

// terminatingWidgets is what a provider deleted while its managed
// resources exist leaves: the CRD of its Widgets being deleted for an
// hour, owned by the gone revision, and one Widget that holds it.
func terminatingWidgets() []*unstructured.Unstructured {
	since := &metav1.Time{Time: time.Now().Add(-time.Hour)}
	crd := fakecluster.Object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.stored.example.org", map[string]any{
		"spec": map[string]any{"group": "stored.example.org", "scope": "Namespaced", "names": map[string]any{"plural": "widgets", "kind": "Widget"},
			"versions": []any{map[string]any{"name": "v1beta1", "served": true, "storage": true}}}})
	ctl := true
	crd.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "pkg.crossplane.io/v1", Kind: "ProviderRevision", Name: "provider-widgets-0123456789ab", UID: "u-gone", Controller: &ctl}})
	crd.SetDeletionTimestamp(since)
	crd.SetFinalizers([]string{"customresourcecleanup.apiextensions.k8s.io"})
	w := fakecluster.Object("stored.example.org/v1beta1", "Widget", "w-1", nil)
	w.SetNamespace("team-a")
	w.SetDeletionTimestamp(since)
	w.SetFinalizers([]string{"finalizer.managedresource.crossplane.io"})
	return []*unstructured.Unstructured{crd, w}
}

// TestDoctorPrintsTheTerminatingDefinition: the finding is one blocking
// line (exit 3) that names the CRD, the namespaced object with its
// finalizer, the provider that is not installed and the way out; in JSON
// with its object and count.
func TestDoctorPrintsTheTerminatingDefinition(t *testing.T) {
	x := newCLI(t, terminatingWidgets()...)
	r := x.Run("doctor").Fails(t, 3)
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if len(lines) != 3 || lines[1] != "  1 blocking, 0 warning, 0 info" {
		t.Fatalf("doctor:\n%s", r.Stdout)
	}
	want := "  BLOCKING CRD widgets.stored.example.org has been deleting for 60m and cannot finish while objects of its kind exist: 1 Widget object(s) remain and hold it: " +
		"team-a/w-1 (finalizers: finalizer.managedresource.crossplane.io). Only the controller of provider/provider-widgets removes finalizer.managedresource.crossplane.io, " +
		"and provider/provider-widgets is not installed: the revision that served the kind, provider-widgets-0123456789ab, is gone. " +
		"Until it is gone the API server creates no Widget.stored.example.org. Install provider/provider-widgets again, then kubectl xpkg doctor --fix saves every object, " +
		"removes its finalizer without deleting what it manages, waits for the package manager to make the CRD again and makes each object again under its external name; " +
		"or let the deletion finish by orphaning what the objects manage: kubectl xpkg doctor --fix --orphan-external-resources lists it, then removes their finalizers [definition-terminating]"
	if lines[2] != want {
		t.Errorf("doctor prints\n%s\nwant\n%s", lines[2], want)
	}

	r = x.Run("doctor", "-o", "json").Fails(t, 3)
	var doc struct {
		Findings []struct {
			Rule, Severity, Object string
			Count                  int
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	if len(doc.Findings) != 1 || doc.Findings[0].Rule != "definition-terminating" || doc.Findings[0].Severity != "blocking" ||
		doc.Findings[0].Object != "customresourcedefinition/widgets.stored.example.org" || doc.Findings[0].Count != 1 {
		t.Errorf("-o json findings %+v", doc.Findings)
	}
}
