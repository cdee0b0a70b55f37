package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// ApplyOptions say how a planned change is carried out.
type ApplyOptions struct {
	// Wait is how long to wait for the new revision to be installed,
	// healthy and established; 0 does not wait.
	Wait time.Duration
	// Atomic rolls back to the previous package reference when the wait
	// fails, and waits for that.
	Atomic bool
	// DryRun has the API server check the change without making it.
	DryRun bool
	// RollbackBudget bounds an atomic rollback, its retries and its wait
	// (0: the longer of Wait and DefaultRollbackBudget).
	RollbackBudget time.Duration
}

// AtomicError is a change that failed and was rolled back (or failed to
// roll back: RollbackErr).
type AtomicError struct {
	Package  string
	To, Back string
	Err      error
	// RollbackErr is why the rollback failed; Now is where the package
	// then points.
	RollbackErr error
	Now         string
}

func (e *AtomicError) Error() string {
	if e.RollbackErr != nil {
		return fmt.Sprintf("%s failed (%v), and the rollback to %s failed too: %v; %s points at %s: put it back with kubectl xpkg upgrade %s %s --force --wait",
			e.To, e.Err, e.Back, e.RollbackErr, e.Package, cmp.Or(e.Now, "an unknown reference"), e.Package, refVersion(e.Back))
	}
	return fmt.Sprintf("%s failed (%v); rolled back to %s, which is installed and healthy", e.To, e.Err, e.Back)
}

func (e *AtomicError) Unwrap() error { return e.Err }

// Apply points the package at target and, as asked, activates the new
// revision and waits until it is truly installed; with Atomic, a failure
// puts the previous reference back. An interruption is a failure too: the
// rollback goes on past it, within its own budget (kubectl's interrupt
// handler ends the process at a second signal).
func (c *Change) Apply(ctx context.Context, in *Installed, target string, o ApplyOptions) (*installed.Package, error) {
	pkg := in.Package
	updated, err := c.Cluster.SetPackage(ctx, pkg, target, o.DryRun)
	var unanswered *cluster.UnansweredError
	if o.Atomic && !o.DryRun && errors.As(err, &unanswered) {
		// Timed out, cut short or interrupted in the middle of the PATCH:
		// it may have landed, or land later.
		return c.followUnanswered(ctx, pkg, target, err, o)
	}
	if err != nil || o.DryRun {
		return updated, err
	}
	err = c.settle(ctx, updated, c.Activate, o, false)
	var changed *cluster.ChangedError
	if err == nil || !o.Atomic || errors.As(err, &changed) && changed.Waiting {
		return updated, err // another writer's reference is not rolled back
	}
	return c.rollBack(ctx, pkg, updated, target, err, o)
}

