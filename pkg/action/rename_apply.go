package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// RenameResult is what a rename did.
type RenameResult struct {
	From, To string
	// Objects were handed over; Live objects of their kinds are there
	// after as before.
	Objects int
	Live    int64
	DryRun  bool
}

// RenameError is a rename that failed at Step and was undone (or failed
// to be: UndoErr).
type RenameError struct {
	From, To, Step string
	Err, UndoErr   error
	// Done is what stays done when nothing could be undone (the old
	// package was being deleted).
	Done bool
}

func (e *RenameError) Error() string {
	switch {
	case e.Done:
		return fmt.Sprintf("%s runs as %s, but %s failed: %v; finish it by hand (kubectl delete %s), nothing more to undo", e.From, e.To, e.Step, e.Err, strings.Replace(e.From, "/", " ", 1))
	case e.UndoErr != nil:
		return fmt.Sprintf("rename of %s to %s failed at %q (%v), and undoing it failed too: %v; kubectl xpkg doctor shows where the packages stand", e.From, e.To, e.Step, e.Err, e.UndoErr)
	}
	return fmt.Sprintf("rename of %s to %s failed at %q (%v); undone: %s is installed and healthy under its name again, and %s is gone", e.From, e.To, e.Step, e.Err, e.From, e.To)
}

func (e *RenameError) Unwrap() error { return e.Err }

// renameUndoBudget bounds the undo beyond the rename's own timeout, which
// may be spent, or cut short by an interruption.
const renameUndoBudget = 5 * time.Minute

// handOver carries out one rename: the steps done, and how to undo them.
type handOver struct {
	r        *Rename
	c        *cluster.Cluster
	rp       *RenamePlan
	deadline time.Time
	progress io.Writer
	created  *installed.Package
	oldUIDs  map[string]bool
	undo     []func(context.Context) error
	step     string
}

// Apply renames the package as planned, after checking that the package
// is still as planned. A step that fails undoes the steps before it, in
// reverse, with a context of its own that an interruption does not end.
func (r *Rename) Apply(ctx context.Context, rp *RenamePlan) (*RenameResult, error) {
	c, err := r.cfg.Cluster()
	if err != nil {
		return nil, err
	}
	if err := r.unchanged(ctx, c, rp); err != nil {
		return nil, exit.WithCode(exit.PlanChanged, err)
	}
	res := &RenameResult{From: rp.Package, To: rp.To, Objects: len(rp.objects), Live: rp.Live, DryRun: r.DryRun}
	if r.DryRun {
		return res, r.dryRun(ctx, c, rp)
	}
	h := &handOver{r: r, c: c, rp: rp, deadline: time.Now().Add(r.Timeout), progress: r.cfg.Events.progress()}
	runCtx, cancel := context.WithDeadline(ctx, h.deadline)
	defer cancel()
	if err := h.run(runCtx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			// --timeout ran out in the middle of a request.
			err = &cluster.WaitTimeoutError{What: "the step to end (--timeout)", After: r.Timeout, Pending: []string{"an answer of the API server"}}
		}
		return nil, h.fail(ctx, err)
	}
	return res, nil
}

// unchanged checks that the package is the one planned for, at its
// spec, and that the new name is still free.
func (r *Rename) unchanged(ctx context.Context, c *cluster.Cluster, rp *RenamePlan) error {
	now, err := c.Get(ctx, rp.old.Kind, rp.old.Name)
	if err != nil {
		return err
	}
	what := ""
	switch {
	case now.Object.GetUID() != rp.old.Object.GetUID():
		what = "it was deleted and made again"
	case now.Generation != rp.old.Generation || now.Source != rp.old.Source:
		what = "its spec changed"
	case now.CurrentRevision != rp.old.CurrentRevision:
		what = "its current revision changed"
	}
	if what == "" {
		if taken, _ := c.Get(ctx, rp.old.Kind, rp.newName); taken != nil {
			what = rp.To + " was made"
		}
	}
	if what != "" {
		return &cluster.ChangedError{Package: rp.Package, Action: ActionRename, What: what}
	}
	return nil
}

