package action

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// MirrorPackage is one package of a mirror's closure: the repository as
// the packages name it, the version the resolver would install and what
// constrains it.
type MirrorPackage struct {
	// Package is the repository, as the references name it.
	Package string `json:"package"`
	// Kind is Provider, Configuration or Function (from the package's
	// meta object; "" when it was not read, e.g. from a layout).
	Kind string `json:"kind,omitempty"`
	// Version is the tag chosen, or the digest a dependency pins.
	Version string `json:"version"`
	// Digest is the image's (the index's, for a multi-platform package).
	Digest string `json:"digest"`
	// Root is set for a package named on the command line (or installed,
	// with --from-cluster).
	Root bool `json:"root,omitempty"`
	// ConstrainedBy are the dependents' constraints on it.
	ConstrainedBy []versions.Hold `json:"constrainedBy,omitempty"`
	// Destination is where it is copied to ("" for a layout).
	Destination string `json:"destination,omitempty"`
	// Platforms are those of its index (after a copy).
	Platforms []string `json:"platforms,omitempty"`
}

// Ref is the package's reference: repository:tag, or @digest when a
// digest pins it.
func (p *MirrorPackage) Ref() string { return versionRef(p.Package, p.Version) }

func versionRef(repo, version string) string {
	if strings.HasPrefix(version, "sha256:") {
		return repo + "@" + version
	}
	return repo + ":" + version
}

// maxMirrorRounds bounds the resolution: a round that changes a choice
// may bring new constraints, and the set settles when none changes.
const maxMirrorRounds = 16

// mirrorResolver resolves a closure as Crossplane's resolver installs
// it: breadth-first from the roots, a semver range to the newest tag of
// the repository it admits (tags that are no complete semantic version
// skipped, as v2.4 skips them), a digest to that digest; unlike one
// install it takes every constraint the set puts on a repository, since
// a mirror must hold the version every dependent accepts. Each
// repository's tags are listed once, each version's digest and meta
// object read once.
type mirrorResolver struct {
	ctx     context.Context
	cl      *closure
	digests map[string]digestRead // by reference
	// known are packages whose dependencies are known without reading
	// them (the Lock records them), by reference.
	known map[string]knownDeps
}

type knownDeps struct {
	kind string
	deps []xpkg.Dependency
}

type digestRead struct {
	digest string
	err    error
}

func newMirrorResolver(ctx context.Context, reg *Registry, limits xpkg.Limits) *mirrorResolver {
	return &mirrorResolver{ctx: ctx, cl: newClosure(ctx, reg, nil, limits), digests: map[string]digestRead{}, known: map[string]knownDeps{}}
}

// walked is one round's closure: each repository met, in breadth-first
// order, the version it got and the constraints on it.
type walked struct {
	order   []string
	version map[string]string
	holds   map[string][]versions.Hold
	kind    map[string]string
}

func (w *walked) add(repo, version string) {
	w.order = append(w.order, repo)
	w.version[repo] = version
}

// resolve returns the closure of roots (repository → version), roots
// first, then breadth-first.
func (m *mirrorResolver) resolve(roots []MirrorPackage) ([]*MirrorPackage, error) {
	fixed := map[string]string{}
	for _, r := range roots {
		if v, ok := fixed[r.Package]; ok && v != r.Version {
			return nil, fmt.Errorf("%s is named at two versions, %s and %s: the package manager runs one version of a repository; mirror them in two runs", r.Package, v, r.Version)
		}
		fixed[r.Package] = r.Version
	}
	choice := map[string]string{}
	for range maxMirrorRounds {
		w, err := m.walk(roots, fixed, choice)
		if err != nil {
			return nil, err
		}
		next, err := m.settle(w, fixed)
		if err != nil {
			return nil, err
		}
		if maps.Equal(next, choice) {
			return m.packages(w, fixed)
		}
		choice = next
	}
	return nil, fmt.Errorf("the dependency versions did not settle in %d rounds: each choice brings constraints that change another; pin the dependencies' versions in the roots", maxMirrorRounds)
}

