package diff

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// apiVersion is one entry of a definition's spec.versions.
type apiVersion struct {
	name            string
	served, storage bool
	deprecated      bool
	schema          map[string]any
	raw             map[string]any
}

// definitionVersions reads spec.versions (storage is an XRD's
// referenceable), or the single spec.version and spec.validation of an
// apiextensions.k8s.io/v1beta1 CRD written without versions.
func definitionVersions(o *xpkg.Object) []apiVersion {
	spec, _ := o.Content["spec"].(map[string]any)
	raw, _ := spec["versions"].([]any)
	if len(raw) == 0 {
		if name, ok := spec["version"].(string); ok {
			raw = []any{map[string]any{"name": name, "served": true, "storage": true, "schema": spec["validation"]}}
		}
	}
	var out []apiVersion
	for _, r := range raw {
		m, _ := r.(map[string]any)
		v := apiVersion{raw: m}
		v.name, _ = m["name"].(string)
		v.served, _ = m["served"].(bool)
		v.storage, _ = m["storage"].(bool)
		if ref, _ := m["referenceable"].(bool); ref {
			v.storage = true
		}
		v.deprecated, _ = m["deprecated"].(bool)
		s, _ := m["schema"].(map[string]any)
		v.schema, _ = s["openAPIV3Schema"].(map[string]any)
		if v.schema == nil {
			validation, _ := spec["validation"].(map[string]any)
			v.schema, _ = validation["openAPIV3Schema"].(map[string]any)
		}
		out = append(out, v)
	}
	return out
}

// compareDefinition applies the definition rules: scope, names, versions,
// and, for every version in both, the schema and the version's other
// settings.
func compareDefinition(o, n *xpkg.Object) []Change {
	ovs, nvs := definitionVersions(o), definitionVersions(n)
	out := compareScopeAndNames(o, n)
	out = append(out, compareVersions(ovs, nvs)...)
	olds := byName(ovs)
	docs := 0
	for _, nv := range nvs {
		ov, ok := olds[nv.name]
		if !ok {
			continue
		}
		w := &schemaWalker{version: nv.name}
		w.walk("", ov.schema, nv.schema)
		out = append(out, w.changes...)
		docs += w.descriptions
		out = append(out, compareVersionSettings(ov, nv)...)
	}
	if docs > 0 {
		out = append(out, newChange(RuleDescriptionChanged, "", fmt.Sprintf("descriptions changed (%d %s)", docs, plural(docs, "field", "fields"))))
	}
	if paths := changedPaths(o.Content, n.Content, definitionIgnored); len(paths) > 0 {
		out = append(out, newChange(RuleObjectChanged, "", "changed: "+list(paths, 6)))
	}
	return out
}

// definitionIgnored are the paths the definition rules read themselves.
func definitionIgnored(p string) bool {
	switch p {
	case "spec.versions", "spec.version", "spec.validation", "spec.scope", "spec.names", "spec.claimNames":
		return true
	}
	return ignoreMetadata(p)
}

// compareScopeAndNames: a scope change or a renamed kind or resource
// makes existing objects unreachable the old way.
func compareScopeAndNames(o, n *xpkg.Object) []Change {
	var out []Change
	if os, ns := scopeOf(o), scopeOf(n); os != ns {
		out = append(out, newChange(RuleScopeChanged, "spec.scope", fmt.Sprintf("scope changed from %s to %s", os, ns)))
	}
	for _, field := range []string{"names", "claimNames"} {
		on, _ := specField(o, field).(map[string]any)
		nn, _ := specField(n, field).(map[string]any)
		var hard, soft []string
		for _, k := range unionKeys(on, nn) {
			if equalJSON(on[k], nn[k]) {
				continue
			}
			note := fmt.Sprintf("%s %s → %s", k, briefOrNone(on[k]), briefOrNone(nn[k]))
			if k == "shortNames" || k == "categories" {
				soft = append(soft, note)
			} else if on != nil {
				hard = append(hard, note)
			}
		}
		if on == nil && nn != nil {
			out = append(out, newChange(RuleShortNamesChanged, "spec."+field, "added: "+list(soft, 4)))
			continue
		}
		if len(hard) > 0 {
			out = append(out, newChange(RuleNamesChanged, "spec."+field, list(hard, 4)))
		}
		if len(soft) > 0 {
			out = append(out, newChange(RuleShortNamesChanged, "spec."+field, list(soft, 4)))
		}
	}
	return out
}

