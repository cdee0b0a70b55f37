package installed

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPackageOrigin(t *testing.T) {
	spec := `{"f:spec":{".":{},"f:package":{}}}`
	labels := `{"f:metadata":{"f:labels":{"f:team":{}}}}`
	entry := func(manager, sub, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: sub,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	for name, c := range map[string]struct {
		fields []metav1.ManagedFieldsEntry
		want   Origin
		owners []string
	}{
		"the resolver made it": {[]metav1.ManagedFieldsEntry{entry("crossplane", "", spec), entry("crossplane", "status", `{"f:status":{}}`)},
			OriginDependency, []string{"crossplane"}},
		"labelled by a user since": {[]metav1.ManagedFieldsEntry{entry("crossplane", "", spec), entry("kubectl-edit", "", labels)},
			OriginDependency, []string{"crossplane"}},
		"installed by kubectl xpkg": {[]metav1.ManagedFieldsEntry{entry("kubectl-xpkg", "", spec), entry("crossplane", "status", `{"f:status":{}}`)},
			OriginExplicit, []string{"kubectl-xpkg"}},
		"applied too": {[]metav1.ManagedFieldsEntry{entry("crossplane", "", spec), entry("argocd-controller", "", spec)},
			OriginExplicit, []string{"crossplane", "argocd-controller"}},
		"no record":  {nil, OriginUnknown, nil},
		"bad record": {[]metav1.ManagedFieldsEntry{entry("crossplane", "", `{"f:spec":`)}, OriginUnknown, nil},
	} {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetManagedFields(c.fields)
			got, owners := PackageOrigin(u)
			if got != c.want || !slices.Equal(owners, c.owners) {
				t.Errorf("PackageOrigin = %v, %v; want %v, %v", got, owners, c.want, c.owners)
			}
		})
	}
}
