package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// pollEvery is how often the rename reads what it waits for.
var pollEvery = time.Second

// poll calls check until it is done, the context ends or the rename's
// time is up: then a WaitTimeoutError names what is pending.
func (h *handOver) poll(ctx context.Context, what string, check func(context.Context) (pending []string, err error)) error {
	start := time.Now()
	for {
		pending, err := check(ctx)
		if err != nil || len(pending) == 0 {
			return err
		}
		if h.remaining() <= 0 {
			return &cluster.WaitTimeoutError{What: what, After: time.Since(start), Pending: pending}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(pollEvery, max(h.remaining(), time.Millisecond))):
		}
	}
}

// create makes the new package, paused: the package manager makes no
// revision of it, and the resolver, which installs a missing dependency
// under this name, finds it there and installs nothing.
// A rename resumed finds it made already (its record names this rename).
func (h *handOver) create(ctx context.Context) error {
	h.undo = append(h.undo, undoStep{1, "delete the new package", h.deleteNew})
	if h.created != nil {
		h.expect.created.Store(true)
		if !h.created.Paused() {
			// The run cut short had let it run: the guard expects it
			// running, and an undo pauses it again first.
			h.expect.newUnpaused.Store(true)
			h.undo = append(h.undo, undoStep{4, "pause the new package again", h.deactivateNew})
		}
		h.ev.say("%s is there already (made by this rename)", h.rp.To)
		return nil
	}
	var created *installed.Package
	err := h.expect.changing(func() (err error) {
		created, err = h.c.Create(ctx, newPackageObject(h.rp.old, h.rp.newName, h.op), false)
		return err
	}, func() {
		h.created = created
		h.expect.created.Store(true)
	})
	if err != nil {
		// A create cut short by --timeout or an interrupt may still have
		// landed: the undo deletes the package if it carries this
		// rename's record, and nothing else.
		h.undo[len(h.undo)-1] = undoStep{1, "delete the new package if it was made", h.deleteNewIfMade}
		return fmt.Errorf("create %s: %w", h.rp.To, err)
	}
	h.ev.say("%s created, paused", h.rp.To)
	return nil
}

// deactivate pauses the old package (the package manager would
// otherwise activate its revision again, or under Manual activation make
// another revision for the edit that sets it, which on v2.4 enters the
// Lock beside the running one) and deactivates its revisions. Undone by
// putting the old package back.
func (h *handOver) deactivate(ctx context.Context) error {
	old := h.rp.old
	h.undo = append(h.undo, undoStep{2, "put the old package back", h.restoreOld})
	err := h.expect.changing(func() error { return h.c.SetPaused(ctx, old, true, false) }, func() { h.expect.oldPaused.Store(true) })
	if err != nil {
		return fmt.Errorf("pause %s: %w", old.KindName(), err)
	}
	h.ev.say("%s paused", old.KindName())
	return h.expect.changing(func() (err error) {
		h.oldUIDs, err = h.deactivateAll(ctx, old)
		return err
	}, func() { h.expect.oldInactive.Store(true) })
}

// deactivateAll deactivates every revision of p that is not inactive,
// and returns all its revisions, by UID (their names).
func (h *handOver) deactivateAll(ctx context.Context, p *installed.Package) (map[string]string, error) {
	revs, err := h.c.Revisions(ctx, p)
	if err != nil {
		return nil, err
	}
	uids := map[string]string{}
	for _, r := range revs {
		uids[r.UID()] = r.Name
		if strings.EqualFold(r.DesiredState, "Inactive") {
			continue
		}
		if err := h.c.Deactivate(ctx, r, false); err != nil {
			return uids, fmt.Errorf("deactivate revision %s: %w", r.Name, err)
		}
		h.ev.say("revision %s deactivated", r.Name)
	}
	return uids, nil
}

// released waits until the old package's revisions have left the Lock
// and their runtime has stopped, then releases what they still control
// (what their status.objectRefs missed, which the package manager does
// not release).
func (h *handOver) released(ctx context.Context) error {
	return h.letGo(ctx, h.rp.Package, h.oldUIDs)
}