// walk goes breadth-first from the roots; a repository met for the
// first time takes its root version, its choice from the last round, or
// the newest version the constraint that met it admits.
func (m *mirrorResolver) walk(roots []MirrorPackage, fixed, choice map[string]string) (*walked, error) {
	w := &walked{version: map[string]string{}, holds: map[string][]versions.Hold{}, kind: map[string]string{}}
	var queue []string
	for _, r := range roots {
		if _, ok := w.version[r.Package]; !ok {
			w.add(r.Package, r.Version)
			queue = append(queue, r.Package)
		}
	}
	for len(queue) > 0 {
		repo := queue[0]
		queue = queue[1:]
		ref := versionRef(repo, w.version[repo])
		kd, err := m.dependencies(ref)
		if err != nil {
			return nil, err
		}
		w.kind[repo] = kd.kind
		for _, d := range kd.deps {
			dep := reference.Repository(d.Package)
			w.holds[dep] = append(w.holds[dep], versions.Hold{By: ref, Constraint: d.Version})
			if _, seen := w.version[dep]; seen {
				continue
			}
			v, ok := fixed[dep]
			if !ok {
				v, ok = choice[dep]
			}
			if !ok {
				if v, err = m.choose(dep, w.holds[dep]); err != nil {
					return nil, err
				}
			}
			w.add(dep, v)
			queue = append(queue, dep)
		}
	}
	return w, nil
}

// settle chooses again, with every constraint the round met, the
// version of each dependency; a root's version must satisfy them all.
func (m *mirrorResolver) settle(w *walked, fixed map[string]string) (map[string]string, error) {
	next := map[string]string{}
	for _, repo := range w.order {
		if v, ok := fixed[repo]; ok {
			if err := rootAdmitted(repo, v, w.holds[repo]); err != nil {
				return nil, err
			}
			continue
		}
		v, err := m.choose(repo, w.holds[repo])
		if err != nil {
			return nil, err
		}
		next[repo] = v
	}
	return next, nil
}

// rootAdmitted: a package named at a version, which a dependent's
// constraint excludes, is a conflict the mirror cannot settle.
func rootAdmitted(repo, version string, holds []versions.Hold) error {
	for _, h := range holds {
		switch {
		case strings.HasPrefix(h.Constraint, "sha256:"), strings.HasPrefix(version, "sha256:"):
			if h.Constraint != version {
				return conflictError(repo, holds)
			}
		default:
			if ok, err := versions.Satisfies(h.Constraint, version); err == nil && !ok {
				return conflictError(repo, holds)
			}
		}
	}
	return nil
}

// choose is the version the resolver would install for repo under every
// constraint in holds: the digest they all pin, or the newest complete
// semantic version every range admits. The errors are the resolver's
// own words, with the dependents named.
func (m *mirrorResolver) choose(repo string, holds []versions.Hold) (string, error) {
	digest, ranges, err := splitHolds(repo, holds)
	if err != nil || digest != "" {
		return digest, err
	}
	tags, err := m.cl.tagsOf(repo)
	if err != nil {
		return "", fmt.Errorf("cannot fetch dependency package tags of %s (needed by %s): %s", repo, byWhom(holds), exit.Message(err))
	}
	admitted := completeVersions(tags)
	for _, c := range ranges {
		if admitted, err = versions.Filter(admitted, c, false); err != nil {
			return "", err
		}
	}
	if len(admitted) == 0 {
		return "", conflictError(repo, holds)
	}
	return admitted[0].Name, nil
}

// splitHolds: the package manager refuses a dependency pinned to two
// digests, or pinned by digest and ranged by version at once, and a
// constraint that is no semver range.
func splitHolds(repo string, holds []versions.Hold) (digest string, ranges []string, err error) {
	var cs []string
	for _, h := range holds {
		cs = append(cs, h.Constraint)
		if strings.HasPrefix(h.Constraint, "sha256:") {
			if digest != "" && digest != h.Constraint {
				return "", nil, fmt.Errorf("a dependency package has different digests in parent constraints (%v): %s", cs, describeHolds(repo, holds))
			}
			digest = h.Constraint
			continue
		}
		if _, err := semver.NewConstraint(h.Constraint); err != nil {
			return "", nil, fmt.Errorf("version constraint on dependency is invalid: %s needs %s %q: %v", h.By, repo, h.Constraint, err)
		}
		ranges = append(ranges, h.Constraint)
	}
	if digest != "" && len(ranges) > 0 {
		return "", nil, fmt.Errorf("a dependency package has different types of parent constraints (%v): %s", cs, describeHolds(repo, holds))
	}
	return digest, ranges, nil
}

