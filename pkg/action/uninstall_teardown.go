package action

import (
	"cmp"
	"context"
	"fmt"
	"time"

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
	if err := u.Cluster.WaitCRDsGone(ctx, defs, wait, teardownInterval); err != nil {
		return err
	}
	u.Events.result("Every definition the packages made is gone (%d CRD(s))", len(defs))
	return nil
}
