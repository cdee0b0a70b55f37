package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// Settings are the flags of Crossplane's core that change what its
// resolver does: --enable-dependency-version-upgrades (Upgrades) and
// --enable-dependency-version-downgrades (Downgrades, which turns on
// Upgrades too).
type Settings struct {
	Upgrades   bool `json:"dependencyUpgrades"`
	Downgrades bool `json:"dependencyDowngrades"`
}

// Source is what a simulation reads of registries: a repository's tags,
// and the kind and dependencies of one of its versions.
type Source interface {
	Tags(repo string) ([]versions.Tag, error)
	Dependencies(ref string) (Known, error)
}

// Object is a package object, as the resolver finds one for a
// dependency: its kind (Provider, Configuration, Function), name,
// repository, and version (the tag or digest of status.resolvedPackage
// when set, else of spec.package).
type Object struct {
	Kind, Name, Repo, Version string
}

// Outcome is what the package manager does after a change, step by step
// as its resolver goes, until the Lock resolves or stalls.
type Outcome struct {
	// Changes are the packages the resolver installs, upgrades or
	// downgrades, in its order.
	Changes []Change `json:"changes"`
	// Resolves: the Lock's Resolved condition ends True. Stall is where
	// it stops instead: the Lock is Resolved=False and no package in the
	// cluster gets a dependency installed or moved until that is fixed.
	Resolves bool   `json:"resolves"`
	Stall    *Stall `json:"stall,omitempty"`
	// Unhealthy are the packages whose revision the dependency check
	// fails when the resolver is done, in the Lock's order.
	Unhealthy []Unhealthy `json:"unhealthy,omitempty"`
	// Unknown says why the simulation stopped short: a package it could
	// not read. What it found until then stands.
	Unknown string `json:"unknown,omitempty"`
}

// Change is a package the resolver installs or moves.
type Change struct {
	// Package is the package object, kind/name (a package it installs is
	// named after the repository's path).
	Package    string `json:"package"`
	Repository string `json:"repository"`
	// Action is install, upgrade or downgrade.
	Action string `json:"action"`
	From   string `json:"from,omitempty"`
	To     string `json:"to"`
	// Reason says why that version: the resolver's rule, in a phrase.
	Reason      string          `json:"reason"`
	Constraints []versions.Hold `json:"constraints"`
	// Definitions are what the change brings and drops of the cluster's
	// API, when the plan read the packages.
	Definitions *Definitions `json:"definitions,omitempty"`
}

// Definitions are the CRDs (of CRDs, MRDs, XRDs and claims) a change
// brings, and those it drops; Err says why they could not be read.
type Definitions struct {
	Brings []string `json:"brings,omitempty"`
	Drops  []string `json:"drops,omitempty"`
	Err    string   `json:"error,omitempty"`
}

// Stall is the dependency the resolver stops at.
type Stall struct {
	Repository  string          `json:"repository"`
	Constraints []versions.Hold `json:"constraints,omitempty"`
	// Message is why, in the resolver's words where it has them.
	Message string `json:"message"`
	// Newest is the newest version the repository has, when no version
	// satisfies the constraints ("" when it has none, or it is unknown).
	Newest string `json:"newest,omitempty"`
	// Roots are the packages above the constraints' owners that nothing
	// depends on: those a user installs, and moves to end the stall.
	Roots []string `json:"roots,omitempty"`
}

// Unhealthy is a package whose revision's dependency check fails.
type Unhealthy struct {
	Package string `json:"package"`
	Message string `json:"message"`
	// Dependency is the installed dependency (kind/name) whose version
	// the package's constraint excludes, and Heal the version to move it
	// to that every constraint on it admits (the lowest at or above what
	// runs, else the highest below), or "" when none does.
	Dependency string `json:"dependency,omitempty"`
	Heal       string `json:"heal,omitempty"`
}

// IsUnhealthy tells whether the outcome leaves pkg (kind/name) unhealthy.
func (o *Outcome) IsUnhealthy(pkg string) bool {
	return slices.ContainsFunc(o.Unhealthy, func(u Unhealthy) bool { return u.Package == pkg })
}

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

// step installs or moves the first implied dependency; false when the
// resolver stops there (out says why).
func (sim *simulation) step(g *graph, out *Outcome) bool {
	d := g.dep
	repo := reference.Repository(d.Package)
	kind := lockKind(d.Type, d.Kind)
	holds := dedupe(g.first.parents)
	var obj *Object
	if sim.s.Upgrades {
		obj = sim.object(kind, repo)
	}
	if obj == nil {
		return sim.install(repo, kind, d.Constraints, holds, out)
	}
	return sim.move(obj, holds, out)
}

