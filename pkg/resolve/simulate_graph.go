package resolve

import (
	"fmt"
	"slices"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// node is a node of the resolver's graph: a Lock entry, or a dependency
// no entry stands for; parents are the constraints on it.
type node struct {
	e       *entry
	dep     installed.LockDependency
	parents []versions.Hold
}

// constraint is what the graph compares a new edge with: an entry's
// version, a dependency's constraint.
func (n *node) constraint() string {
	if n.e != nil {
		return n.e.version
	}
	return n.dep.Constraints
}

// graph is the resolver's graph of the Lock and its first implied
// dependency.
type graph struct {
	nodes map[string]*node // by repository
	first *node            // the node of the first implied dependency
	dep   installed.LockDependency
}

// graph builds the resolver's graph: a stall when it cannot (two entries
// of one source, a cycle).
func (sim *simulation) graph() (*graph, *Stall) {
	entries := sim.lock
	if sim.s.Upgrades {
		entries = pruneOutdated(entries)
	}
	g := &graph{nodes: map[string]*node{}}
	for i := range entries {
		e := &entries[i]
		if other, ok := g.nodes[e.repo]; ok {
			return nil, &Stall{Repository: e.repo, Message: fmt.Sprintf("cannot initialize dependency graph: node %s already exists (the Lock has an entry of it for %s and one for %s; kubectl xpkg doctor tells which is stale, and --fix removes it)", e.repo, other.e.pkg, e.pkg)}
		}
		g.nodes[e.repo] = &node{e: e}
	}
	for i := range entries {
		e := &entries[i]
		for _, d := range e.deps {
			repo := reference.Repository(d.Package)
			n, ok := g.nodes[repo]
			implied := !ok
			if !ok {
				n = &node{dep: d}
				g.nodes[repo] = n
			} else if sim.s.Upgrades && !validConstraint(n.constraint(), d.Constraints) {
				implied = true
			}
			n.parents = append(n.parents, versions.Hold{By: e.pkg, Constraint: d.Constraints})
			if implied && g.first == nil {
				g.first, g.dep = n, d
			}
		}
	}
	if cycle := g.cycle(); cycle != "" {
		return nil, &Stall{Repository: cycle, Message: "cannot sort the dependency graph: detected cycle on: " + cycle}
	}
	return g, nil
}

// cycle is a repository on a dependency cycle, or "".
func (g *graph) cycle() string {
	visited, stack := map[string]bool{}, map[string]bool{}
	var visit func(repo string) string
	visit = func(repo string) string {
		visited[repo], stack[repo] = true, true
		if n := g.nodes[repo]; n != nil && n.e != nil {
			for _, d := range n.e.deps {
				r := reference.Repository(d.Package)
				if stack[r] {
					return r
				}
				if !visited[r] {
					if c := visit(r); c != "" {
						return c
					}
				}
			}
		}
		stack[repo] = false
		return ""
	}
	for _, repo := range sortedKeys(g.nodes) {
		if !visited[repo] {
			if c := visit(repo); c != "" {
				return c
			}
		}
	}
	return ""
}

func sortedKeys(m map[string]*node) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// validConstraint is the upgrading graph's check of an edge: the same
// constraint, or a version the wanted range admits.
func validConstraint(have, want string) bool {
	if have == want {
		return true
	}
	ok, err := versions.Satisfies(want, have)
	return err == nil && ok
}

// pruneOutdated leaves out the entries of dependencies that no
// constraint on them admits (pruneOutdatedDependencies).
func pruneOutdated(entries []entry) []entry {
	constraints := map[string][]string{}
	for _, e := range entries {
		for _, d := range e.deps {
			r := reference.Repository(d.Package)
			constraints[r] = append(constraints[r], d.Constraints)
		}
	}
	var out []entry
	for _, e := range entries {
		cs, dep := constraints[e.repo]
		if !dep || matchesAny(e.version, cs) {
			out = append(out, e)
		}
	}
	return out
}

func matchesAny(version string, constraints []string) bool {
	if IsDigest(version) {
		return slices.Contains(constraints, version)
	}
	for _, c := range constraints {
		if ok, err := versions.Satisfies(c, version); err == nil && ok {
			return true
		}
	}
	return false
}
