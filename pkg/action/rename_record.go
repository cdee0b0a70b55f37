package action

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// A rename records on both packages, before each step, which step it
// begins (installed.OperationAnnotation): killed (SIGKILL, a closed CI
// runner), it leaves a record that doctor reads (unfinished-operation)
// and that the same command, run again, resumes or (--undo) undoes.

// newOperationID tells one rename from another: when it began, and a
// few random bytes.
func newOperationID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// newHandOver prepares the rename of rp: a new record, or the one a
// rename cut short left.
func (r *Rename) newHandOver(c *cluster.Cluster, rp *RenamePlan) *handOver {
	h := &handOver{r: r, c: c, rp: rp, deadline: time.Now().Add(r.Timeout), ev: r.cfg.Events, created: rp.created}
	if rp.Resume != nil {
		op := *rp.Resume
		h.op = &op
	} else {
		h.op = &installed.Operation{Operation: ActionRename, ID: newOperationID(), From: rp.Package, To: rp.To, Of: len(renameSteps)}
	}
	return h
}

// record writes the step begun (n, or with undo the step being undone)
// on both packages: the old one first, then the new one once made.
func (h *handOver) record(ctx context.Context, n int, undo bool) error {
	h.op.Step, h.op.Undo, h.op.Of = n, undo, len(renameSteps)
	h.op.StepName = renameSteps[n-1]
	if undo {
		h.op.StepName = "undo: " + renameSteps[n-1]
	}
	if h.rp.old != nil {
		if err := h.c.SetOperation(ctx, h.rp.old, h.op); err != nil && !gone(err) {
			return fmt.Errorf("record step %d of the rename on %s: %w", n, h.rp.Package, err)
		}
	}
	if h.created != nil {
		if err := h.c.SetOperation(ctx, h.created, h.op); err != nil && !gone(err) {
			return fmt.Errorf("record step %d of the rename on %s: %w", n, h.rp.To, err)
		}
	}
	return nil
}

// forget removes the record from the package that stays: the rename is
// done (the new one) or undone (the old one).
func (h *handOver) forget(ctx context.Context) error {
	return h.expect.changing(func() error {
		h.expect.forgotten.Store(true) // the guard skips the record from here on
		for _, p := range []*installed.Package{h.created, h.rp.old} {
			if p == nil {
				continue
			}
			if err := h.c.SetOperation(ctx, p, nil); err != nil && !gone(err) {
				return fmt.Errorf("remove the record of the rename from %s: %w", p.KindName(), err)
			}
		}
		return nil
	}, func() {})
}

// gone: the write found its object deleted (or made again).
func gone(err error) bool {
	var ce *cluster.ChangedError
	return apierrors.IsNotFound(err) || errors.As(err, &ce) && ce.Replaced
}

// undoAll undoes the steps done, the last first, each recorded before
// it, and then removes the record.
func (h *handOver) undoAll(ctx context.Context) error {
	// The last step first: by step, whatever order a resumed run found
	// them done in (the new package paused again before the old one
	// runs, and deleted last).
	slices.SortStableFunc(h.undo, func(a, b undoStep) int { return cmp.Compare(a.n, b.n) })
	for i := len(h.undo) - 1; i >= 0; i-- {
		u := h.undo[i]
		if err := h.record(ctx, u.n, true); err != nil {
			return err
		}
		if err := u.do(ctx); err != nil {
			return fmt.Errorf("%s: %w", u.name, err)
		}
	}
	if h.created != nil {
		h.created = nil // deleted by the undo
	}
	return h.forget(ctx)
}

// undoRecorded undoes what a rename cut short did, from its record:
// the new package paused and out of the Lock if it was let run, the old
// one active, unpaused and healthy again, the new one deleted.
func (h *handOver) undoRecorded(ctx context.Context) error {
	ctx, cancel := context.WithDeadline(ctx, h.deadline)
	defer cancel()
	op := h.rp.Resume
	if h.rp.old.Object.GetDeletionTimestamp() != nil {
		return fmt.Errorf("%s is being deleted: the rename cannot be undone, only finished (kubectl xpkg rename %s %s --yes)", h.rp.Package, h.rp.Package, op.NewName())
	}
	h.step = "undo"
	if h.created != nil {
		h.undo = append(h.undo, undoStep{1, "delete the new package", h.deleteNew})
	}
	if op.Step >= 2 || h.rp.old.Paused() || !isActiveNamed(h.rp.revs, h.rp.old.CurrentRevision) {
		h.undo = append(h.undo, undoStep{2, "put the old package back", h.restoreOld})
	}
	if h.created != nil && (op.Step >= 4 || !h.created.Paused()) {
		h.undo = append(h.undo, undoStep{4, "pause the new package again", h.deactivateNew})
	}
	if err := h.undoAll(ctx); err != nil {
		return exit.WithCode(exit.RollbackFailed, fmt.Errorf("undo of rename %s of %s to %s failed: %w; both packages record where it stopped: kubectl xpkg doctor shows where they stand, and %s goes on undoing it",
			op.ID, h.rp.Package, h.rp.To, err, diagnose.RenameCommand(op, true)))
	}
	return nil
}

// isActiveNamed: the revision called name is among revs and active.
func isActiveNamed(revs []*installed.Revision, name string) bool {
	for _, r := range revs {
		if r.Name == name {
			return r.IsActive()
		}
	}
	return false
}

