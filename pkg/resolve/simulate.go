package resolve

import (
	"fmt"
	"slices"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// maxSteps bounds a simulation: each step installs or moves one package.
const maxSteps = 200

// Simulate runs Crossplane's resolver (internal/controller/pkg/resolver,
// the same in v2.3.4 and v2.4.2) over lock, the Lock as a change leaves
// it, and objects, the package objects, until the Lock resolves or
// stalls, then judges each package's dependencies as its revision does
// (internal/controller/pkg/revision/dependency.go).
//
// One step handles the first implied node of the resolver's graph: the
// first dependency, in the Lock's order, with no node (its package is
// not in the Lock), or, with Upgrades, whose node's version a parent's
// constraint excludes. Without Upgrades it is installed: the newest
// complete version its first parent's constraint admits (Choose), or the
// digest it pins, as a package named after the repository's path. With
// Upgrades, a package object of its kind and repository that exists is
// moved instead, to the lowest version at or above its own that every
// parent admits (incomplete versions count), or with Downgrades to the
// highest below; with Upgrades, Lock entries of dependencies no parent
// admits are left out of the graph first. A package installed or moved
// takes its place at the end of the Lock, with its new dependencies.
func Simulate(src Source, s Settings, lock []installed.LockPackage, objects []Object) *Outcome {
	if s.Downgrades {
		s.Upgrades = true
	}
	sim := &simulation{src: src, s: s, objects: slices.Clone(objects)}
	for _, lp := range lock {
		sim.lock = append(sim.lock, sim.entryOf(lp))
	}
	out := &Outcome{Changes: []Change{}}
	for range maxSteps {
		g, stall := sim.graph()
		if stall != nil {
			out.Stall = stall
			break
		}
		if g.first == nil {
			out.Resolves = true
			break
		}
		if !sim.step(g, out) {
			break
		}
	}
	if out.Stall != nil {
		out.Stall.Roots = sim.roots(out.Stall.Constraints)
	}
	if out.Stall == nil && !out.Resolves && out.Unknown == "" {
		out.Unknown = fmt.Sprintf("the resolver did not settle in %d steps", maxSteps)
	}
	out.Unhealthy = sim.health()
	return out
}

type simulation struct {
	src     Source
	s       Settings
	lock    []entry
	objects []Object
}

// entry is a Lock entry: the package (kind/name), its source and
// version, and its dependencies.
type entry struct {
	pkg, kind     string
	repo, version string
	deps          []installed.LockDependency
}

func (sim *simulation) entryOf(lp installed.LockPackage) entry {
	kind := lockKind(lp.Type, lp.Kind)
	e := entry{kind: kind, repo: reference.Repository(lp.Source), version: lp.Version, deps: lp.Dependencies}
	e.pkg = installed.KindName(kind, lp.Name)
	if o := sim.object(kind, e.repo); o != nil {
		e.pkg = installed.KindName(o.Kind, o.Name)
	}
	return e
}

// lockKind is the package kind a Lock entry or dependency names (its type
// or its kind).
func lockKind(typ, kind string) string {
	if kind != "" {
		return kind
	}
	return typ
}

// object is the package object of kind (any, when "") and repo.
func (sim *simulation) object(kind, repo string) *Object {
	for i := range sim.objects {
		o := &sim.objects[i]
		if (kind == "" || o.Kind == kind) && installed.SameRepo(o.Repo, repo) {
			return o
		}
	}
	return nil
}
