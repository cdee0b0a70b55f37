package plugin

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// runAll is upgrade --all (every package to its WANTED version) or
// --family (a provider family to one version), the combined plan shown
// and gated first.
func (o *UpgradeOptions) runAll(ctx context.Context, cfg *action.Config) error {
	ua, stop, err := action.NewUpgradeAll(ctx, cfg, o.Pre, o.Activate)
	if err != nil {
		return err
	}
	defer stop()
	ua.Pin, ua.Force = o.Pin, o.Plan.Force
	ua.Options = o.Plan.changeOptions(o.root, o.Wait.d, o.Atomic)
	plans, err := o.plan(ctx, ua)
	if err != nil {
		return err
	}
	if err := showPlans(o.root, &o.Plan, plans); err != nil {
		return err
	}
	if len(plans.Steps) == 0 {
		switch {
		case plans.Family != "":
			fmt.Fprintf(o.root.IOStreams.ErrOut, "Every provider of the family %s runs %s: nothing to upgrade\n", plans.Family, plans.Version)
		case len(plans.Skipped) == 0:
			fmt.Fprintln(o.root.IOStreams.ErrOut, "Every package runs its WANTED version: nothing to upgrade")
		}
		return plans.SkippedError()
	}
	if err := action.Gate(plans.Refused(), o.Plan.Force, o.root.events()); err != nil || o.Plan.DryRun == dryRunClient {
		return cmp.Or(err, plans.SkippedError())
	}
	return ua.Apply(ctx, plans, o.stepEvents(ua.Options))
}

// plan is --all's combined plan, or --family's.
func (o *UpgradeOptions) plan(ctx context.Context, ua *action.UpgradeAll) (*action.Plans, error) {
	if o.Family != "" {
		return ua.PlanFamily(ctx, o.Family, o.version)
	}
	return ua.Plan(ctx)
}

// stepEvents print each step's new findings and result as upgrade --all
// goes.
func (o *UpgradeOptions) stepEvents(co action.ChangeOptions) action.StepEvents {
	return action.StepEvents{
		Replanned: func(p *action.Plan) {
			if p.Blocking() || len(p.Findings) > 0 {
				_ = writePlan(o.root.IOStreams.ErrOut, p)
			}
		},
		Done: func(s *action.Step, updated *installed.Package) {
			out := o.Plan.results(o.root)
			if co.DryRun {
				fmt.Fprintf(out, "%s would be upgraded from %s to %s (server dry run: nothing changed)\n", s.Plan.Package, s.Installed.Package.Version, updated.Version)
				return
			}
			fmt.Fprintf(out, "%s upgraded from %s to %s\n", s.Plan.Package, s.Installed.Package.Version, updated.Version)
		},
	}
}

func showPlans(r *Root, f *PlanFlags, ps *action.Plans) error {
	if f.Output != "" {
		return printers.PrintObject(r.IOStreams.Out, f.Output, ps)
	}
	var w io.Writer = r.IOStreams.ErrOut
	if f.DryRun != dryRunNone {
		w = r.IOStreams.Out
	}
	var names []string
	for _, p := range ps.Steps {
		names = append(names, p.Package)
	}
	if len(ps.Steps) > 0 {
		n := fmt.Sprintf("%d packages, in this order", len(ps.Steps))
		if len(ps.Steps) == 1 {
			n = "1 package"
		}
		what := "--all"
		if ps.Family != "" {
			what = "--family " + ps.Family + " to " + ps.Version
		}
		if _, err := fmt.Fprintf(w, "Plan: upgrade %s: %s: %s\n", what, n, strings.Join(names, ", ")); err != nil {
			return err
		}
	}
	for _, f := range ps.Families {
		if _, err := fmt.Fprintf(w, "Family %s moves as one, to %s\n", f.Family, f.Version); err != nil {
			return err
		}
	}
	for _, b := range ps.Blocked {
		if _, err := fmt.Fprintf(w, "Not moving %s to %s: it %s\n", b.Package, b.Version, b.Reason); err != nil {
			return err
		}
	}
	for _, p := range ps.Steps {
		if err := writePlan(w, p); err != nil {
			return err
		}
	}
	return nil
}