func dedupe(holds []versions.Hold) []versions.Hold {
	var out []versions.Hold
	for _, h := range holds {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// install creates the package of a dependency nothing runs, at the
// version its (first parent's) constraint gives.
func (sim *simulation) install(repo, kind, constraint string, holds []versions.Hold, out *Outcome) bool {
	version, reason, stall, unread := sim.installVersion(repo, constraint)
	if stops(out, holds, stall, unread) {
		return false
	}
	name := installName(repo)
	if o := sim.objectNamed(kind, name); o != nil {
		// The resolver's create finds it there and does nothing more.
		out.Stall = &Stall{Repository: repo, Constraints: holds,
			Message: fmt.Sprintf("the package manager would create %s for %s, but %s exists for %s: the dependency is never installed", installed.KindName(kind, name), repo, installed.KindName(kind, name), o.Repo)}
		return false
	}
	k, err := sim.src.Dependencies(Ref(repo, version))
	if err != nil {
		out.Unknown = fmt.Sprintf("%s cannot be read: %v", Ref(repo, version), err)
		return false
	}
	pkg := installed.KindName(kind, name)
	out.Changes = append(out.Changes, Change{Package: pkg, Repository: repo, Action: "install", To: version, Reason: reason, Constraints: holds})
	sim.objects = append(sim.objects, Object{Kind: kind, Name: name, Repo: repo, Version: version})
	sim.lock = append(sim.lock, entry{pkg: pkg, kind: kind, repo: repo, version: version, deps: lockDeps(k)})
	return true
}

// stops records in out why the resolver stops at a dependency under
// holds (a stall), or why the plan cannot follow it (unread), and tells
// whether it does.
func stops(out *Outcome, holds []versions.Hold, stall *Stall, unread error) bool {
	switch {
	case unread != nil:
		out.Unknown = unread.Error()
	case stall != nil:
		stall.Constraints = holds
		out.Stall = stall
	default:
		return false
	}
	return true
}

// installName is the name the resolver gives a package it installs: the
// repository's path as a DNS label (NewPackage).
func installName(repo string) string {
	r, err := name.NewRepository(repo)
	if err != nil {
		return reference.DNSLabel(repo)
	}
	return reference.DNSLabel(r.RepositoryStr())
}

func (sim *simulation) objectNamed(kind, name string) *Object {
	for i := range sim.objects {
		if sim.objects[i].Kind == kind && sim.objects[i].Name == name {
			return &sim.objects[i]
		}
	}
	return nil
}

// installVersion is findDependencyVersionToInstall: the digest a
// constraint pins, else the newest complete version it admits.
// A repository that does not exist stalls the resolver; one whose tags
// the plan cannot list (unread) leaves the outcome unknown: the package
// manager may reach what the plan cannot.
func (sim *simulation) installVersion(repo, constraint string) (version, reason string, stall *Stall, unread error) {
	if IsDigest(constraint) {
		return constraint, "the digest its dependents pin", nil, nil
	}
	if !IsRange(constraint) {
		_, err := semver.NewConstraint(constraint)
		return "", "", &Stall{Repository: repo, Message: fmt.Sprintf("cannot resolve package dependencies: invalid dependency version constraint %q: %v", constraint, err)}, nil
	}
	tags, stall, unread := sim.tags(repo)
	if stall != nil || unread != nil {
		return "", "", stall, unread
	}
	v, err := Choose(tags, []string{constraint})
	if err != nil {
		return "", "", &Stall{Repository: repo, Newest: newest(tags),
			Message: fmt.Sprintf("cannot resolve package dependencies: no valid version for %s with constraints %s", repo, constraint)}, nil
	}
	return v, fmt.Sprintf("the newest of its tags that satisfy %s", constraint), nil, nil
}

// tags are repo's tags; a stall when the repository does not exist, an
// error when they could not be listed.
func (sim *simulation) tags(repo string) ([]versions.Tag, *Stall, error) {
	tags, err := sim.src.Tags(repo)
	switch {
	case source.NotFound(err):
		return nil, &Stall{Repository: repo, Message: fmt.Sprintf("cannot fetch package tags of %s: it does not exist (%v)", repo, err)}, nil
	case err != nil:
		return nil, nil, fmt.Errorf("the versions of %s could not be listed: %v", repo, err)
	}
	return tags, nil, nil
}

// newest is the newest complete version among tags, or "".
func newest(tags []versions.Tag) string {
	for _, t := range tags {
		if Complete(t) && !t.Prerelease() {
			return t.Name
		}
	}
	return ""
}

// move is the upgrade (or downgrade) of a dependency's package to the
// version findDependencyVersionToUpdate gives its parents' constraints.
func (sim *simulation) move(obj *Object, holds []versions.Hold, out *Outcome) bool {
	version, reason, stall, unread := sim.updateVersion(obj, holds)
	if stops(out, holds, stall, unread) {
		return false
	}
	if version == obj.Version {
		out.Stall = &Stall{Repository: obj.Repo, Constraints: holds,
			Message: fmt.Sprintf("the package manager keeps %s at %s, which its Lock entry does not match: it never resolves", installed.KindName(obj.Kind, obj.Name), version)}
		return false
	}
	ref := Ref(obj.Repo, version)
	k, err := sim.src.Dependencies(ref)
	if err != nil {
		out.Unknown = fmt.Sprintf("%s cannot be read: %v", ref, err)
		return false
	}
	action := "upgrade"
	if fv, err := semver.NewVersion(obj.Version); err == nil {
		if tv, err := semver.NewVersion(version); err == nil && tv.LessThan(fv) {
			action = "downgrade"
		}
	}
	pkg := installed.KindName(obj.Kind, obj.Name)
	out.Changes = append(out.Changes, Change{Package: pkg, Repository: obj.Repo, Action: action, From: obj.Version, To: version, Reason: reason, Constraints: holds})
	obj.Version = version
	sim.lock = slices.DeleteFunc(sim.lock, func(e entry) bool { return installed.SameRepo(e.repo, obj.Repo) })
	sim.lock = append(sim.lock, entry{pkg: pkg, kind: obj.Kind, repo: obj.Repo, version: version, deps: lockDeps(k)})
	return true
}

// updateVersion is findDependencyVersionToUpdate.
func (sim *simulation) updateVersion(obj *Object, holds []versions.Hold) (version, reason string, stall *Stall, unread error) {
	cs := make([]string, len(holds))
	for i, h := range holds {
		cs[i] = h.Constraint
	}
	digest, err := pinned(cs)
	if err != nil {
		return "", "", &Stall{Repository: obj.Repo, Message: "cannot find a valid version to upgrade: " + err.Error()}, nil
	}
	if digest != "" {
		return digest, "the digest every dependent pins", nil, nil
	}
	current, err := semver.NewVersion(obj.Version)
	if err != nil {
		return "", "", &Stall{Repository: obj.Repo, Message: fmt.Sprintf("the package manager cannot move %s from %s, which is no semantic version (it fails on it)", installed.KindName(obj.Kind, obj.Name), obj.Version)}, nil
	}
	parsed, err := parse(cs)
	if err != nil {
		return "", "", &Stall{Repository: obj.Repo, Message: "cannot find a valid version to upgrade: " + err.Error()}, nil
	}
	tags, stall, unread := sim.tags(obj.Repo)
	if stall != nil || unread != nil {
		return "", "", stall, unread
	}
	vs := make([]*semver.Version, 0, len(tags))
	for _, t := range tags {
		if t.Version != nil {
			vs = append(vs, t.Version)
		}
	}
	slices.SortStableFunc(vs, func(a, b *semver.Version) int { return a.Compare(b) })
	var below *semver.Version
	for _, v := range vs {
		valid := !slices.ContainsFunc(parsed, func(c *semver.Constraints) bool { return !c.Check(v) })
		if !valid {
			continue
		}
		if !v.LessThan(current) {
			return v.Original(), fmt.Sprintf("the lowest version at or above %s that every dependent accepts", obj.Version), nil, nil
		}
		if sim.s.Downgrades {
			below = v
		}
	}
	if below != nil {
		return below.Original(), fmt.Sprintf("the highest version below %s that every dependent accepts (no version at or above it does)", obj.Version), nil, nil
	}
	return "", "", &Stall{Repository: obj.Repo, Newest: newest(tags),
		Message: fmt.Sprintf("cannot find a valid version to upgrade: dependency %s does not have a valid version to upgrade that satisfies all constraints: %s", obj.Repo, strings.Join(cs, ", "))}, nil
}

func lockDeps(k Known) []installed.LockDependency {
	var out []installed.LockDependency
	for _, d := range k.Deps {
		kind := d.Kind
		if kind != "" {
			kind = strings.ToUpper(kind[:1]) + kind[1:]
		}
		out = append(out, installed.LockDependency{Package: d.Package, Constraints: d.Version, Type: kind})
	}
	return out
}

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
