package cluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDefinitionState(t *testing.T) {
	cond := func(t, s, reason string) any { return map[string]any{"type": t, "status": s, "reason": reason} }
	def := func(kind string, spec map[string]any, conds ...any) Definition {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec, "status": map[string]any{"conditions": conds}}}
		return definitionState(ObjectRef{Kind: kind, Name: "x"}, u)
	}
	for name, c := range map[string]struct {
		got   Definition
		ready bool
		state string
	}{
		"crd established":   {def("CustomResourceDefinition", nil, cond("Established", "True", "InitialNamesAccepted")), true, "Established"},
		"crd not yet":       {def("CustomResourceDefinition", nil), false, "Established not reported yet"},
		"mrd inactive":      {def("ManagedResourceDefinition", map[string]any{"state": "Inactive"}, cond("Established", "False", "InactiveManagedResource")), true, "Inactive"},
		"mrd pending":       {def("ManagedResourceDefinition", map[string]any{"state": "Active"}, cond("Established", "False", "PendingManagedResource")), false, "Established=False (PendingManagedResource)"},
		"xrd not offered":   {def("CompositeResourceDefinition", map[string]any{"claimNames": map[string]any{"kind": "C"}}, cond("Established", "True", ""), cond("Offered", "False", "x")), false, "Offered=False (x)"},
		"xrd without claim": {def("CompositeResourceDefinition", map[string]any{}, cond("Established", "True", "")), true, "Established"},
	} {
		if c.got.Ready != c.ready || c.got.State != c.state {
			t.Errorf("%s: ready %v, %q; want %v, %q", name, c.got.Ready, c.got.State, c.ready, c.state)
		}
	}
}

func TestTerminalWarning(t *testing.T) {
	ev := func(msg string, count int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"message": msg, "count": count}}
	}
	for _, c := range []struct {
		e    *unstructured.Unstructured
		want bool
	}{
		{ev(`CustomResourceDefinition.apiextensions.k8s.io "w" is invalid: status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions`, 1), true},
		{ev(`cannot create object: customresourcedefinitions.apiextensions.k8s.io "x" already exists`, 1), false},
		{ev(`cannot create object: customresourcedefinitions.apiextensions.k8s.io "x" already exists`, 3), true},
		{&unstructured.Unstructured{Object: map[string]any{"message": "m", "series": map[string]any{"count": int64(4)}}}, true},
	} {
		if got := terminalWarning(c.e); got != c.want {
			t.Errorf("%v: terminal %v, want %v", c.e.Object, got, c.want)
		}
	}
}
