package xpkg

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
)

// checkDefinition applies the structural rules the API server would enforce
// on a CRD or XRD at install time, so that validate catches them first:
// the name is <plural>.<group>, versions are DNS-1035 labels, and a CRD
// stores exactly one version.
func checkDefinition(o *Object) []Violation {
	spec, _ := o.Content["spec"].(map[string]any)
	group, _ := spec["group"].(string)
	names, _ := spec["names"].(map[string]any)
	plural, _ := names["plural"].(string)
	var out []Violation
	switch {
	case group == "" || plural == "":
		out = append(out, violation(o, RuleCRD, "spec.group and spec.names.plural are required"))
	case o.Name() != plural+"."+group:
		out = append(out, violation(o, RuleCRD, "metadata.name must be %s.%s (spec.names.plural.spec.group)", plural, group))
	}
	versions, _ := spec["versions"].([]any)
	if len(versions) == 0 {
		if v, _ := spec["version"].(string); v == "" { // apiextensions v1beta1 allowed a single spec.version
			return append(out, violation(o, RuleCRD, "spec.versions is empty"))
		}
		return out
	}
	storage := 0
	for i, v := range versions {
		m, _ := v.(map[string]any)
		vname, _ := m["name"].(string)
		if errs := validation.IsDNS1035Label(vname); len(errs) > 0 {
			out = append(out, violation(o, RuleCRD, "spec.versions[%d].name %q: %s", i, vname, errs[0]))
		}
		if s, _ := m["storage"].(bool); s {
			storage++
		}
	}
	if o.GVK().Kind == "CustomResourceDefinition" && storage != 1 {
		out = append(out, violation(o, RuleCRD, "%s: exactly one version must have storage: true", storageCount(storage)))
	}
	return out
}

func storageCount(n int) string {
	if n == 0 {
		return "no version is stored"
	}
	return fmt.Sprintf("%d versions are stored", n)
}
