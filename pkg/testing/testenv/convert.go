package testenv

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// crdToV1 turns an apiextensions.k8s.io/v1beta1 CRD (what Crossplane v0.x
// ships; today's API servers serve only v1) into a v1 one that serves the
// same group, names, scope, versions, subresources and printer columns. Its
// schema keeps every field: v0.x schemas are often not structural, which v1
// requires, and the tests need the API, not its validation.
func crdToV1(in *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	spec, _, _ := unstructured.NestedMap(in.Object, "spec")
	if spec == nil {
		return nil, fmt.Errorf("CRD %s has no spec", in.GetName())
	}
	versions, _ := spec["versions"].([]any)
	if len(versions) == 0 {
		v, _ := spec["version"].(string)
		versions = []any{map[string]any{"name": v, "served": true, "storage": true}}
	}
	schema := map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	var out []any
	for _, raw := range versions {
		v, _ := raw.(map[string]any)
		nv := map[string]any{"name": v["name"], "served": orTrue(v["served"]), "storage": orTrue(v["storage"]), "schema": schema}
		if sub, ok := spec["subresources"]; ok {
			nv["subresources"] = sub
		}
		if cols := printerColumns(spec["additionalPrinterColumns"]); len(cols) > 0 {
			nv["additionalPrinterColumns"] = cols
		}
		out = append(out, nv)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": in.GetName()},
		"spec":     map[string]any{"group": spec["group"], "names": spec["names"], "scope": spec["scope"], "versions": out},
	}}
	return u, nil
}

func orTrue(v any) any {
	if v == nil {
		return true
	}
	return v
}

func printerColumns(v any) []any {
	cols, _ := v.([]any)
	var out []any
	for _, c := range cols {
		m, _ := c.(map[string]any)
		n := map[string]any{}
		for k, val := range m {
			if k == "JSONPath" {
				k = "jsonPath"
			}
			n[k] = val
		}
		out = append(out, n)
	}
	return out
}
