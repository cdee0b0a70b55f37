package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/lifecycle"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// runAll is upgrade --all: the combined plan, its gate, then the steps.
func (o *UpgradeOptions) runAll(ctx context.Context, c *cluster.Cluster) error {
	so, limits, err := o.Source.Options()
	if err != nil {
		return err
	}
	reg, err := clusterRegistry(ctx, o.root, c, o.XPNamespace, &o.Source, so)
	if err != nil {
		return err
	}
	change := newChange(o.root, c, o.XPNamespace, o.Activate, limits)
	ua := &lifecycle.UpgradeAll{
		Change:   change,
		Outdated: &lifecycle.Outdated{Registry: reg, Pre: o.Pre},
		Pin:      o.Pin,
		Force:    o.Plan.Force,
	}
	r := o.root
	stop, err := ua.Watch(ctx)
	if err != nil {
		return err
	}
	defer stop()
	plans, err := ua.Plan(ctx)
	if err != nil {
		return err
	}
	for _, s := range plans.Run() {
		if err := o.waitable(s.Installed.Package); err != nil {
			return err
		}
	}
	if err := showPlans(r, &o.Plan, plans); err != nil {
		return err
	}
	skipped := skippedError(plans)
	if len(plans.Steps) == 0 {
		if skipped == nil {
			fmt.Fprintln(r.IOStreams.ErrOut, "Every package runs its WANTED version: nothing to upgrade")
		}
		return skipped
	}
	if refused := plans.Refused(); refused != nil {
		if !o.Plan.Force {
			return exit.WithCode(exit.PlanRefused, refused)
		}
		fmt.Fprintf(r.IOStreams.ErrOut, "Warning: going ahead despite the blocking findings (--force)\n")
	}
	if o.Plan.DryRun == dryRunClient {
		return skipped
	}
	out := r.IOStreams.Out
	if o.Plan.Output != "" {
		out = r.IOStreams.ErrOut
	}
	ao := lifecycle.ApplyOptions{Wait: o.Wait.d, Atomic: o.Atomic, DryRun: o.Plan.DryRun == dryRunServer, Progress: r.IOStreams.ErrOut, Out: out}
	ev := lifecycle.StepEvents{
		Replanned: func(p *lifecycle.Plan) {
			if p.Blocking() || len(p.Findings) > 0 {
				_ = lifecycle.WriteText(r.IOStreams.ErrOut, p)
			}
		},
		Done: func(s *lifecycle.Step, updated *installed.Package) {
			if ao.DryRun {
				fmt.Fprintf(out, "%s would be upgraded from %s to %s (server dry run: nothing changed)\n", s.Plan.Package, s.Installed.Package.Version, updated.Version)
				return
			}
			fmt.Fprintf(out, "%s upgraded from %s to %s\n", s.Plan.Package, s.Installed.Package.Version, updated.Version)
		},
	}
	if err := ua.Apply(ctx, plans, ao, ev); err != nil {
		var se *lifecycle.StepError
		if errors.As(err, &se) && se.Refused {
			return exit.WithCode(exit.PlanRefused, err)
		}
		return changeError(ctx, err)
	}
	return skipped
}

// showPlans prints the combined plan: a document with -o; else text, to
// stdout on a dry run and to stderr before a change.
func showPlans(r *Root, f *PlanFlags, ps *lifecycle.Plans) error {
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
		if _, err := fmt.Fprintf(w, "Plan: upgrade --all: %s: %s\n", n, strings.Join(names, ", ")); err != nil {
			return err
		}
	}
	for _, b := range ps.Blocked {
		if _, err := fmt.Fprintf(w, "Not moving %s to %s: it %s\n", b.Package, b.Version, b.Reason); err != nil {
			return err
		}
	}
	for _, p := range ps.Steps {
		if err := lifecycle.WriteText(w, p); err != nil {
			return err
		}
	}
	return nil
}

// skippedError: packages whose registry could not be read were left as
// they are; that ends the run with status 1, after the others.
func skippedError(ps *lifecycle.Plans) error {
	if len(ps.Skipped) == 0 {
		return nil
	}
	return exit.WithCode(exit.Unread, fmt.Errorf("not upgraded, their registries could not be read (kubectl xpkg outdated says why): %s", strings.Join(ps.Skipped, ", ")))
}
