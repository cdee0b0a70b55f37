package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// The messages Crossplane's package manager writes that doctor reads
// (internal/controller/pkg/revision and .../resolver): a revision that
// cannot resolve its dependencies says errResolveDeps, and when the cause
// is the Lock's graph as a whole, errInitDAG after it.
const (
	errResolveDeps = "cannot resolve package dependencies"
	errInitDAG     = "cannot initialize dependency graph from the packages in the lock"
)

// unresolved is the reason chain of an unresolvable dependency: the
// Lock's Resolved=False message (the resolver's), each revision whose
// own dependencies fail (dependency.go: missing or incompatible
// dependencies, a digest that does not match), and for every source those
// messages name, each installed package whose constraint on it takes part
// and what runs it.
func (s *State) unresolved() []findings.Finding {
	var out []findings.Finding
	if c := s.lockCond; c != nil {
		msg := strings.TrimPrefix(c.Message, "Error occurred during dependency resolution ")
		f := findings.Finding{Rule: findings.RuleDependencyUnresolved, Severity: findings.Blocking, Object: "lock/lock",
			Message: fmt.Sprintf("the Lock is not resolved (Resolved=False, %s: %s): Crossplane resolves no package's dependencies until it is%s", c.Reason, msg, s.chain(msg))}
		out = append(out, f)
	}
	for _, r := range s.revs {
		c := r.Condition("RevisionHealthy")
		if c == nil || c.Status != "False" || !strings.Contains(c.Message, errResolveDeps) || strings.Contains(c.Message, errInitDAG) {
			continue // the Lock's own failure is said once, above
		}
		p, _ := s.Owner(r.Name)
		if p == nil || p.CurrentRevision != r.Name {
			continue
		}
		out = append(out, findings.Finding{Rule: findings.RuleDependencyUnresolved, Severity: findings.Blocking, Object: p.KindName(),
			Message: fmt.Sprintf("%s (revision %s) cannot resolve its dependencies: %s%s", p.KindName(), r.Name, c.Message, s.chain(c.Message))})
	}
	return out
}

// chain names, for each Lock source msg mentions, the packages whose
// constraints on it take part and what runs it.
func (s *State) chain(msg string) string {
	var links []string
	for _, src := range s.mentioned(msg) {
		var needs []string
		for _, lp := range installed.Dependents(s.lock, src) {
			for _, d := range lp.Dependencies {
				if installed.SameRepo(d.Package, src) {
					needs = append(needs, fmt.Sprintf("%s requires %s", s.entryOwner(lp), cmp.Or(strings.TrimSpace(d.Constraints), "any version")))
				}
			}
		}
		runs := "is not installed"
		if ps := s.packagesOf(src); len(ps) > 0 {
			runs = fmt.Sprintf("has no Lock entry, though %s install(s) it (paused, inactive or without a revision: see package-paused, inactive-revision, package-no-revision)", strings.Join(ps, ", "))
		}
		if lp, ok := s.entryFor(src); ok {
			runs = fmt.Sprintf("runs %s as %s", lp.Version, s.entryOwner(lp))
		}
		link := fmt.Sprintf("%s %s", src, runs)
		if len(needs) > 0 {
			link += "; " + strings.Join(needs, ", ")
		}
		links = append(links, link)
	}
	if len(links) == 0 {
		return ""
	}
	return ". Taking part: " + strings.Join(links, ". ")
}

// packagesOf names the packages of src, as kind/name.
func (s *State) packagesOf(src string) []string {
	var out []string
	for _, p := range s.pkgs {
		if installed.SameRepo(p.Source, src) {
			out = append(out, p.KindName())
		}
	}
	return out
}

// mentioned are the sources of the Lock (entries and dependencies) that
// msg names, in the order it names them.
func (s *State) mentioned(msg string) []string {
	var srcs []string
	add := func(src string) {
		if src != "" && strings.Contains(msg, src) && !slices.Contains(srcs, src) {
			srcs = append(srcs, src)
		}
	}
	for _, lp := range s.lock {
		add(lp.Source)
		for _, d := range lp.Dependencies {
			add(d.Package)
		}
	}
	// A source that is part of another (org/provider in
	// org/provider-family) is not mentioned by the longer one alone.
	at := map[string]int{}
	for _, a := range srcs {
		at[a] = strings.Index(blankLonger(msg, a, srcs), a)
	}
	srcs = slices.DeleteFunc(srcs, func(a string) bool { return at[a] < 0 })
	slices.SortFunc(srcs, func(a, b string) int { return at[a] - at[b] })
	return srcs
}

// blankLonger is msg with every source of srcs that contains a (but is
// not a) blanked out, its length kept.
func blankLonger(msg, a string, srcs []string) string {
	for _, b := range srcs {
		if b != a && strings.Contains(b, a) {
			msg = strings.ReplaceAll(msg, b, strings.Repeat(" ", len(b)))
		}
	}
	return msg
}

// entryFor is the Lock entry for src.
func (s *State) entryFor(src string) (installed.LockPackage, bool) {
	for _, lp := range s.lock {
		if installed.SameRepo(lp.Source, src) {
			return lp, true
		}
	}
	return installed.LockPackage{}, false
}
