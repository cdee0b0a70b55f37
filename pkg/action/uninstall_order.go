package action

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// deleteInPhases deletes each phase of the named packages, and waits
// for it to go before the next: a dependency deleted while a package
// that needs it is still in the Lock is installed again by the package
// manager's resolver, under the same name.
func (u *Uninstall) deleteInPhases(ctx context.Context, phases [][]*installed.Package, deps []*installed.Package, o UninstallOptions) error {
	for i, phase := range phases {
		if err := u.delete(ctx, phase, o); err != nil {
			return err
		}
		if i == len(phases)-1 || o.DryRun {
			continue
		}
		d := cmp.Or(o.Wait, DefaultDependencyWait)
		u.Events.say("Waiting up to %s for %s to go before removing what it depends on", cluster.Round(d), kindNames(phase))
		if err := u.wait(ctx, phase, d); err != nil {
			return &LeftError{Err: err, Left: append(slices.Concat(phases[i+1:]...), deps...)}
		}
	}
	return nil
}

// deletionPhases orders named packages for deletion: those no other
// named package needs (in the Lock) first, then those only they needed,
// and so on; a cycle goes at once.
func deletionPhases(lock []installed.LockPackage, named []*installed.Package) [][]*installed.Package {
	var phases [][]*installed.Package
	for left := named; len(left) > 0; {
		var now, later []*installed.Package
		for _, p := range left {
			if neededBy(lock, p, left) {
				later = append(later, p)
			} else {
				now = append(now, p)
			}
		}
		if len(now) == 0 {
			now, later = later, nil
		}
		phases = append(phases, now)
		left = later
	}
	return phases
}

// neededBy: another package of pkgs depends on p.
func neededBy(lock []installed.LockPackage, p *installed.Package, pkgs []*installed.Package) bool {
	for _, d := range installed.Dependents(lock, reference.Repository(p.Source)) {
		if slices.ContainsFunc(pkgs, func(q *installed.Package) bool {
			return q != p && installed.SameRepo(d.Source, reference.Repository(q.Source))
		}) {
			return true
		}
	}
	return false
}

func kindNames(pkgs []*installed.Package) string {
	names := make([]string, len(pkgs))
	for i, p := range pkgs {
		names[i] = p.KindName()
	}
	return strings.Join(names, ", ")
}