func briefOrNone(v any) string {
	if v == nil {
		return "(none)"
	}
	return brief(v)
}

func specField(o *xpkg.Object, field string) any {
	spec, _ := o.Content["spec"].(map[string]any)
	return spec[field]
}

// scopeOf is a definition's scope with the defaults applied: CRDs say it;
// XRDs of apiextensions.crossplane.io/v1 are what Crossplane v2 calls
// LegacyCluster (cluster scoped, with namespaced claims); later XRDs
// default to Namespaced.
func scopeOf(o *xpkg.Object) string {
	if s, ok := specField(o, "scope").(string); ok && s != "" {
		return s
	}
	if gvk := o.GVK(); gvk.Kind == "CompositeResourceDefinition" && gvk.Version == "v1" {
		return "LegacyCluster"
	}
	return "Namespaced"
}

// compareVersions applies the version rules: a version that goes, or stops
// being served, breaks the clients and stored objects that use it; a new
// storage version is compatible (the API server converts) but worth
// knowing for the stored-version migration it implies.
func compareVersions(ovs, nvs []apiVersion) []Change {
	olds, news := byName(ovs), byName(nvs)
	var out []Change
	add := func(version, msg, rule string) {
		c := newChange(rule, "", msg)
		c.Version = version
		out = append(out, c)
	}
	for _, ov := range ovs {
		nv, ok := news[ov.name]
		switch {
		case !ok:
			add(ov.name, "version removed", RuleVersionRemoved)
		case ov.served && !nv.served:
			add(ov.name, "no longer served", RuleVersionUnserved)
		case !ov.served && nv.served:
			add(ov.name, "served again", RuleVersionServed)
		}
		if ok && ov.storage && !nv.storage {
			add(ov.name, fmt.Sprintf("no longer the storage version (now %s)", storageOf(news)), RuleStorageMoved)
		}
		if ok && !ov.deprecated && nv.deprecated {
			add(ov.name, "deprecated", RuleVersionDeprecated)
		}
	}
	for _, nv := range nvs {
		if _, ok := olds[nv.name]; !ok {
			add(nv.name, "version added", RuleVersionAdded)
		}
	}
	return out
}

func byName(vs []apiVersion) map[string]apiVersion {
	m := make(map[string]apiVersion, len(vs))
	for _, v := range vs {
		m[v.name] = v
	}
	return m
}

func storageOf(vs map[string]apiVersion) string {
	for _, v := range vs {
		if v.storage {
			return v.name
		}
	}
	return "none"
}

// compareVersionSettings compares what a version holds besides its
// schema: subresources, printer columns and the like.
func compareVersionSettings(ov, nv apiVersion) []Change {
	var out []Change
	osub, _ := ov.raw["subresources"].(map[string]any)
	nsub, _ := nv.raw["subresources"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(osub)) {
		if _, ok := nsub[k]; !ok {
			c := newChange(RuleSubresourceRemoved, "subresources."+k, "subresource "+k+" removed")
			c.Version = nv.name
			out = append(out, c)
		}
	}
	skip := func(p string) bool {
		switch p {
		case "name", "served", "storage", "referenceable", "deprecated", "schema":
			return true
		}
		return p == "subresources" && len(out) > 0
	}
	if paths := changedPaths(ov.raw, nv.raw, skip); len(paths) > 0 {
		c := newChange(RuleObjectChanged, "", "changed: "+list(paths, 6))
		c.Version = nv.name
		out = append(out, c)
	}
	return out
}
