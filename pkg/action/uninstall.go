package action

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/teardown"
)

// Uninstall removes packages: the named ones and, with WithDependencies,
// the dependencies nothing else needs.
type Uninstall struct {
	Cluster          *cluster.Cluster
	WithDependencies bool
	// WithResources removes every object of the packages' kinds first
	// (teardown.ModeDelete or ModeOrphan; "" refuses while any exists).
	WithResources string
	// mapper finds the resources of the composite resources and claims a
	// teardown reads.
	mapper func() (meta.RESTMapper, error)
	// Events hear the waits.
	Events Events
	// done are the packages Run deleted so far.
	done []string
}

// NewUninstall removes packages from cfg's cluster; withDeps removes the
// dependencies nothing else needs too.
func NewUninstall(cfg *Config, withDeps bool) (*Uninstall, error) {
	c, err := cfg.connect()
	if err != nil {
		return nil, err
	}
	return &Uninstall{Cluster: c, WithDependencies: withDeps, Events: cfg.Events, mapper: cfg.apiClients().Mapper}, nil
}

// UninstallPlan is what an uninstall would remove and what it found.
type UninstallPlan struct {
	*Plan
	Named []*installed.Package
	// Dependencies are removed after the named packages are gone.
	Dependencies []*installed.Package
	// args are what was planned for: Run plans them again.
	args []string
	// lock is the Lock the plan read: which named package needs which.
	lock []installed.LockPackage
}

// Plan resolves the arguments and checks what removing them breaks:
// packages that depend on them, and live objects of every kind they
// define (Crossplane deletes the definitions, and the objects with them).
func (u *Uninstall) Plan(ctx context.Context, args []string) (*UninstallPlan, error) {
	up := &UninstallPlan{Plan: NewPlan(ActionUninstall, "", "", ""), args: args}
	for _, a := range args {
		p, err := u.Cluster.Lookup(ctx, a)
		if err != nil {
			return nil, err
		}
		up.Named = append(up.Named, p)
	}
	lock, err := u.Cluster.Lock(ctx)
	if err != nil {
		return nil, err
	}
	all, err := u.Cluster.List(ctx, "", "")
	if err != nil {
		return nil, err
	}
	up.lock = lock
	up.add(diagnose.DependentsFindings(lock, all, up.Named)...)
	if u.WithDependencies {
		var explicit []*installed.Package
		up.Dependencies, explicit = diagnose.ExclusiveDependencies(lock, all, up.Named)
		for _, d := range up.Dependencies {
			up.add(findings.Finding{Rule: findings.RuleDependents, Severity: findings.Info, Object: d.KindName(),
				Message: fmt.Sprintf("%s (%s) is needed by nothing else: uninstalling it too", d.KindName(), reference.Repository(d.Source))})
		}
		for _, d := range explicit {
			up.add(diagnose.ExplicitDependencyFinding(d))
		}
	}
	for _, p := range up.all() {
		up.Packages = append(up.Packages, p.KindName())
		names, live, err := u.liveObjects(ctx, p)
		if err != nil {
			return nil, err
		}
		up.add(live...)
		if u.WithResources != "" {
			td, err := teardown.Read(ctx, u.Cluster, u.mapper, u.WithResources, p.KindName(), names)
			if err != nil {
				return nil, fmt.Errorf("plan the teardown of %s: %w", p.KindName(), err)
			}
			var removing []string
			for _, r := range up.all() {
				removing = append(removing, r.KindName())
			}
			up.add(td.OthersKinds(removing)...)
			up.Teardown = append(up.Teardown, td)
		}
	}
	up.Package = strings.Join(up.Packages, ", ")
	return up, nil
}

func (up *UninstallPlan) all() []*installed.Package {
	return append(slices.Clone(up.Named), up.Dependencies...)
}

