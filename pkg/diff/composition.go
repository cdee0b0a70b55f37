package diff

import (
	"fmt"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// compareComposition applies the Composition rules: the composite type
// it serves, the composed resources it names (in spec.resources, and in
// the resources of function-patch-and-transform inputs in the pipeline),
// then any other change, which the unified diff shows.
func compareComposition(o, n *xpkg.Object) []Change {
	var out []Change
	ot, nt := specField(o, "compositeTypeRef"), specField(n, "compositeTypeRef")
	if !equalJSON(ot, nt) {
		out = append(out, newChange(RuleCompositeType, "spec.compositeTypeRef", fmt.Sprintf("composes %s instead of %s", typeRef(nt), typeRef(ot))))
	}
	newNames := map[string]bool{}
	for _, r := range composedResources(n) {
		newNames[r] = true
	}
	for _, r := range composedResources(o) {
		if !newNames[r] {
			out = append(out, newChange(RuleComposedRemoved, "resources["+r+"]", "composed resource "+r+" removed"))
		}
	}
	if len(out) > 0 {
		return out // the unified diff shows the rest
	}
	if paths := changedPaths(o.Content, n.Content, ignoreMetadata); len(paths) > 0 {
		out = append(out, newChange(RuleCompositionChanged, "", "changed: "+list(paths, 6)))
	}
	return out
}

func typeRef(v any) string {
	m, _ := v.(map[string]any)
	av, _ := m["apiVersion"].(string)
	k, _ := m["kind"].(string)
	if av == "" && k == "" {
		return "(none)"
	}
	return k + "." + av
}

// composedResources names the resources a Composition composes, as
// "step/name" for pipeline steps.
func composedResources(o *xpkg.Object) []string {
	var out []string
	names := func(prefix string, l any) {
		rs, _ := l.([]any)
		for _, r := range rs {
			m, _ := r.(map[string]any)
			if n, ok := m["name"].(string); ok && n != "" {
				out = append(out, prefix+n)
			}
		}
	}
	names("", specField(o, "resources"))
	steps, _ := specField(o, "pipeline").([]any)
	for _, s := range steps {
		m, _ := s.(map[string]any)
		step, _ := m["step"].(string)
		input, _ := m["input"].(map[string]any)
		names(step+"/", input["resources"])
	}
	return out
}
