package diff

import (
	"maps"
	"slices"
	"strings"

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

// DefinitionVersion is one version of a definition, as a plan needs it.
type DefinitionVersion struct {
	Name   string
	Served bool
	// Storage: the storage version, or an XRD's referenceable one.
	Storage bool
}

// Definitions maps the CRD names a package's definitions make (a CRD's or
// MRD's own, an XRD's own and its claim's) to their versions. It is plain
// data, so that a plan can have it from a package read as a stream
// (Indexed.Definitions) as well as from a parsed one (DefinitionsOf).
type Definitions map[string][]DefinitionVersion

// definition is what Definitions keeps of one definition document: the
// CRD names it makes and its versions, copied out of the decoded document
// so that keeping it does not keep the document.
type definition struct {
	names    []string
	versions []DefinitionVersion
}

// definitionOf summarises a definition (isDefinition) for Definitions.
func definitionOf(o *xpkg.Object) definition {
	var d definition
	for _, v := range definitionVersions(o) {
		d.versions = append(d.versions, DefinitionVersion{Name: strings.Clone(v.name), Served: v.served, Storage: v.storage})
	}
	d.names = []string{strings.Clone(o.Name())}
	if claim, ok := specField(o, "claimNames").(map[string]any); ok {
		plural, _ := claim["plural"].(string)
		group, _ := specField(o, "group").(string)
		if plural != "" && group != "" {
			d.names = append(d.names, plural+"."+group)
		}
	}
	return d
}

// add records a definition; a later one of the same name wins, as the API
// server would end up with the last one applied.
func (d Definitions) add(def definition) {
	for _, n := range def.names {
		d[n] = def.versions
	}
}

// DefinitionsOf gathers a parsed package's definitions.
func DefinitionsOf(p *xpkg.Package) Definitions {
	d := Definitions{}
	for _, o := range p.Objects {
		if isDefinition(o) {
			d.add(definitionOf(o))
		}
	}
	return d
}

// NotIn lists, sorted, the CRD names d makes and old does not.
func (d Definitions) NotIn(old Definitions) []string {
	var out []string
	for _, n := range d.Names() {
		if _, ok := old[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

// Names lists, sorted, the CRDs whose stored versions Preflight needs when
// d is the old package's.
func (d Definitions) Names() []string {
	return slices.Sorted(maps.Keys(d))
}

// Served maps each CRD name to the versions it serves (an empty slice when
// none).
func (d Definitions) Served() map[string][]string {
	out := make(map[string][]string, len(d))
	for crd, vs := range d {
		served := []string{}
		for _, v := range vs {
			if v.Served {
				served = append(served, v.Name)
			}
		}
		out[crd] = served
	}
	return out
}

// Preflight finds the stored versions (CRD name → status.storedVersions)
// that the new package no longer defines or serves: objects stored at them
// could no longer be read after the upgrade.
func Preflight(old, new Definitions, stored map[string][]string) []Blocker {
	var out []Blocker
	for _, crd := range old.Names() {
		nvs, defined := new[crd]
		for _, sv := range stored[crd] {
			b := Blocker{CRD: crd, Version: sv, Target: migrationTarget(old[crd], nvs)}
			i := slices.IndexFunc(nvs, func(v DefinitionVersion) bool { return v.Name == sv })
			switch {
			case !defined:
				b.Problem = "no longer defines (the whole CRD is gone)"
			case i < 0:
				b.Problem = "no longer defines"
			case !nvs[i].Served:
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
func migrationTarget(old, new []DefinitionVersion) string {
	served := func(vs []DefinitionVersion, name string) bool {
		return slices.ContainsFunc(vs, func(v DefinitionVersion) bool { return v.Name == name && v.Served })
	}
	var both []string
	for _, v := range new {
		if v.Served && served(old, v.Name) {
			if v.Storage {
				return v.Name
			}
			both = append(both, v.Name)
		}
	}
	if len(both) > 0 {
		return both[len(both)-1]
	}
	return ""
}
