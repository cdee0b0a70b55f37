package activation

import (
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
)

// Unmade is a kind Compositions compose whose objects cannot be made: its
// MRD is inactive (no CRD serves it), or nothing defines it.
type Unmade struct {
	// Kind is Kind.group; MRD and Provider are its MRD's ("" when no MRD
	// defines it).
	Kind     string
	MRD      string
	Provider string
	// Compositions are the names of those that compose it, sorted.
	Compositions []string
}

// UnmadeKinds are the kinds in's Compositions compose that the cluster
// serves no objects of, by kind: those whose MRD is inactive, and those
// no MRD nor CRD defines and Kubernetes does not serve itself (Own).
func UnmadeKinds(in Input) []Unmade {
	byKind := map[string]*Definition{}
	for i := range in.Definitions {
		byKind[in.Definitions[i].Kind] = &in.Definitions[i]
	}
	found := map[string]*Unmade{}
	for _, c := range in.Compositions {
		for _, gk := range c.Composes {
			kind := gk.String()
			d := byKind[kind]
			switch {
			case d != nil && d.Active():
				continue
			case d == nil && (in.Served[kind] || Own(gk.Group)):
				continue
			}
			u := found[kind]
			if u == nil {
				u = &Unmade{Kind: kind}
				if d != nil {
					u.MRD, u.Provider = d.Name, d.Provider
				}
				found[kind] = u
			}
			if !slices.Contains(u.Compositions, c.Name) {
				u.Compositions = append(u.Compositions, c.Name)
			}
		}
	}
	out := make([]Unmade, 0, len(found))
	for _, u := range found {
		slices.Sort(u.Compositions)
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b Unmade) int { return strings.Compare(a.Kind, b.Kind) })
	return out
}

// Own reports whether group is one of Kubernetes' own, which no CRD
// defines: the core group, a group of one label (apps, batch, policy) or
// one under k8s.io (networking.k8s.io, rbac.authorization.k8s.io).
func Own(group string) bool {
	return !strings.Contains(group, ".") || group == "k8s.io" || strings.HasSuffix(group, ".k8s.io")
}

// Composed are the kinds (Kind.group) the Compositions compose.
func Composed(cs []composition.Composition) map[string]bool {
	out := map[string]bool{}
	for _, c := range cs {
		for _, gk := range c.Composes {
			out[gk.String()] = true
		}
	}
	return out
}

// Unused are in's active MRDs whose kind no Composition composes and has
// no object (Objects, which the caller counted for each of them), by
// name.
func Unused(in Input) []Definition {
	composed := Composed(in.Compositions)
	var out []Definition
	for _, d := range in.Definitions {
		if d.Active() && d.Objects == 0 && !composed[d.Kind] {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Unmatched is an MRAP's activate entry that matches no MRD, and the
// entries, close to it, that would match one.
type Unmatched struct {
	Policy string
	Entry  string
	Near   []string
}

// nearShown is how many close entries an Unmatched suggests.
const nearShown = 3

// UnmatchedEntries are the activate entries of in's policies that match
// no MRD of in (a typo activates nothing), in the policies' order.
func UnmatchedEntries(in Input) []Unmatched {
	var out []Unmatched
	for _, m := range in.Policies {
		for _, entry := range m.Activate {
			if slices.ContainsFunc(in.Definitions, func(d Definition) bool { return Matches(entry, d.Name) }) {
				continue
			}
			out = append(out, Unmatched{Policy: m.Name, Entry: entry, Near: near(entry, in.Definitions)})
		}
	}
	return out
}

// near are the entries that match an MRD and differ from entry only
// slightly: the MRD's name (or, for a pattern *.SUFFIX, *. and the same
// number of the name's last labels) at an edit distance of two or less,
// or with the first label's plural where entry has its singular (or the
// other way round). Sorted, nearShown at most.
func near(entry string, defs []Definition) []string {
	var out []string
	suffix, pattern := strings.CutPrefix(entry, "*.")
	for _, d := range defs {
		cand := d.Name
		if pattern {
			labels := strings.Split(d.Name, ".")
			k := strings.Count(suffix, ".") + 1
			if k >= len(labels) {
				continue
			}
			cand = "*." + strings.Join(labels[len(labels)-k:], ".")
		}
		if cand != entry && !slices.Contains(out, cand) && (within(entry, cand, 2) || sameSingular(entry, cand)) {
			out = append(out, cand)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), nearShown)]
}

// sameSingular: a and b differ only in their first label, one the
// other's plural (bucket, buckets; policy, policies; address, addresses).
func sameSingular(a, b string) bool {
	af, arest, _ := strings.Cut(a, ".")
	bf, brest, _ := strings.Cut(b, ".")
	return arest == brest && af != bf && singular(af) == singular(bf)
}

func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies"):
		return strings.TrimSuffix(s, "ies") + "y"
	case strings.HasSuffix(s, "sses"), strings.HasSuffix(s, "xes"), strings.HasSuffix(s, "ches"), strings.HasSuffix(s, "shes"):
		return strings.TrimSuffix(s, "es")
	}
	return strings.TrimSuffix(s, "s")
}

// within reports whether the edit distance (insertions, deletions,
// substitutions) between a and b is at most n.
func within(a, b string, n int) bool {
	if d := len(a) - len(b); d > n || -d > n {
		return false
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
			best = min(best, cur[j])
		}
		if best > n {
			return false
		}
		prev, cur = cur, prev
	}
	return prev[len(b)] <= n
}
