package activation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// Definition is an MRD as a plan reads it.
type Definition struct {
	Name string `json:"name"`
	// Kind is Kind.group, as a composed resource names it.
	Kind  string `json:"kind"`
	State string `json:"state"`
	// Provider is the package that made it (provider/NAME), "" if unknown.
	Provider string `json:"provider,omitempty"`
	// Objects is how many objects of its kind exist (read for active
	// MRDs: an inactive one serves none).
	Objects int64 `json:"objects,omitempty"`
}

// Active says whether Crossplane made its CRD.
func (d Definition) Active() bool { return strings.EqualFold(d.State, "Active") }

// Input is what a plan is made from.
type Input struct {
	Definitions  []Definition
	Compositions []composition.Composition
	// Served are the kinds (Kind.group) that CRDs serve and no MRD
	// defines: composite resources, ProviderConfigs, Kubernetes' own. A
	// Composition that composes one needs no activation for it.
	Served   map[string]bool
	Policies []installed.MRAP
}

// Need is one kind something needs, and its MRD.
type Need struct {
	Kind string `json:"kind"`
	// MRD defines it ("" in Plan.Missing); State is the MRD's today.
	MRD      string `json:"mrd,omitempty"`
	State    string `json:"state,omitempty"`
	Provider string `json:"provider,omitempty"`
	// By say what needs it: "Composition NAME", "3 objects".
	By []string `json:"neededBy"`
}

// Existing is an MRAP there is, and how much it activates.
type Existing struct {
	Name     string   `json:"name"`
	Activate []string `json:"activate"`
	// Matches is how many MRDs it activates; Beyond how many of those
	// nothing needs. Unmatched are its entries that match no MRD.
	Matches   int      `json:"matches"`
	Beyond    int      `json:"beyondNeed"`
	Unmatched []string `json:"unmatched,omitempty"`
}

// Counts are the plan's figures.
type Counts struct {
	MRDs      int `json:"mrds"`
	ActiveNow int `json:"activeNow"`
	Needed    int `json:"needed"`
	// Activates are the needed MRDs inactive today: applying the policy
	// makes their CRDs.
	Activates int `json:"activates"`
	// Unneeded are the MRDs the policy leaves out: on a cluster that
	// starts from it, CRDs never made; ActiveUnneeded of them are active
	// here and stay so (Crossplane cannot deactivate an MRD).
	Unneeded       int `json:"unneeded"`
	ActiveUnneeded int `json:"activeUnneeded"`
}

// Plan is the smallest policy for what is needed, and how it was found.
type Plan struct {
	Activate []string `json:"activate"`
	Needs    []Need   `json:"needs"`
	// Missing are kinds needed that no MRD nor CRD defines: their
	// provider is not installed.
	Missing []Need `json:"missing,omitempty"`
	// Unread say what of the Compositions could not be read.
	Unread   []string   `json:"unread,omitempty"`
	Counts   Counts     `json:"counts"`
	Existing []Existing `json:"existingPolicies,omitempty"`
}

// Build plans the policy for in: every MRD a Composition composes or whose
// kind has objects.
func Build(in Input) *Plan {
	p := &Plan{Activate: []string{}, Needs: []Need{}}
	byKind := map[string]*Definition{}
	var names []string
	for i := range in.Definitions {
		d := &in.Definitions[i]
		byKind[d.Kind] = d
		names = append(names, d.Name)
	}
	needs := map[string]*Need{}
	missing := map[string]*Need{}
	need := func(kind, by string) {
		d := byKind[kind]
		switch {
		case d != nil:
			n := needs[d.Name]
			if n == nil {
				n = &Need{Kind: kind, MRD: d.Name, State: d.State, Provider: d.Provider}
				needs[d.Name] = n
			}
			n.By = append(n.By, by)
		case in.Served[kind] || Own(group(kind)):
			// Served by a CRD no MRD makes, or Kubernetes' own group.
		default:
			n := missing[kind]
			if n == nil {
				n = &Need{Kind: kind}
				missing[kind] = n
			}
			n.By = append(n.By, by)
		}
	}
	for _, c := range in.Compositions {
		for _, gk := range c.Composes {
			need(gk.String(), c.Where())
		}
		for _, u := range c.Unread {
			p.Unread = append(p.Unread, c.Where()+": "+u)
		}
	}
	for _, d := range in.Definitions {
		if d.Objects > 0 {
			need(d.Kind, objects(d.Objects))
		}
	}
	var needed []string
	for name, n := range needs {
		needed = append(needed, name)
		p.Needs = append(p.Needs, *n)
	}
	for _, n := range missing {
		p.Missing = append(p.Missing, *n)
	}
	byMRD := func(a, b Need) int { return strings.Compare(a.MRD+a.Kind, b.MRD+b.Kind) }
	slices.SortFunc(p.Needs, byMRD)
	slices.SortFunc(p.Missing, byMRD)
	p.Activate = append(p.Activate, Smallest(needed, names)...)
	p.count(in.Definitions, needs)
	for _, m := range in.Policies {
		p.Existing = append(p.Existing, existing(m, in.Definitions, needs))
	}
	return p
}

// group is the group of a kind written Kind.group.
func group(kind string) string {
	_, g, _ := strings.Cut(kind, ".")
	return g
}

func objects(n int64) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}

func (p *Plan) count(defs []Definition, needs map[string]*Need) {
	c := &p.Counts
	c.MRDs, c.Needed = len(defs), len(needs)
	for _, d := range defs {
		_, needed := needs[d.Name]
		switch {
		case d.Active() && !needed:
			c.ActiveNow++
			c.Unneeded++
			c.ActiveUnneeded++
		case d.Active():
			c.ActiveNow++
		case needed:
			c.Activates++
		default:
			c.Unneeded++
		}
	}
}

func existing(m installed.MRAP, defs []Definition, needs map[string]*Need) Existing {
	e := Existing{Name: m.Name, Activate: m.Activate}
	for _, entry := range m.Activate {
		if !slices.ContainsFunc(defs, func(d Definition) bool { return Matches(entry, d.Name) }) {
			e.Unmatched = append(e.Unmatched, entry)
		}
	}
	for _, d := range defs {
		if slices.ContainsFunc(m.Activate, func(entry string) bool { return Matches(entry, d.Name) }) {
			e.Matches++
			if needs[d.Name] == nil {
				e.Beyond++
			}
		}
	}
	return e
}
