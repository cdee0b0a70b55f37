package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// What an uninstall plan finds of the Lock: the dependents of what goes,
// and the dependencies only it needs.

// DependentsFindings: a named package another installed package (not
// being removed too) depends on.
func DependentsFindings(lock []installed.LockPackage, all, named []*installed.Package) []findings.Finding {
	removing := map[string]bool{}
	for _, t := range named {
		removing[reference.Repository(t.Source)] = true
	}
	var out []findings.Finding
	for _, t := range named {
		var users []string
		for _, d := range installed.Dependents(lock, reference.Repository(t.Source)) {
			if !removing[reference.Repository(d.Source)] {
				users = append(users, PackageName(all, d.Source))
			}
		}
		if len(users) == 0 {
			continue
		}
		them := "it"
		if len(users) > 1 {
			them = "them"
		}
		out = append(out, findings.Finding{Rule: findings.RuleDependents, Severity: findings.Blocking, Object: t.KindName(), Count: findings.Count(int64(len(users))),
			Message: fmt.Sprintf("%s is a dependency of %s: uninstall %s first", t.KindName(), strings.Join(users, ", "), them)})
	}
	return out
}

// ExclusiveDependencies are the installed dependencies of the named
// packages that nothing else needs and that the package manager installed
// as dependencies, each once, and those nothing else needs but that were
// installed explicitly: these stay (as apt's autoremove keeps what was
// installed by hand), and so does what they need.
func ExclusiveDependencies(lock []installed.LockPackage, all, named []*installed.Package) (deps, explicit []*installed.Package) {
	byRepo := func(repo string) *installed.Package {
		i := slices.IndexFunc(all, func(p *installed.Package) bool { return reference.Repository(p.Source) == repo })
		if i < 0 {
			return nil
		}
		return all[i]
	}
	has := func(list []*installed.Package, p *installed.Package) bool {
		return slices.ContainsFunc(append(slices.Clone(named), list...), func(q *installed.Package) bool { return q.Name == p.Name && q.Kind == p.Kind })
	}
	// What was named goes, however it was installed; of the rest, what the
	// package manager did not install stays.
	stays := func(repo string) bool {
		p := byRepo(repo)
		if p == nil || has(nil, p) {
			return false
		}
		origin, _ := installed.PackageOrigin(p.Object)
		return origin != installed.OriginDependency
	}
	for _, t := range named {
		root := reference.Repository(t.Source)
		for _, repo := range installed.ExclusiveDependencies(lock, root, stays) {
			if p := byRepo(repo); p != nil && !has(deps, p) {
				deps = append(deps, p)
			}
		}
		for _, repo := range installed.ExclusiveDependencies(lock, root, nil) {
			if p := byRepo(repo); p != nil && stays(repo) && !has(explicit, p) {
				explicit = append(explicit, p)
			}
		}
	}
	return deps, explicit
}

// ExplicitDependencyFinding: a dependency nothing else needs that the
// package manager did not install, which --with-dependencies leaves. A
// fact, not a danger: nothing it stops could go wrong, so it is INFO, and
// the uninstall goes ahead without it.
func ExplicitDependencyFinding(p *installed.Package) findings.Finding {
	who := "no record of who set its package (no managedFields)"
	if _, owners := installed.PackageOrigin(p.Object); len(owners) > 0 {
		who = "its package was set by " + strings.Join(owners, ", ") + ", not only by the package manager"
	}
	return findings.Finding{Rule: findings.RuleExplicitDependency, Severity: findings.Info, Object: p.KindName(),
		Message: fmt.Sprintf("%s (%s) is needed by nothing else but was installed explicitly (%s): --with-dependencies removes only what the package manager installed, so it stays; uninstall it by name to remove it too",
			p.KindName(), reference.Repository(p.Source), who)}
}
