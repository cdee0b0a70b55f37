package testenv

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// crdToV1 turns an apiextensions.k8s.io/v1beta1 CRD (what Crossplane v0.x
// ships; today's API servers serve only v1) into a v1 one that serves the
// same group, names, scope, versions, subresources and printer columns,
// and validates what its schema says: types, enums, required fields,
// patterns and bounds. v1 demands a structural schema, which v0.x schemas
// often are not: structural makes them so, and keeps unknown fields as
// v1beta1 did (its preserveUnknownFields defaulted to true).
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
	shared, _, _ := unstructured.NestedMap(spec, "validation", "openAPIV3Schema")
	var out []any
	for _, raw := range versions {
		v, _ := raw.(map[string]any)
		s, _, _ := unstructured.NestedMap(v, "schema", "openAPIV3Schema")
		if s == nil {
			s = runtime.DeepCopyJSON(shared)
		}
		nv := map[string]any{"name": v["name"], "served": orTrue(v["served"]), "storage": orTrue(v["storage"]),
			"schema": map[string]any{"openAPIV3Schema": structuralRoot(s)}}
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

// structuralRoot is a CRD's root schema made structural. The API server
// validates metadata itself: a root schema may say no more of it than
// that it is an object.
func structuralRoot(s map[string]any) map[string]any {
	if s == nil {
		return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	}
	s = structural(s)
	s["type"] = "object"
	if props, ok := s["properties"].(map[string]any); ok {
		if _, ok := props["metadata"]; ok {
			props["metadata"] = map[string]any{"type": "object"}
		}
	}
	return s
}

// notInV1 are schema keywords v1beta1 accepted and v1 refuses.
var notInV1 = []string{"$ref", "$schema", "definitions", "dependencies", "id", "patternProperties"}

// structural makes a v0.x schema node structural, in place: every node
// gets a type (object when it has properties, array when it has items;
// otherwise it keeps anything), keywords v1 refuses are dropped, and an
// object keeps the fields its schema does not name, as under v1beta1.
func structural(s map[string]any) map[string]any {
	for _, k := range notInV1 {
		delete(s, k)
	}
	props, hasProps := s["properties"].(map[string]any)
	for name, p := range props {
		if m, ok := p.(map[string]any); ok {
			props[name] = structural(m)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		s["items"] = structural(items)
	}
	switch ap := s["additionalProperties"].(type) {
	case map[string]any:
		if hasProps { // v1 allows properties or additionalProperties, not both
			delete(s, "additionalProperties")
		} else {
			s["additionalProperties"] = structural(ap)
		}
	case bool: // v1 refuses false, and true says no more than what follows
		delete(s, "additionalProperties")
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "not"} {
		delete(s, k) // value validation structural schemas restrict; the types above stand
	}
	if _, ok := s["type"]; !ok {
		switch {
		case hasProps:
			s["type"] = "object"
		case s["items"] != nil:
			s["type"] = "array"
		default:
			return map[string]any{"x-kubernetes-preserve-unknown-fields": true}
		}
	}
	if s["type"] == "object" {
		if _, ok := s["additionalProperties"]; !ok {
			s["x-kubernetes-preserve-unknown-fields"] = true
		}
	}
	return s
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
