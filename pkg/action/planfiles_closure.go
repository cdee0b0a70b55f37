package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// closure resolves what a new package's dependencies need in turn, as
// Crossplane's resolver would install them: a dependency nothing runs
// (nor the set) is installed at the newest version its constraint admits,
// and its own dependencies after it. The direct dependencies are
// dependencyFindings'; closure judges the levels below: one with no
// version that matches stalls the Lock for every package, and a version
// chosen that another constraint on it excludes leaves a package
// unhealthy. Each repository's tags are listed once, each version's meta
// object read once.
type closure struct {
	ctx     context.Context
	reg     *Registry
	secrets []string
	limits  xpkg.Limits
	tags    map[string]tagsRead // by repository
	metas   map[string]metaRead // by reference
}

type tagsRead struct {
	tags []versions.Tag
	err  error
}

func newClosure(ctx context.Context, reg *Registry, secrets []string, limits xpkg.Limits) *closure {
	return &closure{ctx: ctx, reg: reg, secrets: secrets, limits: limits, tags: map[string]tagsRead{}, metas: map[string]metaRead{}}
}

// step is a dependency met on the way, and the chain that led to it.
type step struct {
	dep   xpkg.Dependency
	chain []string
}

// findings walks the dependencies of root (target's meta object)
// against lock (what runs, as the set leaves it). The direct ones'
// findings are dependencyFindings': here they are only walked through.
func (cl *closure) findings(target string, root *xpkg.Meta, lock []installed.LockPackage) []findings.Finding {
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
	var out []findings.Finding
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
		v, f := cl.choose(s)
		chosen[repo] = v
		if f != nil && len(s.chain) > 1 {
			out = append(out, *f)
		}
		if v != "" {
			queue = append(queue, cl.below(repo+":"+v, s.chain)...)
		}
	}
	return append(out, cl.conflicts(constraints, chosen)...)
}

// below are the dependencies of the package ref names, each with its
// chain.
func (cl *closure) below(ref string, chain []string) []step {
	m := cl.meta(ref)
	if m.meta == nil {
		return nil
	}
	next := append(append([]string{}, chain...), ref)
	var out []step
	for _, d := range m.meta.DependsOn {
		out = append(out, step{dep: d, chain: next})
	}
	return out
}

// choose is the version the resolver installs for s: the newest its
// constraint admits, or the tag it names; a finding when there is none.
func (cl *closure) choose(s step) (string, *findings.Finding) {
	repo := reference.Repository(s.dep.Package)
	if strings.HasPrefix(s.dep.Version, "sha256:") {
		return "", nil // a digest: checked when it is pulled
	}
	tr := cl.listTags(repo)
	via := strings.Join(s.chain, " → ")
	switch {
	case source.NotFound(tr.err):
		return "", &findings.Finding{Rule: findings.RuleDependencyConstraint, Severity: findings.Blocking, Object: repo,
			Message: fmt.Sprintf("%s needs %s %s, and its repository does not exist (%s): the package manager cannot resolve it, and the Lock stalls for every package in the cluster until it can", via, repo, s.dep.Version, exit.Message(tr.err))}
	case tr.err != nil:
		return "", &findings.Finding{Rule: findings.RuleDependencyConstraint, Severity: findings.Warning, Object: repo,
			Message: fmt.Sprintf("%s needs %s %s, whose versions could not be listed (%s): if none matches, the Lock stalls for every package", via, repo, s.dep.Version, exit.Message(tr.err))}
	}
	if s.dep.Version != "" && !versions.IsConstraint(s.dep.Version) {
		for _, t := range tr.tags {
			if t.Name == s.dep.Version {
				return t.Name, nil
			}
		}
	} else if matches, err := versions.Filter(tr.tags, s.dep.Version, strings.Contains(s.dep.Version, "-")); err == nil && len(matches) > 0 {
		return matches[0].Name, nil
	}
	return "", &findings.Finding{Rule: findings.RuleDependencyConstraint, Severity: findings.Blocking, Object: repo,
		Message: fmt.Sprintf("%s needs %s %s, and no version of it in its registry matches: the package manager cannot resolve it, and the Lock stalls for every package in the cluster until it can; publish a matching version or change the constraint", via, repo, s.dep.Version)}
}

// conflicts: a constraint met on the way on a repository whose version
// is chosen already (installed, in the set, or chosen for another
// dependent) that excludes that version.
func (cl *closure) conflicts(cs []step, chosen map[string]string) []findings.Finding {
	var out []findings.Finding
	for _, s := range cs {
		repo := reference.Repository(s.dep.Package)
		v := chosen[repo]
		if v == "" || s.dep.Version == "" {
			continue
		}
		if ok, err := versions.Satisfies(s.dep.Version, v); err != nil || ok {
			continue
		}
		out = append(out, findings.Finding{Rule: findings.RuleDependencyConstraint, Severity: findings.Blocking, Object: repo,
			Message: fmt.Sprintf("%s needs %s %s, but %s is what runs or is installed for another dependent: no version satisfies every constraint, and the package that needs it stays unhealthy", strings.Join(s.chain, " → "), repo, s.dep.Version, v)})
	}
	return out
}

func (cl *closure) listTags(repo string) tagsRead {
	if tr, ok := cl.tags[repo]; ok {
		return tr
	}
	var tr tagsRead
	read, so, err := cl.reg.Read(cl.ctx, repo, cl.secrets)
	if err == nil {
		var names []string
		names, err = source.ListTags(cl.ctx, read, so)
		tr.tags = versions.Sort(names)
	}
	tr.err = err
	cl.tags[repo] = tr
	return tr
}

func (cl *closure) meta(ref string) metaRead {
	if m, ok := cl.metas[ref]; ok {
		return m
	}
	m := readMeta(cl.ctx, cl.reg, ref, cl.secrets, cl.limits)
	cl.metas[ref] = m
	return m
}

// tagsOf are repo's tags, newest first, listed once.
func (cl *closure) tagsOf(repo string) ([]versions.Tag, error) {
	tr := cl.listTags(repo)
	return tr.tags, tr.err
}
