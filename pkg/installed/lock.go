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

// ExclusiveDependencies are the repositories that only root needs, directly
// or through other dependencies: uninstalling root with its dependencies
// removes exactly these. A dependency for which stays (when not nil) is
// true is kept, and so is what it needs.
func ExclusiveDependencies(lock []LockPackage, rootRepo string, stays func(repo string) bool) []string {
	bySource := map[string]LockPackage{}
	for _, lp := range lock {
		bySource[normRepo(lp.Source)] = lp
	}
	// Everything reachable from root.
	reach := map[string]bool{}
	var walk func(repo string)
	walk = func(repo string) {
		for _, d := range bySource[normRepo(repo)].Dependencies {
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
		for src, lp := range bySource {
			if src == normRepo(rootRepo) || reach[src] {
				continue
			}
			for _, d := range lp.Dependencies {
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