// followUnanswered follows a change whose answer never came, under
// --atomic, within the rollback's budget: rolled back as soon as it is
// seen to have landed; left when another writer points the package
// elsewhere; and when it has not landed once the budget is spent, the
// error says where the package points.
func (c *Change) followUnanswered(ctx context.Context, pkg *installed.Package, target string, cause error, o ApplyOptions) (*installed.Package, error) {
	budget := c.rollback(o).budget()
	c.Events.say("%s: %v\n%s: following it for up to %s, to roll it back if it lands", pkg.KindName(), cause, pkg.KindName(), cluster.Round(budget))
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	for {
		now, err := c.Cluster.Get(fctx, pkg.Kind, pkg.Name)
		switch {
		case err == nil && now.Source == target:
			return c.rollBack(ctx, pkg, now, target, cause, o)
		case err == nil && now.Source != pkg.Source:
			return now, fmt.Errorf("%w; %s now points at %s, which another writer set: not rolled back", cause, pkg.KindName(), now.Source)
		}
		select {
		case <-fctx.Done():
			where := "where it pointed: " + pkg.Source
			if err != nil {
				where = "where it points could not be read: " + err.Error()
			}
			return pkg, fmt.Errorf("%w; it had not landed %s later, %s", cause, cluster.Round(budget), where)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// rollBack puts the package (updated, pointing at target) back as it was
// (pkg) through the Rollback action, within its budget, and says how the
// change ended.
func (c *Change) rollBack(ctx context.Context, pkg, updated *installed.Package, target string, cause error, o ApplyOptions) (*installed.Package, error) {
	why := "failed"
	if ctx.Err() != nil {
		why = "was interrupted"
	}
	c.Events.say("%s: %s %s: %v\n%s: rolling back to %s", pkg.KindName(), target, why, cause, pkg.KindName(), pkg.Source)
	back, moved, err := c.rollback(o).putBack(ctx, pkg, updated)
	ae := &AtomicError{Package: pkg.KindName(), To: target, Back: pkg.Source, Err: cause, Now: target, RollbackErr: err}
	var changed *cluster.ChangedError
	switch {
	case moved:
		ae.Now = pkg.Source
	case errors.As(err, &changed):
		ae.Now = changed.Now
	}
	return back, ae
}

// rollback is the Rollback action that puts the package back when the
// change fails, reporting where the change does, within o's rollback
// budget.
func (c *Change) rollback(o ApplyOptions) *Rollback {
	rb := NewRollback(&Config{cluster: c.Cluster, Limits: c.Limits, XPNamespace: c.XPNamespace, Events: c.Events})
	rb.Options, rb.Budget = ChangeOptions{Wait: o.Wait}, o.RollbackBudget
	return rb
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// Activated activates the revision of the package's present reference
// (under Manual activation) and waits as asked: for a package installed
// with manual activation, nothing else needs changing.
func (c *Change) Activated(ctx context.Context, p *installed.Package, o ApplyOptions) error {
	if p.ActivationPolicy != "Manual" {
		c.Events.say("%s activates its revisions automatically: nothing to activate", p.KindName())
	}
	return c.settle(ctx, p, true, o, false)
}

// settle activates (under Manual activation, when asked) and waits; after
// a rollback, for the definitions to be rewritten too.
func (c *Change) settle(ctx context.Context, p *installed.Package, activate bool, o ApplyOptions, rolledBack bool) error {
	start := time.Now()
	if p.ActivationPolicy == "Manual" && activate {
		rev, err := c.Cluster.WaitRevision(ctx, p, p.Source, max(o.Wait, time.Minute))
		if err != nil {
			return err
		}
		if err := c.Cluster.Activate(ctx, rev); err != nil {
			return fmt.Errorf("activate revision %s: %w", rev.Name, err)
		}
		c.Events.result("revision %s activated", rev.Name)
	}
	if o.Wait == 0 {
		return nil
	}
	return waitInstalled(ctx, c.Cluster, p, o.Wait-time.Since(start), start, rolledBack, c.Events)
}

// waitInstalled waits until the package is installed and healthy, with
// its dependencies, and every definition its revision installed is
// established (after a rollback: WaitReestablished); failures of
// definitions count from since. d bounds it all. Crossplane can report
// Healthy before a runtime it has just changed catches up, and take it
// back a moment later: readiness counts once it still holds after
// HoldReady.
func waitInstalled(ctx context.Context, c *cluster.Cluster, p *installed.Package, d time.Duration, since time.Time, rolledBack bool, ev Events) error {
	out := ev.progress()
	established := c.WaitEstablished
	if rolledBack {
		established = c.WaitReestablished
	}
	deadline := time.Now().Add(d)
	// The steps share d: a timeout reports the whole of it.
	whole := func(err error) error {
		if te := (*cluster.WaitTimeoutError)(nil); errors.As(err, &te) {
			te.After = d
		}
		return err
	}
	for {
		if err := c.WaitReady(ctx, p.Kind, p.Name, p.Source, time.Until(deadline), out); err != nil {
			return whole(err)
		}
		if err := established(ctx, p, time.Until(deadline), since, out); err != nil {
			return whole(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(HoldReady):
		}
		now, err := c.Get(ctx, p.Kind, p.Name)
		if err != nil {
			return err
		}
		if p.Source != "" && now.Source != p.Source {
			return &cluster.ChangedError{Package: now.KindName(), Planned: p.Source, Now: now.Source, Waiting: true}
		}
		r := c.Dialect().Readiness(now)
		if r.Ready {
			return nil
		}
		ev.say("%s: not ready again a moment later (%s): waiting on", now.KindName(), strings.Join(r.Pending, ", "))
		if time.Until(deadline) <= 0 {
			return &cluster.WaitTimeoutError{What: now.KindName(), After: d, Pending: r.Pending}
		}
	}
}

// HoldReady is how long a package must stay ready for a wait to end.
var HoldReady = time.Second
