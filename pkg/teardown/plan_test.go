package teardown

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func managed(ns string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nop.crossplane.io/v1alpha1", "kind": "NopResource", "spec": spec}}
	u.SetName("n")
	u.SetNamespace(ns)
	return u
}

// TestExternalFate follows crossplane-runtime's resolvers: the legacy one
// (deletionPolicy and managementPolicies) for a cluster-scoped managed
// resource, the policies alone for a namespaced one.
func TestExternalFate(t *testing.T) {
	for _, tc := range []struct {
		ns   string
		spec map[string]any
		want string
	}{
		{"", map[string]any{}, "deleted deletionPolicy Delete, managementPolicies [*]"},
		{"", map[string]any{"deletionPolicy": "Orphan"}, "kept deletionPolicy Orphan"},
		{"", map[string]any{"deletionPolicy": "Orphan", "managementPolicies": []any{"Observe", "Delete"}}, "deleted managementPolicies [Observe, Delete] holds Delete"},
		{"", map[string]any{"deletionPolicy": "Delete", "managementPolicies": []any{"Observe"}}, "kept managementPolicies [Observe] has no Delete"},
		{"team-a", map[string]any{}, "deleted managementPolicies [*]"},
		{"team-a", map[string]any{"managementPolicies": []any{"Observe", "Create"}}, "kept managementPolicies [Observe, Create] has no Delete"},
	} {
		fate, why := externalFate(managed(tc.ns, tc.spec))
		if got := fate + " " + why; got != tc.want {
			t.Errorf("%q %v: %s, want %s", tc.ns, tc.spec, got, tc.want)
		}
	}
}

// TestKeepPolicies: what makes each keep its external resource, and that
// the result is kept by externalFate.
func TestKeepPolicies(t *testing.T) {
	for _, tc := range []struct {
		ns   string
		spec map[string]any
		want string
	}{
		{"", map[string]any{}, "Orphan []"},
		{"", map[string]any{"managementPolicies": []any{"Observe", "Delete"}}, "Orphan [Observe]"},
		{"team-a", map[string]any{}, " [Observe Create Update LateInitialize]"},
		{"team-a", map[string]any{"managementPolicies": []any{"Observe", "Update"}}, " []"},
	} {
		u := managed(tc.ns, tc.spec)
		del, mgmt := keepPolicies(u)
		if got := fmt.Sprintf("%s %v", del, mgmt); got != tc.want {
			t.Errorf("%q %v: %s, want %s", tc.ns, tc.spec, got, tc.want)
		}
		if del != "" {
			_ = unstructured.SetNestedField(u.Object, del, "spec", "deletionPolicy")
		}
		if mgmt != nil {
			_ = unstructured.SetNestedStringSlice(u.Object, mgmt, "spec", "managementPolicies")
		}
		if fate, why := externalFate(u); fate != FateKept {
			t.Errorf("%q %v set to %s %v: still %s (%s)", tc.ns, tc.spec, del, mgmt, fate, why)
		}
	}
}

// TestPlanLines: the plan names each object with its external name and
// fate, and the stages in order.
func TestPlanLines(t *testing.T) {
	p := &Plan{Mode: ModeDelete, Package: "provider/nop", Groups: []Group{{Kind: "NopResource.nop.crossplane.io", Stage: StageManaged, Objects: []Object{
		{Name: "a", ExternalName: "ext-a", Fate: FateDeleted, Why: "deletionPolicy Delete, managementPolicies [*]"},
		{Name: "b", ExternalName: "ext-b", Fate: FateKept, Why: "deletionPolicy Orphan", UsedBy: []string{"XNet net-1"}},
	}}, {Kind: "ProviderConfig.nop.crossplane.io", Stage: StageProviderConfigs, Objects: []Object{{Name: "default"}}}}}
	want := []string{
		"Teardown (--with-resources=delete): 2 managed resources, then 1 ProviderConfigs, then provider/nop",
		"  NopResource.nop.crossplane.io (2, managed resources):",
		"    a (external name ext-a): deleted with it (deletionPolicy Delete, managementPolicies [*])",
		"    b (external name ext-b): kept (deletionPolicy Orphan); after its users (XNet net-1)",
		"  ProviderConfig.nop.crossplane.io (1, ProviderConfigs):",
		"    default: deleted",
	}
	got := p.Lines()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lines\n%q\nwant\n%q", got, want)
	}
}
