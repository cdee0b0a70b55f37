package resolve

import (
	"context"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Closure resolves what packages' dependencies need in turn, as the
// package manager installs them (Choose). Each repository's tags are
// listed once, each version's meta object and digest read once. Below
// walks what one new package brings in (plan -f), Set the closure of a
// set of packages (mirror).
type Closure struct {
	ctx     context.Context
	reg     *Registry
	secrets []string
	limits  xpkg.Limits
	tags    map[string]tagsRead   // by repository
	metas   map[string]MetaRead   // by reference
	digests map[string]digestRead // by reference
	// known are packages whose dependencies are known without reading
	// them (the Lock records them), by reference.
	known map[string]Known
}

type tagsRead struct {
	tags []versions.Tag
	err  error
}

type digestRead struct {
	digest string
	err    error
}

// Known are a package's kind and dependencies, as the Lock records them.
type Known struct {
	Kind string
	Deps []xpkg.Dependency
}

// NewClosure reads through reg with the pull secrets given.
func NewClosure(ctx context.Context, reg *Registry, secrets []string, limits xpkg.Limits) *Closure {
	return &Closure{ctx: ctx, reg: reg, secrets: secrets, limits: limits, tags: map[string]tagsRead{},
		metas: map[string]MetaRead{}, digests: map[string]digestRead{}, known: map[string]Known{}}
}

// Problem is a dependency below a new package's direct ones that the
// package manager cannot resolve, or resolves to a version another
// constraint on it excludes.
type Problem struct {
	Kind ProblemKind
	// Chain are the packages that led to it: the new package, then each
	// version chosen on the way.
	Chain []string
	// Repo is the dependency's repository; Constraint what it needs.
	Repo, Constraint string
	// Err is why no version was chosen (Missing, Unlisted, Unresolvable).
	Err error
	// Chosen is the version that runs or was chosen (Excluded).
	Chosen string
}

// ProblemKind says what stops a dependency.
type ProblemKind int

const (
	// Missing: its repository does not exist.
	Missing ProblemKind = iota
	// Unlisted: its versions could not be listed.
	Unlisted
	// Unresolvable: no version is chosen (Choose's error).
	Unresolvable
	// Excluded: the version that runs, or was chosen for another
	// dependent, is one the constraint excludes.
	Excluded
)

// step is a dependency met on the way, and the chain that led to it.
type step struct {
	dep   xpkg.Dependency
	chain []string
}

// Below walks the dependencies of root (target's meta object) against
// lock (what runs, as the change leaves it): a dependency nothing runs is
// installed at the version Choose gives its constraint, then its own
// dependencies. The direct dependencies are the caller's to judge: here
// they are only walked through, and only the levels below make Problems.
func (c *Closure) Below(target string, root *xpkg.Meta, lock []installed.LockPackage) []Problem {
	if root == nil {
		return nil
	}
	chosen := map[string]string{} // repository → the version that runs or the resolver would install
	for _, lp := range lock {
		chosen[reference.Repository(lp.Source)] = lp.Version
	}
	var queue, constraints []step
	for _, d := range root.DependsOn {
		queue = append(queue, step{dep: d, chain: []string{target}})
	}
	var out []Problem
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		repo := reference.Repository(s.dep.Package)
		if _, ok := chosen[repo]; ok {
			if len(s.chain) > 1 {
				constraints = append(constraints, s)
			}
			continue
		}
		v, p := c.Install(s.dep)
		chosen[repo] = v
		if p != nil && len(s.chain) > 1 {
			p.Chain = s.chain
			out = append(out, *p)
		}
		if v != "" {
			queue = append(queue, c.below(Ref(repo, v), s.chain)...)
		}
	}
	return append(out, excluded(constraints, chosen)...)
}

// below are the dependencies of the package ref names, each with its
// chain.
func (c *Closure) below(ref string, chain []string) []step {
	m := c.meta(ref)
	if m.Meta == nil {
		return nil
	}
	next := append(append([]string{}, chain...), ref)
	var out []step
	for _, d := range m.Meta.DependsOn {
		out = append(out, step{dep: d, chain: next})
	}
	return out
}

// Install is the version the package manager installs for a dependency
// nothing runs (Choose under its constraint), or the Problem that stops
// it.
func (c *Closure) Install(d xpkg.Dependency) (string, *Problem) {
	repo := reference.Repository(d.Package)
	p := &Problem{Repo: repo, Constraint: d.Version}
	if IsDigest(d.Version) {
		return d.Version, nil
	}
	tags, err := c.Tags(repo)
	switch {
	case source.NotFound(err):
		p.Kind, p.Err = Missing, err
		return "", p
	case err != nil:
		p.Kind, p.Err = Unlisted, err
		return "", p
	}
	v, err := Choose(tags, []string{d.Version})
	if err != nil {
		p.Kind, p.Err = Unresolvable, err
		return "", p
	}
	return v, nil
}

// excluded: a constraint met on the way on a repository whose version is
// chosen already (installed, in the change, or chosen for another
// dependent) that excludes that version.
func excluded(cs []step, chosen map[string]string) []Problem {
	var out []Problem
	for _, s := range cs {
		repo := reference.Repository(s.dep.Package)
		v := chosen[repo]
		if v == "" || s.dep.Version == "" {
			continue
		}
		if ok, known := admits(s.dep.Version, v); ok || !known {
			continue
		}
		out = append(out, Problem{Kind: Excluded, Chain: s.chain, Repo: repo, Constraint: s.dep.Version, Chosen: v})
	}
	return out
}

// admits tells whether constraint admits version as the package manager
// checks an installed dependency; known is false when either is no
// semantic version or range (a digest, a tag).
func admits(constraint, version string) (ok, known bool) {
	ok, err := versions.Satisfies(constraint, version)
	return ok, err == nil
}

// Tags are repo's tags, newest first, listed once.
func (c *Closure) Tags(repo string) ([]versions.Tag, error) {
	if tr, ok := c.tags[repo]; ok {
		return tr.tags, tr.err
	}
	var tr tagsRead
	read, so, err := c.reg.Locate(c.ctx, repo, c.secrets)
	if err == nil {
		var names []string
		names, err = source.ListTags(c.ctx, read, so)
		tr.tags = versions.Sort(names)
	}
	tr.err = err
	c.tags[repo] = tr
	return tr.tags, tr.err
}

func (c *Closure) meta(ref string) MetaRead {
	if m, ok := c.metas[ref]; ok {
		return m
	}
	m := c.reg.ReadMeta(c.ctx, ref, c.secrets, MetaOptions{Limits: c.limits})
	c.metas[ref] = m
	return m
}

// Ref is the reference of a repository's version: repository:tag, or
// @digest when a digest pins it.
func Ref(repo, version string) string {
	if strings.HasPrefix(version, "sha256:") {
		return repo + "@" + version
	}
	return repo + ":" + version
}
