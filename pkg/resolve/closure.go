package resolve

import (
	"context"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Closure resolves what packages' dependencies need in turn, as the
// package manager installs them (Choose). Each repository's tags are
// listed once, each version's meta object and digest read once. Set
// is the closure of a set of packages (mirror); Simulate follows the
// resolver over a Lock (the plans).
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

// admits tells whether constraint admits version as the package manager
// checks an installed dependency; known is false when either is no
// semantic version or range (a digest, a tag).
func admits(constraint, version string) (ok, known bool) {
	ok, err := versions.Satisfies(constraint, version)
	return ok, err == nil
}