// conflictError is the resolver's message when no version satisfies
// every constraint, naming who puts each.
func conflictError(repo string, holds []versions.Hold) error {
	cs := make([]string, len(holds))
	for i, h := range holds {
		cs[i] = h.Constraint
	}
	return fmt.Errorf("dependency (%s) does not have a valid version that satisfies all constraints. Constraints: %v: %s", repo, cs, describeHolds(repo, holds))
}

func describeHolds(repo string, holds []versions.Hold) string {
	parts := make([]string, len(holds))
	for i, h := range holds {
		parts[i] = fmt.Sprintf("%s needs %s %s", h.By, repo, h.Constraint)
	}
	return strings.Join(parts, "; ")
}

func byWhom(holds []versions.Hold) string {
	var by []string
	for _, h := range holds {
		by = append(by, h.By)
	}
	return strings.Join(slices.Compact(by), ", ")
}

// completeVersions drops tags that are no complete semantic version
// ("v1" parses as 1.0.0 but need not be it), as the resolver does.
func completeVersions(tags []versions.Tag) []versions.Tag {
	var out []versions.Tag
	for _, t := range tags {
		if t.Version != nil && t.Version.String() == strings.TrimPrefix(t.Version.Original(), "v") {
			out = append(out, t)
		}
	}
	return out
}

// packages are the closure's packages with their digests, roots first.
func (m *mirrorResolver) packages(w *walked, fixed map[string]string) ([]*MirrorPackage, error) {
	out := make([]*MirrorPackage, 0, len(w.order))
	for _, repo := range w.order {
		p := &MirrorPackage{Package: repo, Version: w.version[repo], Kind: w.kind[repo], ConstrainedBy: w.holds[repo]}
		_, p.Root = fixed[repo]
		d, err := m.digest(p.Ref())
		if err != nil {
			return nil, err
		}
		p.Digest = d
		out = append(out, p)
	}
	return out, nil
}

// dependencies are ref's kind and dependencies: as known, or from its
// meta object.
func (m *mirrorResolver) dependencies(ref string) (knownDeps, error) {
	if kd, ok := m.known[ref]; ok {
		return kd, nil
	}
	meta, err := m.meta(ref)
	if err != nil {
		return knownDeps{}, err
	}
	return knownDeps{kind: meta.Kind, deps: meta.DependsOn}, nil
}

// meta reads the meta object of ref (at its digest, so that what is
// copied is what was read).
func (m *mirrorResolver) meta(ref string) (*xpkg.Meta, error) {
	d, err := m.digest(ref)
	if err != nil {
		return nil, err
	}
	mr := m.cl.meta(reference.Repository(ref) + "@" + d)
	if err := m.ctx.Err(); err != nil && mr.meta == nil {
		// Interrupted: nothing is known of the package.
		return nil, fmt.Errorf("%s was not read: %w", ref, err)
	}
	if mr.meta == nil {
		if mr.err == "" {
			return nil, fmt.Errorf("%s is a legacy package without dependencies the mirror can read; mirror it by itself", ref)
		}
		return nil, fmt.Errorf("%s %s", ref, mr.err)
	}
	return mr.meta, nil
}

// digest is the image digest ref names (one HEAD), read once.
func (m *mirrorResolver) digest(ref string) (string, error) {
	if d, ok := m.digests[ref]; ok {
		return d.digest, d.err
	}
	var dr digestRead
	if d := reference.Digest(ref); d != "" {
		dr.digest = d
	} else {
		read, so, err := m.cl.reg.readQuietly(m.ctx, ref, nil)
		if err == nil {
			dr.digest, err = source.Digest(m.ctx, read, so)
		}
		if err != nil {
			dr.err = fmt.Errorf("read %s: %s", ref, exit.Message(err))
		}
	}
	m.digests[ref] = dr
	return dr.digest, dr.err
}