// letGo waits until no revision of pkg (its revisions: UID → name) is in
// the Lock or runs a runtime, then releases what they control of the
// objects.
func (h *handOver) letGo(ctx context.Context, pkg string, revs map[string]string) error {
	names, uids := map[string]bool{}, map[string]bool{}
	for uid, name := range revs {
		names[name], uids[uid] = true, true
	}
	err := h.poll(ctx, pkg+" to leave the Lock and stop its runtime", func(ctx context.Context) ([]string, error) {
		var pending []string
		lock, err := h.c.Lock(ctx)
		if err != nil {
			return nil, err
		}
		for _, lp := range lock {
			if names[lp.Name] {
				pending = append(pending, fmt.Sprintf("the Lock's entry %s (revision %s)", lp.Source, lp.Name))
			}
		}
		if installed.HasRuntime(h.rp.old.Kind) {
			deps, err := h.c.RuntimeDeployments(ctx, h.r.cfg.namespace(), uids)
			if err != nil {
				return nil, err
			}
			for _, d := range deps {
				pending = append(pending, "runtime Deployment "+d)
			}
		}
		return pending, nil
	})
	if err != nil {
		return err
	}
	now, err := h.objectsNow(ctx)
	if err != nil {
		return err
	}
	for _, o := range h.rp.objects {
		u, ok := now[o.name]
		if !ok || u.uid != o.uid {
			continue // gone, or made again: verified at the end
		}
		for _, ref := range u.owners {
			if uids[string(ref.UID)] && ref.Controller != nil && *ref.Controller {
				if err := h.c.DemoteController(ctx, o.gvr, o.obj, o.uid, string(ref.UID)); err != nil {
					return fmt.Errorf("release %s: %w", o.name, err)
				}
			}
		}
	}
	h.ev.say("%s has left the Lock and released %d objects", pkg, len(h.rp.objects))
	return nil
}

// unpause lets the package manager make the new package's revision (and
// activates it under Manual activation). Undone by deactivating it.
func (h *handOver) unpause(ctx context.Context) error {
	if !slices.ContainsFunc(h.undo, func(u undoStep) bool { return u.n == 4 }) {
		h.undo = append(h.undo, undoStep{4, "pause the new package again", h.deactivateNew})
	}
	err := h.expect.changing(func() error { return h.c.SetPaused(ctx, h.created, false, false) }, func() { h.expect.newUnpaused.Store(true) })
	if err != nil {
		return fmt.Errorf("unpause %s: %w", h.rp.To, err)
	}
	h.ev.say("%s unpaused", h.rp.To)
	if h.rp.old.ActivationPolicy != "Manual" {
		return nil
	}
	rev, err := h.c.WaitRevision(ctx, h.created, h.created.Source, h.remaining())
	if err != nil {
		return err
	}
	if err := h.c.Activate(ctx, rev); err != nil {
		return fmt.Errorf("activate revision %s: %w", rev.Name, err)
	}
	h.ev.say("revision %s activated", rev.Name)
	return nil
}

// installed waits until the new package is installed and healthy, its
// revision controls what the old one controlled, the Lock holds one node
// for the source (its revision) and every dependent is healthy.
func (h *handOver) installed(ctx context.Context) error {
	start := time.Now()
	if err := waitInstalled(ctx, h.c, h.created, h.remaining(), start, false, h.ev); err != nil {
		return err
	}
	err := h.poll(ctx, h.rp.To+" to take control", func(ctx context.Context) ([]string, error) {
		return h.pendingControl(ctx)
	})
	if err != nil {
		return err
	}
	for _, d := range h.rp.dependents {
		if err := h.c.WaitReady(ctx, d.Kind, d.Name, d.Source, h.remaining(), h.ev.progress()); err != nil {
			return err
		}
	}
	h.ev.say("%s is installed and healthy, and controls what %s did", h.rp.To, h.rp.Package)
	return nil
}

// pendingControl names what the new package's current revision does not
// control yet, and a Lock that does not hold it once for the source.
func (h *handOver) pendingControl(ctx context.Context) ([]string, error) {
	now, err := h.c.Get(ctx, h.created.Kind, h.created.Name)
	if err != nil {
		return nil, err
	}
	lock, err := h.c.Lock(ctx)
	if err != nil {
		return nil, err
	}
	var pending, nodes []string
	for _, lp := range lock {
		if installed.SameRepo(lp.Source, h.rp.source) {
			nodes = append(nodes, lp.Name)
		}
	}
	if h.hadLockEntry() && !slices.Equal(nodes, []string{now.CurrentRevision}) {
		pending = append(pending, fmt.Sprintf("the Lock's nodes for %s are %v, not revision %s alone", h.rp.source, nodes, now.CurrentRevision))
	}
	objs, err := h.objectsNow(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range h.rp.objects {
		if !o.controlled {
			continue
		}
		u, ok := objs[o.name]
		if !ok {
			pending = append(pending, o.name+" is gone")
			continue
		}
		if c := u.controller(); c != now.CurrentRevision {
			pending = append(pending, fmt.Sprintf("%s is controlled by %q", o.name, c))
		}
	}
	return pending, nil
}

// hadLockEntry: the old package's revision was in the Lock (a package
// that skips dependency resolution is not).
func (h *handOver) hadLockEntry() bool {
	skip, _ := h.rp.old.Object.Object["spec"].(map[string]any)["skipDependencyResolution"].(bool)
	return !skip
}
