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
