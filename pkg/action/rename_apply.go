package action

import (
	"context"
	"errors"
	"fmt"
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
	// Undone: the rename recorded was undone (--undo). LeftOver: the
	// rename recorded had deleted the old package already, and only the
	// new one was left to check.
	Undone, LeftOver bool
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
		return fmt.Sprintf("%s runs as %s, but %s failed: %v; nothing more to undo: finish it with kubectl xpkg rename %s %s --yes", e.From, e.To, e.Step, e.Err, e.From, newName(e.To))
	case e.UndoErr != nil:
		return fmt.Sprintf("rename of %s to %s failed at %q (%v), and undoing it failed too: %v; both packages record where it stopped: kubectl xpkg doctor shows where they stand, and kubectl xpkg rename %s %s --undo --yes goes on undoing it", e.From, e.To, e.Step, e.Err, e.UndoErr, e.From, newName(e.To))
	}
	return fmt.Sprintf("rename of %s to %s failed at %q (%v); undone: %s is installed and healthy under its name again, and %s is gone", e.From, e.To, e.Step, e.Err, e.From, e.To)
}

func (e *RenameError) Unwrap() error { return e.Err }

// newName is the name of a package named kind/name.
func newName(kindName string) string {
	_, name, _ := strings.Cut(kindName, "/")
	return name
}

// renameUndoBudget bounds the undo beyond the rename's own timeout, which
// may be spent, or cut short by an interruption.
const renameUndoBudget = 5 * time.Minute

// handOver carries out one rename: the steps done, and how to undo them.
type handOver struct {
	r        *Rename
	c        *cluster.Cluster
	rp       *RenamePlan
	deadline time.Time
	// ev is the rename's Events: each step is said as it is done.
	ev      Events
	created *installed.Package
	oldUIDs map[string]string // uid → name of the old package's revisions
	undo    []undoStep
	step    string
	// op is the record written on the packages before each step.
	op *installed.Operation
	// expect is what the rename's own writes have made so far, which
	// another writer's would undo (guard).
	expect expectations
}

// undoStep undoes forward step n.
type undoStep struct {
	n    int
	name string
	do   func(context.Context) error
}

// Apply renames the package as planned, after checking that the package
// is still as planned. A step that fails undoes the steps before it, in
// reverse, with a context of its own that an interruption does not end.
func (r *Rename) Apply(ctx context.Context, rp *RenamePlan) (*RenameResult, error) {
	c, err := r.cfg.connect()
	if err != nil {
		return nil, err
	}
	if !rp.leftOver {
		if err := r.unchanged(ctx, c, rp); err != nil {
			return nil, exit.WithCode(exit.PlanChanged, err)
		}
	}
	res := &RenameResult{From: rp.Package, To: rp.To, Objects: len(rp.objects), Live: rp.Live, DryRun: r.DryRun}
	if r.DryRun && rp.Resume != nil {
		return res, nil // what a resumed rename writes depends on what the run cut short did
	}
	if r.DryRun {
		return res, r.dryRun(ctx, c, rp)
	}
	h := r.newHandOver(c, rp)
	if rp.leftOver {
		res.LeftOver = true
		return res, h.finishLeftOver(ctx)
	}
	if rp.Undo {
		res.Undone = true
		return res, h.undoRecorded(ctx)
	}
	runCtx, cancel := context.WithDeadline(ctx, h.deadline)
	defer cancel()
	guarded, stop := context.WithCancelCause(runCtx)
	guardDone := make(chan struct{})
	go func() { h.guard(guarded, stop); close(guardDone) }()
	err = h.run(guarded)
	stop(nil)
	<-guardDone // the undo changes what the guard reads
	if err != nil {
		var aw *anotherWriter
		if cause := context.Cause(guarded); errors.As(cause, &aw) {
			err = aw
		} else if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
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
	if what == "" && rp.Resume == nil {
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
	if _, err := c.Create(ctx, newPackageObject(rp.old, rp.newName, nil), true); err != nil {
		return fmt.Errorf("create %s (server dry run): %w", rp.To, err)
	}
	if err := c.SetPaused(ctx, rp.old, true, true); err != nil {
		return fmt.Errorf("pause %s (server dry run): %w", rp.Package, err)
	}
	return nil
}

// newPackageObject is the old package under name, paused, with the record
// of the rename (op): its spec as it is, its labels and annotations but
// for what a GitOps tool tracks it by and kubectl's record of the last
// apply.
func newPackageObject(old *installed.Package, name string, op *installed.Operation) *unstructured.Unstructured {
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
	if op != nil {
		annotations[installed.OperationAnnotation] = op.String()
	}
	for k, v := range old.Object.GetAnnotations() {
		if !isGitOpsMark(k) && k != "kubectl.kubernetes.io/last-applied-configuration" && k != cluster.PausedAnnotation && k != installed.OperationAnnotation {
			annotations[k] = v
		}
	}
	if len(labels) > 0 {
		u.SetLabels(labels)
	}
	u.SetAnnotations(annotations)
	return u
}

// renameSteps names the rename's steps, in order (the record's step n is
// renameSteps[n-1]).
var renameSteps = []string{
	"create the new package",
	"deactivate the old package",
	"wait for the old package to let go",
	"unpause the new package",
	"wait for the new package",
	"delete the old package",
}

// run takes the steps in order, each recorded on the packages before it
// begins; each that changes something says how to undo it first. Every
// step finds done what a rename cut short did already, so a rename
// resumed runs them all again.
func (h *handOver) run(ctx context.Context) error {
	for i, do := range []func(context.Context) error{h.create, h.deactivate, h.released, h.unpause, h.installed, h.finish} {
		h.step = renameSteps[i]
		if i == len(renameSteps)-1 {
			h.undo = nil // the new package runs: from here on there is no going back
		}
		if err := h.record(ctx, i+1, false); err != nil {
			return err
		}
		if err := do(ctx); err != nil {
			return err
		}
	}
	return h.forget(ctx)
}

// remaining is what is left of the rename's timeout.
func (h *handOver) remaining() time.Duration { return time.Until(h.deadline) }

// fail undoes what was done, in reverse, and says how the rename ended.
func (h *handOver) fail(ctx context.Context, err error) error {
	re := &RenameError{From: h.rp.Package, To: h.rp.To, Step: h.step, Err: err}
	if h.undo == nil && h.step == renameSteps[len(renameSteps)-1] {
		re.Done = true
		return waitError(re)
	}
	undoCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.r.Timeout+renameUndoBudget)
	defer cancel()
	h.deadline = time.Now().Add(h.r.Timeout + renameUndoBudget)
	h.ev.say("%s: %v; undoing the rename", h.step, exit.Message(err))
	if uerr := h.undoAll(undoCtx); uerr != nil {
		re.UndoErr = uerr
		return exit.WithCode(exit.RollbackFailed, re)
	}
	var changed *cluster.ChangedError
	var aw *anotherWriter
	if errors.As(err, &changed) || errors.As(err, &aw) {
		return exit.WithCode(exit.PlanChanged, re)
	}
	return waitError(re)
}

// ownerRef is a plain owner reference to the package.
func ownerRef(p *installed.Package) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: p.Object.GetAPIVersion(), Kind: p.Object.GetKind(), Name: p.Name, UID: p.Object.GetUID()}
}
