package action

import (
	"context"
	"fmt"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// Upgrade points an installed package at another version: Plan reads the
// package, picks the version and checks the change; Apply makes it, as
// planned.
type Upgrade struct {
	cfg *Config
	// Version is a tag, a digest or a semver constraint (the newest
	// matching tag); "" is the newest stable tag above the current one.
	Version string
	// Pre counts pre-releases; Pin writes the tag's digest too; Activate
	// activates the new revision under Manual activation.
	Pre, Pin, Activate bool
	// NoPlan makes the change without planning it.
	NoPlan  bool
	Options ChangeOptions
}

// ChangeOptions say how an upgrade or rollback is carried out.
type ChangeOptions struct {
	// Wait for the package to be installed, healthy and established.
	Wait time.Duration
	// Atomic rolls back when the wait fails (upgrade only).
	Atomic bool
	// DryRun has the API server check the change without making it.
	DryRun bool
}

// NewUpgrade is an upgrade on cfg's cluster.
func NewUpgrade(cfg *Config) *Upgrade { return &Upgrade{cfg: cfg} }

// applyOptions are o for Change.Apply.
func (o ChangeOptions) applyOptions() ApplyOptions {
	return ApplyOptions{Wait: o.Wait, Atomic: o.Atomic, DryRun: o.DryRun}
}

// Result is what a change did.
type Result struct {
	// Action is upgrade or rollback; Package the package as kind/name.
	Action, Package string
	// From is the version the plan's header names (what ran); To the
	// version the package now points at.
	From, To string
	// DryRun: the API server checked the change and made none.
	DryRun bool
}

// Plan finds the package name names (NAME or KIND/NAME) and plans its
// upgrade. It returns nil when there is nothing to do: the package is
// already at the version (said on progress).
func (u *Upgrade) Plan(ctx context.Context, name string) (*Plan, error) {
	p, err := u.lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	in, err := u.cfg.installed(ctx, p)
	if err != nil {
		return nil, err
	}
	target, err := in.Target(ctx, u.Version, u.Pre)
	if err != nil {
		return nil, err
	}
	if u.Pin {
		if target, err = in.Pin(ctx, target); err != nil {
			return nil, err
		}
	}
	if target == p.Source {
		u.cfg.Events.say("%s is already at %s: nothing to do", p.KindName(), p.Version)
		return nil, nil
	}
	return u.cfg.change(u.Activate).plan(ctx, ActionUpgrade, in, target, u.NoPlan)
}

// Activated activates the revision of the present version of the package
// name names (under Manual activation) and waits as asked: nothing else
// changes.
func (u *Upgrade) Activated(ctx context.Context, name string) error {
	p, err := u.lookup(ctx, name)
	if err != nil {
		return err
	}
	return changeError(ctx, u.cfg.change(true).Activated(ctx, p, ApplyOptions{Wait: u.Options.Wait}))
}

// Apply makes the change plan planned.
func (u *Upgrade) Apply(ctx context.Context, plan *Plan) (*Result, error) {
	return u.cfg.change(u.Activate).apply(ctx, plan, u.Options)
}

// lookup finds the package, and refuses a wait that could only time out.
func (u *Upgrade) lookup(ctx context.Context, name string) (*installed.Package, error) {
	c, err := u.cfg.connect()
	if err != nil {
		return nil, err
	}
	p, err := c.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	return p, Waitable(p, u.Options.Wait, u.Activate)
}

// Waitable refuses a wait for a package with Manual activation without
// activating: its new revision waits to be activated, so the wait could
// only time out.
func Waitable(p *installed.Package, wait time.Duration, activate bool) error {
	if wait == 0 || activate || p.ActivationPolicy != "Manual" {
		return nil
	}
	return &exit.UsageError{Err: fmt.Errorf("%s activates revisions by hand: with --wait, pass --activate too (or upgrade without --wait and activate later)", p.KindName()),
		Hint: "See 'kubectl xpkg upgrade --help' for usage."}
}

// installed reads what planning a change of p takes, through the
// cluster's registry.
func (c *Config) installed(ctx context.Context, p *installed.Package) (*Installed, error) {
	reg, err := c.Registry(ctx)
	if err != nil {
		return nil, err
	}
	return ReadInstalled(ctx, reg, p)
}

// change is the Change of upgrade and rollback on c's cluster.
func (c *Config) change(activate bool) *Change {
	return &Change{Cluster: c.cluster, Limits: c.Limits, XPNamespace: c.XPNamespace, Activate: activate, Events: c.Events, cfg: c}
}

// plan plans moving in to target; without a plan (noPlan) it says so and
// returns one that checked nothing.
func (c *Change) plan(ctx context.Context, action string, in *Installed, target string, noPlan bool) (*Plan, error) {
	if noPlan {
		c.Events.say("Warning: going ahead without a plan (--no-plan): nothing checked what the %s does", action)
		p := NewPlan(action, in.Package.KindName(), in.Image, target)
		p.in, p.unplanned = in, true
		return p, nil
	}
	p, err := c.Plan(ctx, action, in, target)
	if err != nil {
		// --force overrides a plan's findings, never a missing plan.
		return nil, fmt.Errorf("nothing changed, the %s could not be planned (--no-plan makes it without a plan): %w", action, err)
	}
	return p, nil
}

// apply makes the change plan planned and says what it did.
func (c *Change) apply(ctx context.Context, plan *Plan, o ChangeOptions) (*Result, error) {
	updated, err := c.Apply(ctx, plan.in, plan.To, o.applyOptions())
	if err != nil {
		return nil, changeError(ctx, fmt.Errorf("%s %s: %w", plan.Action, plan.Package, err))
	}
	return &Result{Action: plan.Action, Package: plan.Package, From: refVersion(plan.From), To: updated.Version, DryRun: o.DryRun}, nil
}
