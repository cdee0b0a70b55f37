package diff

import (
	"fmt"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// apiVersion is one entry of a definition's spec.versions.
type apiVersion struct {
	name            string
	served, storage bool
}

func definitionVersions(o *xpkg.Object) []apiVersion {
	spec, _ := o.Content["spec"].(map[string]any)
	raw, _ := spec["versions"].([]any)
	var out []apiVersion
	for _, r := range raw {
		m, _ := r.(map[string]any)
		v := apiVersion{}
		v.name, _ = m["name"].(string)
		v.served, _ = m["served"].(bool)
		v.storage, _ = m["storage"].(bool)
		out = append(out, v)
	}
	return out
}

// compareVersions applies the version rules: a version that goes, or stops
// being served, breaks the clients and stored objects that use it; a new
// storage version is compatible (the API server converts) but worth
// knowing for the stored-version migration it implies.
func compareVersions(o, n *xpkg.Object) []Change {
	olds, news := map[string]apiVersion{}, map[string]apiVersion{}
	for _, v := range definitionVersions(o) {
		olds[v.name] = v
	}
	for _, v := range definitionVersions(n) {
		news[v.name] = v
	}
	var out []Change
	add := func(path, msg string, s Severity, rule string) {
		out = append(out, Change{Object: label(n), Path: path, Message: msg, Severity: s, Rule: rule})
	}
	for _, ov := range definitionVersions(o) {
		nv, ok := news[ov.name]
		path := "version " + ov.name
		switch {
		case !ok:
			add(path, "removed", Breaking, RuleVersionRemoved)
		case ov.served && !nv.served:
			add(path, "no longer served", Breaking, RuleVersionUnserved)
		case !ov.served && nv.served:
			add(path, "served again", Compatible, RuleVersionServed)
		}
		if ok && ov.storage && !nv.storage {
			add(path, fmt.Sprintf("no longer the storage version (now %s)", storageOf(news)), Compatible, RuleStorageMoved)
		}
	}
	for _, nv := range definitionVersions(n) {
		if _, ok := olds[nv.name]; !ok {
			add("version "+nv.name, "added", Compatible, RuleVersionAdded)
		}
	}
	return out
}

func storageOf(vs map[string]apiVersion) string {
	for _, v := range vs {
		if v.storage {
			return v.name
		}
	}
	return "none"
}