// liveObjects counts the objects of every kind the package's current
// revision defines.
// With WithResources, a fact: the teardown removes them first.
func (u *Uninstall) liveObjects(ctx context.Context, p *installed.Package) ([]string, []findings.Finding, error) {
	names, err := u.Cluster.DefinedCRDs(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	crds, err := u.Cluster.CRDs(ctx, names)
	if err != nil {
		return nil, nil, err
	}
	live, err := diagnose.CountLive(ctx, u.Cluster, crds, names)
	if err != nil {
		return nil, nil, err
	}
	var out []findings.Finding
	for _, l := range live {
		f := findings.Finding{Rule: findings.RuleLiveObjects, Severity: findings.Blocking, Object: l.CRD.Name, Count: findings.Count(l.N.N),
			Message: fmt.Sprintf("%s (CRD %s): uninstalling %s deletes the definition and them with it; delete them first, or let --with-resources=delete|orphan remove them in the order that finishes", diagnose.ObjectsExist(l.N, l.CRD.Kind), l.CRD.Name, p.KindName())}
		if u.WithResources != "" {
			f.Severity = findings.Info
			f.Message = fmt.Sprintf("%s (CRD %s): the teardown (--with-resources=%s) removes them before %s", diagnose.ObjectsExist(l.N, l.CRD.Kind), l.CRD.Name, u.WithResources, p.KindName())
		}
		out = append(out, f)
	}
	return names, out, nil
}

// UninstallOptions say how the removal is carried out.
type UninstallOptions struct {
	DryRun bool
	Wait   time.Duration
	// Deleted hears each package deleted.
	Deleted func(p *installed.Package)
}

// DefaultDependencyWait is how long to wait for the named packages to go
// before their dependencies are removed, when no --wait says how long.
const DefaultDependencyWait = 5 * time.Minute

// Apply deletes the named packages, then (once they and their Lock entries
// are gone: the package manager would put back a dependency that a
// package it still knows needs) their dependencies, and waits as asked.
// Each deletion is planned again just before it is made (the plan that
// was approved may be minutes old: a prompt, a wait), and made only if
// it finds nothing the approved plan did not, with the package's UID and
// resourceVersion as preconditions.
func (u *Uninstall) Apply(ctx context.Context, up *UninstallPlan, o UninstallOptions) error {
	return changeError(ctx, u.run(ctx, up, o))
}

func (u *Uninstall) run(ctx context.Context, up *UninstallPlan, o UninstallOptions) error {
	if len(up.Teardown) > 0 {
		return u.tearDown(ctx, up, o)
	}
	named, err := u.replan(ctx, up, up.args, up.Named, u.WithDependencies, o.DryRun)
	if err != nil {
		return err
	}
	if err := u.deleteInPhases(ctx, deletionPhases(up.lock, named), up.Dependencies, o); err != nil {
		return err
	}
	if len(up.Dependencies) > 0 && !o.DryRun {
		d := cmp.Or(o.Wait, DefaultDependencyWait)
		u.Events.say("Waiting up to %s for the packages to go before removing their dependencies", cluster.Round(d))
		if err := u.wait(ctx, up.Named, d); err != nil {
			return &LeftError{Err: err, Left: up.Dependencies}
		}
	}
	deps := make([]string, len(up.Dependencies))
	for i, d := range up.Dependencies {
		deps[i] = d.KindName()
	}
	if deps, err := u.replan(ctx, up, deps, up.Dependencies, false, o.DryRun); err != nil {
		return err
	} else if err := u.delete(ctx, deps, o); err != nil {
		return err
	}
	if o.Wait == 0 || o.DryRun {
		return nil
	}
	if len(up.Dependencies) > 0 {
		return u.wait(ctx, up.Dependencies, o.Wait) // the named ones are gone already
	}
	return u.wait(ctx, up.Named, o.Wait)
}

// LeftError is an uninstall --with-dependencies that stopped (timed out,
// interrupted) before it removed the dependencies: they are named, since
// nothing else will remove them.
type LeftError struct {
	Err  error
	Left []*installed.Package
}

func (e *LeftError) Error() string {
	left := make([]string, len(e.Left))
	for i, p := range e.Left {
		left[i] = p.KindName()
	}
	return fmt.Sprintf("%v; the dependencies were left installed: %s (uninstall them by name once the packages are gone)", e.Err, strings.Join(left, ", "))
}

func (e *LeftError) Unwrap() error { return e.Err }

// replan plans removing args again and returns the packages, read just
// now, to delete; it fails with a ChangedError when a package is another
// object than the one planned (deleted and made again) or the plan finds
// something the approved one did not (a new dependent, more live objects).
func (u *Uninstall) replan(ctx context.Context, approved *UninstallPlan, args []string, planned []*installed.Package, withDeps, dryRun bool) ([]*installed.Package, error) {
	if len(args) == 0 || dryRun {
		return planned, nil
	}
	changed := func(what string) error {
		return &cluster.ChangedError{Action: ActionUninstall, Package: approved.Package, What: what, Done: u.done}
	}
	fresh, err := (&Uninstall{Cluster: u.Cluster, WithDependencies: withDeps}).Plan(ctx, args)
	if apierrors.IsNotFound(err) {
		return nil, changed("a package is gone")
	}
	if err != nil {
		return nil, fmt.Errorf("plan the uninstall of %s again: %w", approved.Package, err)
	}
	for i, p := range fresh.Named {
		if p.Object.GetUID() != planned[i].Object.GetUID() {
			return nil, changed(p.KindName() + " was deleted and made again")
		}
	}
	if f := newFinding(approved.Plan, fresh.Plan); f != nil {
		return nil, changed("a new finding: " + f.Message)
	}
	return fresh.Named, nil
}

func (u *Uninstall) delete(ctx context.Context, pkgs []*installed.Package, o UninstallOptions) error {
	for _, p := range pkgs {
		err := u.Cluster.DeleteExactly(ctx, p, o.DryRun)
		if apierrors.IsConflict(err) {
			return &cluster.ChangedError{Action: ActionUninstall, Package: p.KindName(), What: p.KindName() + " changed between the last plan and its deletion", Done: u.done}
		}
		if err != nil {
			return fmt.Errorf("uninstall %s: %w", p.KindName(), err)
		}
		u.done = append(u.done, p.KindName())
		if o.Deleted != nil {
			o.Deleted(p)
		}
	}
	return nil
}

func (u *Uninstall) wait(ctx context.Context, pkgs []*installed.Package, d time.Duration) error {
	for _, p := range pkgs {
		if err := u.Cluster.WaitDeleted(ctx, p, d, u.Events.progress()); err != nil {
			return err
		}
	}
	return nil
}