// dryRun has the API server check the writes that need no wait: the new
// package, and the old one's pause.
func (r *Rename) dryRun(ctx context.Context, c *cluster.Cluster, rp *RenamePlan) error {
	if _, err := c.Create(ctx, newPackageObject(rp.old, rp.newName), true); err != nil {
		return fmt.Errorf("create %s (server dry run): %w", rp.To, err)
	}
	if err := c.SetPaused(ctx, rp.old, true, true); err != nil {
		return fmt.Errorf("pause %s (server dry run): %w", rp.Package, err)
	}
	return nil
}

// newPackageObject is the old package under name, paused: its spec as
// it is, its labels and annotations but for what a GitOps tool tracks it
// by and kubectl's record of the last apply.
func newPackageObject(old *installed.Package, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": old.Object.GetAPIVersion(), "kind": old.Object.GetKind(),
		"spec": runtime.DeepCopyJSONValue(old.Object.Object["spec"]),
	}}
	u.SetName(name)
	u.SetNamespace(old.Object.GetNamespace())
	labels := map[string]string{}
	for k, v := range old.Object.GetLabels() {
		if !isGitOpsMark(k) {
			labels[k] = v
		}
	}
	annotations := map[string]string{cluster.PausedAnnotation: "true"}
	for k, v := range old.Object.GetAnnotations() {
		if !isGitOpsMark(k) && k != "kubectl.kubernetes.io/last-applied-configuration" && k != cluster.PausedAnnotation {
			annotations[k] = v
		}
	}
	if len(labels) > 0 {
		u.SetLabels(labels)
	}
	u.SetAnnotations(annotations)
	return u
}

// run takes the steps in order; each that changes something says how to
// undo it first.
func (h *handOver) run(ctx context.Context) error {
	for _, s := range []struct {
		name string
		do   func(context.Context) error
	}{
		{"create the new package", h.create},
		{"deactivate the old package", h.deactivate},
		{"wait for the old package to let go", h.released},
		{"unpause the new package", h.unpause},
		{"wait for the new package", h.installed},
	} {
		h.step = s.name
		if err := s.do(ctx); err != nil {
			return err
		}
	}
	h.undo = nil // the new package runs: from here on there is no going back
	h.step = "delete the old package"
	return h.finish(ctx)
}

// say reports a step done.
func (h *handOver) say(format string, args ...any) {
	fmt.Fprintf(h.progress, format+"\n", args...)
}

// remaining is what is left of the rename's timeout.
func (h *handOver) remaining() time.Duration { return time.Until(h.deadline) }

// fail undoes what was done, in reverse, and says how the rename ended.
func (h *handOver) fail(ctx context.Context, err error) error {
	re := &RenameError{From: h.rp.Package, To: h.rp.To, Step: h.step, Err: err}
	if h.undo == nil && h.step == "delete the old package" {
		re.Done = true
		return waitError(re)
	}
	undoCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.r.Timeout+renameUndoBudget)
	defer cancel()
	h.deadline = time.Now().Add(h.r.Timeout + renameUndoBudget)
	fmt.Fprintf(h.progress, "%s: %v; undoing the rename\n", h.step, exit.Message(err))
	for i := len(h.undo) - 1; i >= 0; i-- {
		if uerr := h.undo[i](undoCtx); uerr != nil {
			re.UndoErr = uerr
			return exit.WithCode(exit.RollbackFailed, re)
		}
	}
	if changed := (*cluster.ChangedError)(nil); errors.As(err, &changed) {
		return exit.WithCode(exit.PlanChanged, re)
	}
	return waitError(re)
}

// ownerRef is a plain owner reference to the package.
func ownerRef(p *installed.Package) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: p.Object.GetAPIVersion(), Kind: p.Object.GetKind(), Name: p.Name, UID: p.Object.GetUID()}
}
