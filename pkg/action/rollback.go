package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// Rollback points an installed package back at the version of an earlier
// revision: Plan picks the revision and checks the change; Apply makes
// it. A change that fails puts its package back through it too (upgrade
// --atomic, upgrade --family --atomic, rename's undo), as Helm's --atomic
// runs its rollback action.
type Rollback struct {
	cfg *Config
	// ToRevision is the revision's name or number ("": the previous one).
	ToRevision string
	Activate   bool
	NoPlan     bool
	Options    ChangeOptions
	// Budget bounds putting a package back after a change failed: the
	// writes, sent again while the API server fails them, and the wait
	// (0: the longer of Options.Wait and DefaultRollbackBudget).
	Budget time.Duration

	// paused: the failed change paused the package instead of moving
	// its reference (rename), and putting it back is running it again,
	// its current revision active.
	paused bool
}

// NewRollback is a rollback on cfg's cluster.
func NewRollback(cfg *Config) *Rollback { return &Rollback{cfg: cfg} }

// DefaultRollbackBudget bounds an atomic change's rollback beyond --wait's:
// the change's own wait may be spent, or cut short by an interruption.
const DefaultRollbackBudget = 2 * time.Minute

// Plan finds the package name names and plans its rollback.
func (r *Rollback) Plan(ctx context.Context, name string) (*Plan, error) {
	in, err := r.cfg.ReadPackage(ctx, name)
	if err != nil {
		return nil, err
	}
	target, err := RollbackTarget(in, r.ToRevision)
	if err != nil {
		return nil, err
	}
	return r.cfg.change(r.Activate).plan(ctx, ActionRollback, in, target, r.NoPlan)
}

// Apply makes the rollback plan planned.
func (r *Rollback) Apply(ctx context.Context, plan *Plan) (*Result, error) {
	return r.cfg.change(r.Activate).apply(ctx, plan, r.Options)
}

// budget is how long putting a package back may take.
func (r *Rollback) budget() time.Duration {
	return cmp.Or(r.Budget, max(r.Options.Wait, DefaultRollbackBudget))
}

// putBack puts a package back as it was before a change that failed
// (was), from where the change left it (now): pointing at was's
// reference, or running again if the change paused it, the previous
// revision active whatever the activation policy; then it waits as
// Options.Wait says, for the definitions to be rewritten too. Within the
// budget, also past an interruption, the writes are sent again, backing
// off, while the API server fails them, but not once another writer has
// moved the package, which is theirs. It returns the package as it left
// it, and whether it points at was's reference again.
func (r *Rollback) putBack(ctx context.Context, was, now *installed.Package) (*installed.Package, bool, error) {
	budget := r.budget()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	delay := 500 * time.Millisecond
	for {
		back, err := r.write(rctx, was, now)
		if err == nil {
			return back, true, r.settle(rctx, back)
		}
		if errors.As(err, new(*cluster.ChangedError)) {
			return now, false, err
		}
		select {
		case <-rctx.Done():
			return now, false, fmt.Errorf("gave up after %s: %w", cluster.Round(budget), err)
		case <-time.After(delay):
		}
		r.cfg.Events.say("%s: the rollback failed (%v); trying again", was.KindName(), err)
		delay = min(2*delay, 10*time.Second)
	}
}

// write points now back at was's reference (an earlier try whose answer
// never came may have landed already), or, for a package the change
// paused, activates its current revision and unpauses it; it returns the
// package as written.
func (r *Rollback) write(ctx context.Context, was, now *installed.Package) (*installed.Package, error) {
	c := r.cfg.cluster
	if r.paused {
		if rev := currentRevision(ctx, c, was); rev != nil && !rev.IsActive() {
			if err := c.Activate(ctx, rev); err != nil {
				return nil, fmt.Errorf("activate revision %s: %w", rev.Name, err)
			}
		}
		if err := c.SetPaused(ctx, was, false, false); err != nil {
			return nil, fmt.Errorf("unpause %s: %w", was.KindName(), err)
		}
		return c.Get(ctx, was.Kind, was.Name)
	}
	back, err := c.SetPackage(ctx, now, was.Source, false)
	var changed *cluster.ChangedError
	if errors.As(err, &changed) && changed.Landed(was.Source) {
		return c.Get(ctx, was.Kind, was.Name)
	}
	return back, err
}

// currentRevision is p's current revision as it is now (nil when it
// cannot be read).
func currentRevision(ctx context.Context, c *cluster.Cluster, p *installed.Package) *installed.Revision {
	revs, err := c.Revisions(ctx, p)
	if err != nil {
		return nil
	}
	for _, rev := range revs {
		if rev.Name == p.CurrentRevision {
			return rev
		}
	}
	return nil
}

// settle activates the revision put back (the previous revision was
// active: whatever the policy) and waits for it within what is left of
// the budget (ctx).
func (r *Rollback) settle(ctx context.Context, back *installed.Package) error {
	o := ApplyOptions{Wait: r.Options.Wait}
	if o.Wait > 0 {
		o.Wait = time.Until(deadlineOf(ctx))
	}
	return r.cfg.change(true).settle(ctx, back, true, o, true)
}

// RollbackTarget is the package reference to roll back to: the image of
// the revision before the current one, or of the revision toRevision
// names (its name, or its number as kubectl xpkg describe lists it).
// Crossplane keeps the revisions revisionHistoryLimit allows; only those
// can be rolled back to.
func RollbackTarget(in *Installed, toRevision string) (string, error) {
	pkg := in.Package
	cur := in.Current()
	if toRevision != "" {
		n, numErr := strconv.ParseInt(toRevision, 10, 64)
		for _, r := range in.Revisions {
			if r.Name == toRevision || numErr == nil && r.Revision == n {
				if cur != nil && r.Name == cur.Name {
					return "", fmt.Errorf("revision %s is the current revision of %s: nothing to roll back to", r.Name, pkg.KindName())
				}
				if r.Image == "" {
					return "", fmt.Errorf("revision %s of %s names no image", r.Name, pkg.KindName())
				}
				return r.Image, nil
			}
		}
		return "", fmt.Errorf("%s has no revision %q: kubectl xpkg describe %s lists the %d it keeps", pkg.KindName(), toRevision, pkg.KindName(), len(in.Revisions))
	}
	if cur == nil {
		return "", fmt.Errorf("%s has no current revision yet: nothing to roll back from", pkg.KindName())
	}
	// The package points at an image that has no revision of its own (one
	// Crossplane could not unpack: it keeps the revision it had): back
	// to what still runs.
	if cur.Image != "" && pkg.Source != cur.Image {
		return cur.Image, nil
	}
	// Revisions are newest first: the first older one with another image.
	for _, r := range in.Revisions {
		if r.Revision < cur.Revision && r.Image != "" && r.Image != cur.Image {
			return r.Image, nil
		}
	}
	return "", fmt.Errorf("%s keeps no revision older than %s (its revisionHistoryLimit drops them): go back with kubectl xpkg upgrade %s VERSION",
		pkg.KindName(), cur.Name, pkg.KindName())
}
