// Package activation plans and checks Crossplane v2's activation of managed
// resource kinds: which ManagedResourceDefinitions (MRDs) the cluster's
// Compositions and managed resources need, the smallest
// ManagedResourceActivationPolicy (MRAP) that activates exactly those, and
// what a policy misses or names in vain. It is pure: it reads what the
// caller read, never a cluster.
package activation

import (
	"path"
	"slices"
	"strings"
)

// Matches reports whether an MRAP's activate entry matches the MRD named
// name, as Crossplane matches it: a shell pattern over the whole name
// (filepath.Match, whose * does not cross a /, which no MRD name holds).
func Matches(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

// Smallest is the shortest list of activate entries that matches every
// name of needed and no other name of all (the MRDs there are): a pattern
// *.SUFFIX, at a dot of a needed MRD's group, where it matches two needed
// names or more and nothing else, the broadest such; else the name
// itself. Sorted, patterns and names alike.
func Smallest(needed, all []string) []string {
	need := map[string]bool{}
	for _, n := range needed {
		need[n] = true
	}
	var out []string
	covered := map[string]bool{}
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for k := range need {
			if !yield(k) {
				return
			}
		}
	}) {
		if covered[n] {
			continue
		}
		entry, matched := n, []string{n}
		for _, p := range suffixPatterns(n) {
			m, clean := matchOnly(p, all, need)
			if !clean {
				break // a broader pattern matches all this one does
			}
			if len(m) >= 2 {
				entry, matched = p, m
			}
		}
		out = append(out, entry)
		for _, m := range matched {
			covered[m] = true
		}
	}
	// A pattern met earlier may cover one chosen later, or a name listed
	// before it: keep only what no other entry covers.
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(slices.Clone(out), func(e string) bool {
		return slices.ContainsFunc(out, func(o string) bool {
			return o != e && strings.HasPrefix(o, "*.") && Matches(o, strings.TrimPrefix(e, "*"))
		})
	})
}

// suffixPatterns are the patterns *.SUFFIX for each suffix of name's group
// of two labels or more, narrowest first: buckets.s3.aws.example.io gives
// *.s3.aws.example.io, *.aws.example.io, *.example.io.
func suffixPatterns(name string) []string {
	_, group, ok := strings.Cut(name, ".")
	if !ok {
		return nil
	}
	labels := strings.Split(group, ".")
	var out []string
	for i := 0; i+2 <= len(labels); i++ {
		out = append(out, "*."+strings.Join(labels[i:], "."))
	}
	return out
}

// matchOnly are the names of all that p matches, and whether each is
// needed.
func matchOnly(p string, all []string, need map[string]bool) ([]string, bool) {
	var m []string
	for _, n := range all {
		if Matches(p, n) {
			if !need[n] {
				return nil, false
			}
			m = append(m, n)
		}
	}
	return m, true
}
