package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
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
	// Progress receives progress lines; Out the results (a revision
	// activated).
	Progress, Out io.Writer
}

// AtomicError is a change that failed and was rolled back (or failed to
// roll back: RollbackErr).
type AtomicError struct {
	Package     string
	To, Back    string
	Err         error
	RollbackErr error
}

func (e *AtomicError) Error() string {
	if e.RollbackErr != nil {
		return fmt.Sprintf("%s failed (%v), and the rollback to %s failed too: %v", e.To, e.Err, e.Back, e.RollbackErr)
	}
	return fmt.Sprintf("%s failed (%v); rolled back to %s, which is installed and healthy", e.To, e.Err, e.Back)
}

func (e *AtomicError) Unwrap() error { return e.Err }

// Apply points the package at target and, as asked, activates the new
// revision and waits until it is truly installed; with Atomic, a failure
// puts the previous reference back.
func (c *Change) Apply(ctx context.Context, in *Installed, target string, o ApplyOptions) (*cluster.Package, error) {
	pkg := in.Package
	updated, err := c.Cluster.SetPackage(ctx, pkg, target, o.DryRun)
	if err != nil || o.DryRun {
		return updated, err
	}
	err = c.settle(ctx, updated, c.Activate, o)
	var moved *cluster.MovedError
	if err == nil || !o.Atomic || errors.As(err, &moved) {
		return updated, err // another writer's reference is not rolled back
	}
	if ctx.Err() != nil {
		return updated, err // interrupted: leave it as it is, and say so
	}
	fmt.Fprintf(o.Progress, "%s: %s failed: %v\n%s: rolling back to %s\n", KindName(pkg), target, err, KindName(pkg), pkg.Source)
	ae := &AtomicError{Package: KindName(pkg), To: target, Back: pkg.Source, Err: err}
	back, rerr := c.Cluster.SetPackage(ctx, updated, pkg.Source, false)
	if rerr == nil {
		// The previous revision was active: activate it again whatever
		// the policy.
		rerr = c.settle(ctx, back, true, o)
	}
	ae.RollbackErr = rerr
	return back, ae
}

// Activated activates the revision of the package's present reference
// (under Manual activation) and waits as asked: for a package installed
// with manual activation, nothing else needs changing.
func (c *Change) Activated(ctx context.Context, p *cluster.Package, o ApplyOptions) error {
	if p.ActivationPolicy != "Manual" {
		fmt.Fprintf(o.Progress, "%s activates its revisions automatically: nothing to activate\n", KindName(p))
	}
	return c.settle(ctx, p, true, o)
}

// settle activates (under Manual activation, when asked) and waits.
func (c *Change) settle(ctx context.Context, p *cluster.Package, activate bool, o ApplyOptions) error {
	start := time.Now()
	if p.ActivationPolicy == "Manual" && activate {
		rev, err := c.Cluster.WaitRevision(ctx, p, p.Source, max(o.Wait, time.Minute))
		if err != nil {
			return err
		}
		if err := c.Cluster.Activate(ctx, rev); err != nil {
			return fmt.Errorf("activate revision %s: %w", rev.Name, err)
		}
		fmt.Fprintf(o.Out, "revision %s activated\n", rev.Name)
	}
	if o.Wait == 0 {
		return nil
	}
	return WaitInstalled(ctx, c.Cluster, p, o.Wait-time.Since(start), start, o.Progress)
}

// WaitInstalled waits until the package is installed and healthy, with
// its dependencies, and every definition its revision installed is
// established; failures of definitions count from since. d bounds it all.
// Crossplane can report Healthy before a runtime it has just changed
// catches up, and take it back a moment later: readiness counts once it
// still holds after HoldReady.
func WaitInstalled(ctx context.Context, c *cluster.Cluster, p *cluster.Package, d time.Duration, since time.Time, out io.Writer) error {
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
		if err := c.WaitEstablished(ctx, p, time.Until(deadline), since, out); err != nil {
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
			return &cluster.MovedError{Package: KindName(now), Want: p.Source, Now: now.Source}
		}
		r := c.Dialect().Readiness(now)
		if r.Ready {
			return nil
		}
		fmt.Fprintf(out, "%s: not ready again a moment later (%s): waiting on\n", KindName(now), strings.Join(r.Pending, ", "))
		if time.Until(deadline) <= 0 {
			return &cluster.WaitTimeoutError{What: KindName(now), After: d, Pending: r.Pending}
		}
	}
}

// HoldReady is how long a package must stay ready for a wait to end.
var HoldReady = time.Second
