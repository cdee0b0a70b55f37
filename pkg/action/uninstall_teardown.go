package action

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/teardown"
)

// teardownInterval is how often a teardown reads what it waits for.
const teardownInterval = time.Second

// tearDown removes every object of the packages' kinds, stage by stage
// (teardown.Runner), while the packages' runtimes still run; then the
// packages, as an uninstall without resources does; then waits until
// their definitions are gone. --wait (default DefaultDependencyWait)
// bounds each wait.
func (u *Uninstall) tearDown(ctx context.Context, up *UninstallPlan, o UninstallOptions) error {
	wait := cmp.Or(o.Wait, DefaultDependencyWait)
	for _, td := range up.Teardown {
		r := &teardown.Runner{Cluster: u.Cluster, Wait: wait, Interval: teardownInterval, DryRun: o.DryRun,
			Say:  u.Events.say,
			Done: func(format string, args ...any) { u.Events.result("%s: %s", td.Package, fmt.Sprintf(format, args...)) }}
		if err := r.Run(ctx, td); err != nil {
			return err
		}
	}
	rest, plan := *up, *up.Plan
	plan.Teardown, rest.Plan = nil, &plan
	o.Wait = wait
	if err := u.run(ctx, &rest, o); err != nil || o.DryRun {
		return err
	}
	var defs []string
	for _, td := range up.Teardown {
		defs = append(defs, td.Definitions...)
	}
	return u.definitionsGone(ctx, defs, wait)
}

// othersKinds: each group of td whose kind another package's XRD defines
// (composite resources that compose td's managed resources, and their
// claims) is, unless that package is removed too, a blocking finding,
// since the teardown would delete another package's objects (--force
// deletes them).
func othersKinds(td *teardown.Plan, removing []*installed.Package) []findings.Finding {
	var out []findings.Finding
	for i := range td.Groups {
		g := &td.Groups[i]
		if g.DefinedBy == "" {
			continue
		}
		if slices.ContainsFunc(removing, func(p *installed.Package) bool { return p.KindName() == g.DefinedBy }) {
			continue
		}
		out = append(out, findings.Finding{Rule: findings.RuleLiveObjects, Severity: findings.Blocking, Object: g.Kind, Count: findings.Count(int64(len(g.Objects))),
			Message: fmt.Sprintf("the teardown of %s would delete %d %s of kind %s, which %s defines (they compose its managed resources, or claim what does): uninstall %s --with-resources=%s first, or --force to delete them too",
				td.Package, len(g.Objects), g.Stage, g.Kind, g.DefinedBy, g.DefinedBy, td.Mode)})
	}
	return out
}

// definitionsGone waits until none of the CRDs named is left: a CRD left
// Terminating is named, with how long.
func (u *Uninstall) definitionsGone(ctx context.Context, names []string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		crds, err := u.Cluster.CRDs(ctx, names)
		if err != nil {
			return err
		}
		if len(crds) == 0 {
			u.Events.result("Every definition the packages made is gone (%d CRD(s))", len(names))
			return nil
		}
		if !time.Now().Add(teardownInterval).Before(deadline) {
			var left []string
			for name, crd := range crds {
				if !crd.Deleting.IsZero() {
					name += fmt.Sprintf(" (Terminating for %s: kubectl xpkg doctor says what holds it)", cluster.Round(time.Since(crd.Deleting)))
				}
				left = append(left, name)
			}
			return &cluster.WaitTimeoutError{What: "the packages' definitions to go", After: wait, Pending: left}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(teardownInterval):
		}
	}
}
