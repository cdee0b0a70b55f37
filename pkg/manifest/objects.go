package manifest

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// packageGroups are the API groups of package objects: Crossplane's and
// IBM's, which serves the same kinds. Any version counts.
var packageGroups = map[string]bool{"pkg.crossplane.io": true, "pkg.ibm.crossplane.io": true}

// packageKinds are the kinds of package objects.
var packageKinds = map[string]bool{"Provider": true, "Configuration": true, "Function": true}

// add files one decoded document found at source:line.
func (r *reader) add(v any, source string, line int) {
	switch v := v.(type) {
	case nil: // a document of "~" or "null": nothing, as an empty one
	case map[string]any:
		r.addObject(v, source, line, "")
	default:
		r.errorf(source, line, "not a Kubernetes object: the document is a %s, not a mapping with apiVersion and kind", typeName(v))
	}
}

// addObject files one object. ctx names the item of a List it is in, so
// that an error tells the items apart: they share the List's line.
func (r *reader) addObject(m map[string]any, source string, line int, ctx string) {
	kind, _ := m["kind"].(string)
	apiVersion, _ := m["apiVersion"].(string)
	switch {
	case kind == "":
		r.errorf(source, line, "%snot a Kubernetes object: no kind", ctx)
		return
	case apiVersion == "":
		r.errorf(source, line, "%snot a Kubernetes object: no apiVersion", ctx)
		return
	}
	if items, ok := listItems(m, kind); ok {
		r.addItems(items, kind, source, line, ctx)
		return
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		r.errorf(source, line, "%s%s: %v", ctx, kind, err)
		return
	}
	if !packageGroups[gv.Group] || !packageKinds[kind] {
		if gv.Group == "apiextensions.crossplane.io" {
			o := Object{Source: source, Line: line, Unstructured: &unstructured.Unstructured{Object: m}}
			switch kind {
			case "Composition":
				r.set.Compositions = append(r.set.Compositions, o)
			case "ManagedResourceActivationPolicy":
				r.set.Policies = append(r.set.Policies, o)
			}
		}
		r.ignore(gv.Group, kind)
		return
	}
	name, _, err := unstructured.NestedString(m, "metadata", "name")
	switch {
	case err != nil:
		r.errorf(source, line, "%s%s: metadata.name is not a string; quote it", ctx, strings.ToLower(kind))
		return
	case name == "":
		r.errorf(source, line, "%s%s has no metadata.name; give the package a name", ctx, strings.ToLower(kind))
		return
	}
	obj := Object{Source: source, Line: line, Unstructured: &unstructured.Unstructured{Object: m}}
	r.set.Packages = append(r.set.Packages, obj)
}

// listItems returns a list's items: kind List (apiVersion v1), or any
// *List kind such as kubectl get -o yaml's ProviderList, when it has items.
func listItems(m map[string]any, kind string) ([]any, bool) {
	if !strings.HasSuffix(kind, "List") {
		return nil, false
	}
	items, present := m["items"]
	if !present {
		return nil, false
	}
	switch items := items.(type) {
	case nil:
		return nil, true // "items: null" from an empty list
	case []any:
		return items, true
	}
	return nil, false
}

// addItems files a list's items as if each were a document of its own.
func (r *reader) addItems(items []any, kind, source string, line int, ctx string) {
	for i, it := range items {
		itemCtx := fmt.Sprintf("%sitem %d of the %s: ", ctx, i+1, kind)
		m, ok := it.(map[string]any)
		if !ok {
			r.errorf(source, line, "%snot a Kubernetes object: a %s, not a mapping", itemCtx, typeName(it))
			continue
		}
		r.addObject(m, source, line, itemCtx)
	}
}

// ignore counts an object that is no package.
func (r *reader) ignore(group, kind string) {
	key := kind
	if packageKinds[kind] && group != "" {
		key = kind + "." + group // say it is not a package: a crossplane.yaml's meta Provider
	}
	r.set.Ignored++
	r.set.IgnoredKinds[key]++
}

// typeName names a decoded value's YAML type for messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	}
	return "number"
}
