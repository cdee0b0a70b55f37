package resolve

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Member is one package of a set's closure: the repository as the
// packages name it, the version chosen and what constrains it.
type Member struct {
	Repo string
	// Kind is Provider, Configuration or Function, from its meta object
	// or the Lock.
	Kind string
	// Version is the tag chosen, or the digest a dependency pins.
	Version string
	// Digest is the image's (the index's, for a multi-platform package).
	Digest string
	// Root: the set names it.
	Root bool
	// ConstrainedBy are the dependents' constraints on it.
	ConstrainedBy []versions.Hold
}

// Root is a package the set names: a repository at a tag or a digest.
type Root struct {
	Repo, Version string
}

// maxRounds bounds a set's resolution: a round that changes a choice may
// bring new constraints, and the set settles when none changes.
const maxRounds = 16

// Know records what the Lock says of the package ref names: its
// dependencies are not read again.
func (c *Closure) Know(ref string, k Known) { c.known[ref] = k }

// KnowDigest records the digest ref's tag names (a root that names both).
func (c *Closure) KnowDigest(ref, digest string) { c.digests[ref] = digestRead{digest: digest} }

// Set resolves the closure of roots as the package manager installs it:
// breadth-first from the roots, each dependency at the version Choose
// gives every constraint the set puts on it, since a set (a mirror) must
// hold the version every dependent accepts. The members are the roots,
// then the rest breadth-first; the errors are the resolver's own words,
// with the dependents named.
func (c *Closure) Set(roots []Root) ([]*Member, error) {
	fixed := map[string]string{}
	for _, r := range roots {
		if v, ok := fixed[r.Repo]; ok && v != r.Version {
			return nil, fmt.Errorf("%s is named at two versions, %s and %s: the package manager runs one version of a repository; mirror them in two runs", r.Repo, v, r.Version)
		}
		fixed[r.Repo] = r.Version
	}
	choice := map[string]string{}
	for range maxRounds {
		w, err := c.walk(roots, fixed, choice)
		if err != nil {
			return nil, err
		}
		next, err := c.settle(w, fixed)
		if err != nil {
			return nil, err
		}
		if maps.Equal(next, choice) {
			return c.members(w, fixed)
		}
		choice = next
	}
	return nil, fmt.Errorf("the dependency versions did not settle in %d rounds: each choice brings constraints that change another; pin the dependencies' versions in the roots", maxRounds)
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

// walk goes breadth-first from the roots; a repository met for the
// first time takes its root version, its choice from the last round, or
// the version the constraints met so far give it.
func (c *Closure) walk(roots []Root, fixed, choice map[string]string) (*walked, error) {
	w := &walked{version: map[string]string{}, holds: map[string][]versions.Hold{}, kind: map[string]string{}}
	var queue []string
	for _, r := range roots {
		if _, ok := w.version[r.Repo]; !ok {
			w.add(r.Repo, r.Version)
			queue = append(queue, r.Repo)
		}
	}
	for len(queue) > 0 {
		repo := queue[0]
		queue = queue[1:]
		ref := Ref(repo, w.version[repo])
		k, err := c.dependencies(ref)
		if err != nil {
			return nil, err
		}
		w.kind[repo] = k.Kind
		for _, d := range k.Deps {
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
				if v, err = c.choose(dep, w.holds[dep]); err != nil {
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
func (c *Closure) settle(w *walked, fixed map[string]string) (map[string]string, error) {
	next := map[string]string{}
	for _, repo := range w.order {
		if v, ok := fixed[repo]; ok {
			if err := rootAdmitted(repo, v, w.holds[repo]); err != nil {
				return nil, err
			}
			continue
		}
		v, err := c.choose(repo, w.holds[repo])
		if err != nil {
			return nil, err
		}
		next[repo] = v
	}
	return next, nil
}

// rootAdmitted: a package named at a version, which a dependent's
// constraint excludes, is a conflict the set cannot settle.
func rootAdmitted(repo, version string, holds []versions.Hold) error {
	for _, h := range holds {
		switch {
		case IsDigest(h.Constraint), strings.HasPrefix(version, "sha256:"):
			if h.Constraint != version {
				return conflictError(repo, holds)
			}
		default:
			if ok, known := admits(h.Constraint, version); known && !ok {
				return conflictError(repo, holds)
			}
		}
	}
	return nil
}

// choose is Choose under every constraint in holds, in the resolver's
// words with the dependents named.
func (c *Closure) choose(repo string, holds []versions.Hold) (string, error) {
	cs := make([]string, len(holds))
	for i, h := range holds {
		cs[i] = h.Constraint
	}
	var tags []versions.Tag
	if listsTags(cs) {
		var err error
		if tags, err = c.Tags(repo); err != nil {
			return "", fmt.Errorf("cannot fetch dependency package tags of %s (needed by %s): %s", repo, byWhom(holds), exit.Message(err))
		}
	}
	v, err := Choose(tags, cs)
	var invalid *InvalidError
	switch {
	case errors.Is(err, ErrNoVersion):
		return "", conflictError(repo, holds)
	case errors.As(err, &invalid):
		for _, h := range holds {
			if h.Constraint == invalid.Constraint {
				return "", fmt.Errorf("version constraint on dependency is invalid: %s needs %s %q: %v", h.By, repo, h.Constraint, invalid.Err)
			}
		}
	case err != nil:
		return "", fmt.Errorf("%v: %s", err, describeHolds(repo, holds))
	}
	return v, err
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

// members are the closure's packages with their digests, roots first.
func (c *Closure) members(w *walked, fixed map[string]string) ([]*Member, error) {
	out := make([]*Member, 0, len(w.order))
	for _, repo := range w.order {
		m := &Member{Repo: repo, Version: w.version[repo], Kind: w.kind[repo], ConstrainedBy: w.holds[repo]}
		_, m.Root = fixed[repo]
		d, err := c.digest(Ref(repo, m.Version))
		if err != nil {
			return nil, err
		}
		m.Digest = d
		out = append(out, m)
	}
	return out, nil
}

// dependencies are ref's kind and dependencies: as known, or from its
// meta object.
func (c *Closure) dependencies(ref string) (Known, error) {
	if k, ok := c.known[ref]; ok {
		return k, nil
	}
	meta, err := c.readMeta(ref)
	if err != nil {
		return Known{}, err
	}
	return Known{Kind: meta.Kind, Deps: meta.DependsOn}, nil
}

// readMeta reads the meta object of ref (at its digest, so that what is
// copied is what was read).
func (c *Closure) readMeta(ref string) (*xpkg.Meta, error) {
	d, err := c.digest(ref)
	if err != nil {
		return nil, err
	}
	mr := c.meta(reference.Repository(ref) + "@" + d)
	if err := c.ctx.Err(); err != nil && mr.Meta == nil {
		// Interrupted: nothing is known of the package.
		return nil, fmt.Errorf("%s was not read: %w", ref, err)
	}
	if mr.Meta == nil {
		if mr.Err == "" {
			return nil, fmt.Errorf("%s is a legacy package without dependencies the mirror can read; mirror it by itself", ref)
		}
		return nil, fmt.Errorf("%s %s", ref, mr.Err)
	}
	return mr.Meta, nil
}

// digest is the image digest ref names (one HEAD), read once.
func (c *Closure) digest(ref string) (string, error) {
	if d, ok := c.digests[ref]; ok {
		return d.digest, d.err
	}
	var dr digestRead
	if d := reference.Digest(ref); d != "" {
		dr.digest = d
	} else {
		read, so, err := c.reg.LocateQuietly(c.ctx, ref, nil)
		if err == nil {
			dr.digest, err = source.Digest(c.ctx, read, so)
		}
		if err != nil {
			dr.err = fmt.Errorf("read %s: %s", ref, exit.Message(err))
		}
	}
	c.digests[ref] = dr
	return dr.digest, dr.err
}

// Dependencies are the kind and dependencies of the package ref names:
// as the Lock records them, or from its meta object.
func (c *Closure) Dependencies(ref string) (Known, error) { return c.dependencies(ref) }
