package diff

import (
	"maps"
	"slices"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Blocker is an API version objects are stored at (a CRD's
// status.storedVersions) that the new package would strand.
type Blocker struct {
	CRD     string `json:"crd"`
	Version string `json:"version"`
	// Problem says what the new package does to the version.
	Problem string `json:"problem"`
	// Target is a version both packages serve, to migrate the stored
	// objects to; "" when there is none.
	Target string `json:"target,omitempty"`
}

// definedVersions maps the CRD names a package's definitions make (an
// XRD's own and its claim's) to the definition's versions.
func definedVersions(p *xpkg.Package) map[string][]apiVersion {
	m := map[string][]apiVersion{}
	for _, o := range p.Objects {
		if !isDefinition(o) {
			continue
		}
		vs := definitionVersions(o)
		m[o.Name()] = vs
		if claim, ok := specField(o, "claimNames").(map[string]any); ok {
			plural, _ := claim["plural"].(string)
			group, _ := specField(o, "group").(string)
			if plural != "" && group != "" {
				m[plural+"."+group] = vs
			}
		}
	}
	return m
}

// StoredCRDs lists the CRDs whose stored versions Preflight needs: those
// the old package's definitions make.
func StoredCRDs(old *xpkg.Package) []string {
	return slices.Sorted(maps.Keys(definedVersions(old)))
}

// Preflight finds the stored versions (CRD name → status.storedVersions)
// that the new package no longer defines or serves: objects stored at them
// could no longer be read after the upgrade.
func Preflight(old, new *xpkg.Package, stored map[string][]string) []Blocker {
	olds, news := definedVersions(old), definedVersions(new)
	var out []Blocker
	for _, crd := range slices.Sorted(maps.Keys(olds)) {
		nvs, defined := news[crd]
		for _, sv := range stored[crd] {
			b := Blocker{CRD: crd, Version: sv, Target: migrationTarget(olds[crd], nvs)}
			i := slices.IndexFunc(nvs, func(v apiVersion) bool { return v.name == sv })
			switch {
			case !defined:
				b.Problem = "no longer defines (the whole CRD is gone)"
			case i < 0:
				b.Problem = "no longer defines"
			case !nvs[i].served:
				b.Problem = "no longer serves"
			default:
				continue
			}
			out = append(out, b)
		}
	}
	return out
}

// migrationTarget is the new storage version when the old package serves
// it too (the API server can then convert objects to it before the
// upgrade), else any version both serve.
func migrationTarget(old, new []apiVersion) string {
	served := func(vs []apiVersion, name string) bool {
		return slices.ContainsFunc(vs, func(v apiVersion) bool { return v.name == name && v.served })
	}
	var both []string
	for _, v := range new {
		if v.served && served(old, v.name) {
			if v.storage {
				return v.name
			}
			both = append(both, v.name)
		}
	}
	if len(both) > 0 {
		return both[len(both)-1]
	}
	return ""
}

// DefinedVersions maps the CRD names a package's definitions make to the
// versions they serve.
func DefinedVersions(p *xpkg.Package) map[string][]string {
	out := map[string][]string{}
	for crd, vs := range definedVersions(p) {
		served := []string{}
		for _, v := range vs {
			if v.served {
				served = append(served, v.name)
			}
		}
		out[crd] = served
	}
	return out
}