// finishLeftOver ends a rename cut short once the old package was
// deleted: the new package installed and healthy, its record removed.
func (h *handOver) finishLeftOver(ctx context.Context) error {
	ctx, cancel := context.WithDeadline(ctx, h.deadline)
	defer cancel()
	if h.rp.Undo {
		return fmt.Errorf("%s is deleted already: the rename cannot be undone, only finished (kubectl xpkg rename %s %s --yes)", h.rp.Package, h.rp.Package, h.rp.newName)
	}
	if h.created.Paused() {
		if err := h.c.SetPaused(ctx, h.created, false, false); err != nil {
			return fmt.Errorf("unpause %s: %w", h.rp.To, err)
		}
	}
	now, err := h.c.Get(ctx, h.created.Kind, h.created.Name)
	if err != nil {
		return err
	}
	if err := waitInstalled(ctx, h.c, now, h.remaining(), time.Now(), false, h.ev); err != nil {
		return waitError(err)
	}
	h.rp.old = nil
	return h.forget(ctx)
}

// expectations are what the rename's own writes have made: each is set
// once its write is done. seq counts the writes that change them, as a
// sequence lock: odd while one is in flight. The guard judges the packages
// only when no write was in flight before it read them and none began
// since, so it never takes the rename's own write for another's.
type expectations struct {
	created, oldPaused, oldInactive, newUnpaused, oldDeleting atomic.Bool
	// forgotten: the record is being (or has been) removed.
	forgotten atomic.Bool
	seq       atomic.Uint64
}

// changing runs one of the rename's writes that changes what the guard
// expects, and then (when it succeeded) records the new expectation.
func (e *expectations) changing(write func() error, then func()) error {
	e.seq.Add(1)
	defer e.seq.Add(1)
	if err := write(); err != nil {
		return err
	}
	then()
	return nil
}

// anotherWriter: someone else changed a package the rename is changing.
type anotherWriter struct{ what string }

func (e *anotherWriter) Error() string {
	return "another writer changed what the rename is changing: " + e.what
}

// guard reads both packages every pollEvery while the rename runs, and
// stops it (stop, with an anotherWriter) as soon as another writer has
// undone one of its writes: unpaused or deleted a package, edited its
// spec, or removed the record.
func (h *handOver) guard(ctx context.Context, stop context.CancelCauseFunc) {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := h.check(ctx); err != nil {
			stop(err)
			return
		}
	}
}

// check compares the packages with what the rename made of them; nil
// when they agree, or could not be read (the steps' own reads say so).
func (h *handOver) check(ctx context.Context) error {
	seq := h.expect.seq.Load()
	if seq%2 == 1 {
		return nil // one of the rename's writes is in flight
	}
	err := h.checkAgainst(ctx)
	if h.expect.seq.Load() != seq {
		return nil // the rename wrote meanwhile: the next check judges
	}
	return err
}

// checkAgainst compares the packages with the expectations as they are.
func (h *handOver) checkAgainst(ctx context.Context) error {
	created, oldPaused, newUnpaused, deleting := h.expect.created.Load(), h.expect.oldPaused.Load(), h.expect.newUnpaused.Load(), h.expect.oldDeleting.Load()
	oldInactive := h.expect.oldInactive.Load()
	if !deleting {
		if err := h.checkOne(ctx, h.rp.old, oldPaused, false); err != nil {
			return err
		}
	}
	if oldInactive && !deleting {
		if err := h.checkInactive(ctx); err != nil {
			return err
		}
	}
	if created && h.created != nil {
		return h.checkOne(ctx, h.created, !newUnpaused, newUnpaused)
	}
	return nil
}

// checkInactive: the old package's revisions, deactivated by the rename,
// are still inactive (nothing else activates a paused package's).
func (h *handOver) checkInactive(ctx context.Context) error {
	revs, err := h.c.Revisions(ctx, h.rp.old)
	if err != nil {
		return nil
	}
	for _, r := range revs {
		if r.IsActive() {
			return &anotherWriter{what: fmt.Sprintf("revision %s of %s was activated again", r.Name, h.rp.Package)}
		}
	}
	return nil
}

// checkOne checks one package: there (the same object), its spec as it
// was, paused when the rename paused it (unpaused when it unpaused it),
// and the rename's record on it.
func (h *handOver) checkOne(ctx context.Context, p *installed.Package, paused, unpaused bool) error {
	now, err := h.c.Get(ctx, p.Kind, p.Name)
	switch {
	case apierrors.IsNotFound(err):
		return &anotherWriter{what: p.KindName() + " was deleted"}
	case err != nil:
		return nil
	case now.Object.GetUID() != p.Object.GetUID():
		return &anotherWriter{what: p.KindName() + " was deleted and made again"}
	case now.Generation != p.Generation:
		return &anotherWriter{what: fmt.Sprintf("the spec of %s was edited (generation %d, now %d)", p.KindName(), p.Generation, now.Generation)}
	case paused && !now.Paused():
		return &anotherWriter{what: fmt.Sprintf("%s was unpaused (its %s annotation removed), and the package manager runs it again", p.KindName(), installed.PausedAnnotation)}
	case unpaused && now.Paused():
		return &anotherWriter{what: p.KindName() + " was paused"}
	}
	if op, _ := installed.ReadOperation(now); !h.expect.forgotten.Load() && (op == nil || op.ID != h.op.ID) {
		return &anotherWriter{what: fmt.Sprintf("the record of rename %s on %s (%s) was removed or replaced", h.op.ID, p.KindName(), installed.OperationAnnotation)}
	}
	return nil
}
