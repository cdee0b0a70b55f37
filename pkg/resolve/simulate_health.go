package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// health is each Lock entry's dependency check as its revision makes it
// (over the whole Lock, without upgrades' pruning): every dependency,
// direct or not, has an entry, and each direct one's version satisfies
// its constraint.
func (sim *simulation) health() []Unhealthy {
	byRepo := map[string]*entry{}
	for i := range sim.lock {
		if _, ok := byRepo[sim.lock[i].repo]; !ok {
			byRepo[sim.lock[i].repo] = &sim.lock[i]
		}
	}
	var out []Unhealthy
	for _, e := range sim.lock {
		if len(e.deps) == 0 {
			continue
		}
		if missing := missingBelow(e, byRepo); len(missing) > 0 {
			out = append(out, Unhealthy{Package: e.pkg, Message: "missing dependencies: " + strings.Join(missing, ", ")})
			continue
		}
		var bad []string
		var first *entry
		for _, d := range e.deps {
			have := byRepo[reference.Repository(d.Package)]
			ok := have.version == d.Constraints
			if !IsDigest(d.Constraints) {
				sat, err := versions.Satisfies(d.Constraints, have.version)
				ok = err == nil && sat
			}
			if !ok {
				bad = append(bad, fmt.Sprintf("existing package %s@%s is incompatible with constraint %s", have.repo, have.version, strings.TrimSpace(d.Constraints)))
				if first == nil {
					first = have
				}
			}
		}
		if len(bad) > 0 {
			u := Unhealthy{Package: e.pkg, Message: "incompatible dependencies: " + strings.Join(bad, "; "), Dependency: first.pkg}
			u.Heal = sim.heal(first)
			out = append(out, u)
		}
	}
	return out
}

// missingBelow are the repositories among e's dependencies, direct or
// not, that no Lock entry stands for.
func missingBelow(e entry, byRepo map[string]*entry) []string {
	var missing []string
	seen := map[string]bool{}
	queue := slices.Clone(e.deps)
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		r := reference.Repository(d.Package)
		if seen[r] {
			continue
		}
		seen[r] = true
		have, ok := byRepo[r]
		if !ok {
			missing = append(missing, r)
			continue
		}
		queue = append(queue, have.deps...)
	}
	return missing
}

// heal is the version of the dependency e that every constraint on it in
// the Lock admits, chosen as an upgrade with downgrades would choose it;
// "" when none does (or its versions cannot be listed).
func (sim *simulation) heal(e *entry) string {
	var holds []versions.Hold
	for _, other := range sim.lock {
		for _, d := range other.deps {
			if installed.SameRepo(d.Package, e.repo) {
				holds = append(holds, versions.Hold{By: other.pkg, Constraint: d.Constraints})
			}
		}
	}
	both := &simulation{src: sim.src, s: Settings{Upgrades: true, Downgrades: true}}
	v, _, stall, unread := both.updateVersion(&Object{Kind: e.kind, Repo: e.repo, Version: e.version}, holds)
	if stall != nil || unread != nil {
		return ""
	}
	return v
}

// roots are the packages, above the owners of holds, that no Lock entry
// depends on, in the Lock's order.
func (sim *simulation) roots(holds []versions.Hold) []string {
	byPkg := map[string]entry{}
	for _, e := range sim.lock {
		byPkg[e.pkg] = e
	}
	var out []string
	seen := map[string]bool{}
	queue := make([]string, 0, len(holds))
	for _, h := range holds {
		queue = append(queue, h.By)
	}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if seen[pkg] {
			continue
		}
		seen[pkg] = true
		e, ok := byPkg[pkg]
		if !ok {
			continue
		}
		var parents []string
		for _, other := range sim.lock {
			if slices.ContainsFunc(other.deps, func(d installed.LockDependency) bool { return installed.SameRepo(d.Package, e.repo) }) {
				parents = append(parents, other.pkg)
			}
		}
		if len(parents) == 0 && !slices.Contains(out, pkg) {
			out = append(out, pkg)
		}
		queue = append(queue, parents...)
	}
	return out
}
