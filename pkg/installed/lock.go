package installed

import (
	"slices"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// Dependents are the Lock's packages that depend on the repository repo
// (a package reference without tag or digest).
func Dependents(lock []LockPackage, repo string) []LockPackage {
	var out []LockPackage
	for _, lp := range lock {
		if slices.ContainsFunc(lp.Dependencies, func(d LockDependency) bool { return SameRepo(d.Package, repo) }) {
			out = append(out, lp)
		}
	}
	return out
}

// LockEntry is the Lock's entry for a package's current revision.
func LockEntry(lock []LockPackage, p *Package) (LockPackage, bool) {
	for _, lp := range lock {
		if lp.Name == p.CurrentRevision || (p.CurrentRevision == "" && SameRepo(lp.Source, reference.Repository(p.Source))) {
			return lp, true
		}
	}
	return LockPackage{}, false
}

// LockNodes are the Lock's entries grouped by source: the nodes of
// Crossplane's dependency graph, which names a node by its entry's source
// and refuses a second node of one source (internal/dag, MapDag.Init).
type LockNodes struct {
	// Sources are the entries' sources, in the order the Lock first
	// names each.
	Sources  []string
	lock     []LockPackage
	bySource map[string][]LockPackage
}

// NodesBySource groups the Lock's entries by source.
func NodesBySource(lock []LockPackage) LockNodes {
	n := LockNodes{lock: lock, bySource: map[string][]LockPackage{}}
	for _, lp := range lock {
		if n.bySource[lp.Source] == nil {
			n.Sources = append(n.Sources, lp.Source)
		}
		n.bySource[lp.Source] = append(n.bySource[lp.Source], lp)
	}
	return n
}

// Of are the entries of the source src, in the Lock's order.
func (n LockNodes) Of(src string) []LockPackage { return n.bySource[src] }

// Duplicated are the sources with more than one entry, in Sources' order.
func (n LockNodes) Duplicated() []string {
	var out []string
	for _, src := range n.Sources {
		if len(n.bySource[src]) > 1 {
			out = append(out, src)
		}
	}
	return out
}

// Repo are the entries whose source is the repository repo, named with or
// without a tag or digest (SameRepo), in the Lock's order.
func (n LockNodes) Repo(repo string) []LockPackage {
	var out []LockPackage
	for _, lp := range n.lock {
		if SameRepo(lp.Source, repo) {
			out = append(out, lp)
		}
	}
	return out
}

// ExclusiveDependencies are the repositories that only root needs, directly
// or through other dependencies: uninstalling root with its dependencies
// removes exactly these. A dependency for which stays (when not nil) is
// true is kept, and so is what it needs. A repository's dependencies are
// those of its last entry in the Lock.
func ExclusiveDependencies(lock []LockPackage, rootRepo string, stays func(repo string) bool) []string {
	nodes := NodesBySource(lock)
	entry := func(repo string) LockPackage {
		es := nodes.Repo(repo)
		if len(es) == 0 {
			return LockPackage{}
		}
		return es[len(es)-1]
	}
	// Everything reachable from root.
	reach := map[string]bool{}
	var walk func(repo string)
	walk = func(repo string) {
		for _, d := range entry(repo).Dependencies {
			r := normRepo(d.Package)
			if !reach[r] {
				reach[r] = true
				walk(r)
			}
		}
	}
	walk(rootRepo)
	for r := range reach {
		if stays != nil && stays(r) {
			delete(reach, r)
		}
	}
	// Keep what any package that stays still needs; a dependency kept this
	// way stays too, and so keeps its own: repeat until nothing changes.
	for changed := true; changed; {
		changed = false
		for _, src := range nodes.Sources {
			if SameRepo(src, rootRepo) || reach[normRepo(src)] {
				continue
			}
			for _, d := range entry(src).Dependencies {
				if r := normRepo(d.Package); reach[r] {
					delete(reach, r)
					changed = true
				}
			}
		}
	}
	var out []string
	for r := range reach {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

func SameRepo(a, b string) bool { return normRepo(a) == normRepo(b) }

// normRepo compares repositories the way references resolve: the same
// image named with or without a tag or digest is the same repository.
func normRepo(r string) string { return reference.Repository(r) }
