package action

import (
	"context"
	"fmt"
	"maps"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// finish makes the new package an owner of what only the old package's
// revisions own (what an older version installed and the running one
// dropped, kept by Crossplane for its objects), deletes the old package
// and checks that every object and every live object is still there.
func (h *handOver) finish(ctx context.Context) error {
	now, err := h.c.Get(ctx, h.created.Kind, h.created.Name)
	if err != nil {
		return err
	}
	for _, o := range h.rp.objects {
		if o.controlled {
			continue
		}
		if err := h.c.AddOwner(ctx, o.gvr, o.obj, o.uid, ownerRef(now)); err != nil {
			return fmt.Errorf("make %s an owner of %s: %w", h.rp.To, o.name, err)
		}
	}
	h.expect.oldDeleting.Store(true)
	old, err := h.c.Get(ctx, h.rp.old.Kind, h.rp.old.Name)
	switch {
	case apierrors.IsNotFound(err):
		h.ev.say("%s is gone already", h.rp.Package)
		return h.verify(ctx)
	case err != nil:
		return err
	case old.Object.GetUID() != h.rp.old.Object.GetUID():
		return &anotherWriter{what: h.rp.Package + " was deleted and made again"}
	case old.Object.GetDeletionTimestamp() == nil:
		if err := h.c.DeleteExactly(ctx, old, false); err != nil {
			return fmt.Errorf("delete %s: %w", h.rp.Package, err)
		}
	}
	if err := h.c.WaitDeleted(ctx, old, h.remaining(), h.ev.progress()); err != nil {
		return err
	}
	h.ev.say("%s deleted", h.rp.Package)
	return h.verify(ctx)
}

// verify checks that every object the old package installed is there,
// the same object (its UID), and that no live object of their kinds went.
func (h *handOver) verify(ctx context.Context) error {
	now, err := h.objectsNow(ctx)
	if err != nil {
		return err
	}
	var missing []string
	for _, o := range h.rp.objects {
		if u, ok := now[o.name]; !ok || u.uid != o.uid {
			missing = append(missing, o.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d objects %s installed are gone: %s", len(missing), h.rp.Package, diagnose.ShortList(missing))
	}
	counts, err := h.c.CountAll(ctx, h.rp.counted)
	if err != nil {
		return err
	}
	var live int64
	for _, n := range counts {
		live += n.N
	}
	if live < h.rp.Live {
		return fmt.Errorf("%d live objects of %s's kinds before the rename, %d after", h.rp.Live, h.rp.Package, live)
	}
	return nil
}

// deleteNew undoes the new package: deleted, once nothing else needs it
// (the old package is back in the Lock by then).
func (h *handOver) deleteNew(ctx context.Context) error {
	now, err := h.c.Get(ctx, h.created.Kind, h.created.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", h.rp.To, err)
	}
	if now.Object.GetUID() != h.created.Object.GetUID() {
		return &anotherWriter{what: h.rp.To + " was deleted and made again"}
	}
	if err := h.c.DeleteExactly(ctx, now, false); err != nil {
		return fmt.Errorf("delete %s: %w", h.rp.To, err)
	}
	if err := h.c.WaitDeleted(ctx, now, h.remaining(), h.ev.progress()); err != nil {
		return err
	}
	h.ev.say("%s deleted", h.rp.To)
	return nil
}

// deleteNewIfMade deletes the new package when a create that returned an
// error landed all the same: only if it carries this rename's record.
func (h *handOver) deleteNewIfMade(ctx context.Context) error {
	now, err := h.c.Get(ctx, h.rp.old.Kind, h.rp.newName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", h.rp.To, err)
	}
	if op, _ := installed.ReadOperation(now); op == nil || op.ID != h.op.ID {
		return nil // not ours: made by another writer, left alone
	}
	h.created = now
	return h.deleteNew(ctx)
}

// restoreOld puts the old package back as it was, through the Rollback
// action within what is left of the rename's time: its current revision
// active again, the package unpaused, installed and healthy.
func (h *handOver) restoreOld(ctx context.Context) error {
	old := h.rp.old
	// What the rollback does is a step of the rename: said as its steps are.
	cfg := *h.r.cfg
	cfg.Events.Results = cfg.Events.Progress
	rb := NewRollback(&cfg)
	left := max(h.remaining(), time.Nanosecond)
	rb.paused, rb.Budget, rb.Options = true, left, ChangeOptions{Wait: left}
	if _, _, err := rb.putBack(ctx, old, old); err != nil {
		return err
	}
	h.ev.say("%s is installed and healthy again", old.KindName())
	return nil
}

// deactivateNew undoes the new package's start: paused again, its
// revisions inactive, out of the Lock and in control of nothing, so that
// the old package's revision can take its objects back.
func (h *handOver) deactivateNew(ctx context.Context) error {
	now, err := h.c.Get(ctx, h.created.Kind, h.created.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := h.c.SetPaused(ctx, now, true, false); err != nil {
		return fmt.Errorf("pause %s: %w", h.rp.To, err)
	}
	// A revision the package manager was making when the package was
	// paused again lands after the first read, then enters the Lock beside
	// the old package's: the revisions are read again, a poll apart, until
	// the same ones, all inactive, have let go.
	for seen := map[string]string(nil); ; {
		uids, err := h.deactivateAll(ctx, now)
		if err != nil {
			return err
		}
		if err := h.letGo(ctx, h.rp.To, uids); err != nil {
			return err
		}
		if seen != nil && maps.Equal(seen, uids) {
			return nil
		}
		seen = uids
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}
