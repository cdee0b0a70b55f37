// Package repair makes the steps doctor --fix planned, one at a time:
// each planned again from a new reading before it is made (or, for the
// steps on objects a deletion holds, sent with the object's identity as
// its precondition), recorded on the Lock while it is under way, and
// stopped between steps on an interruption, saying what was done and
// what is left.
package repair

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// action names doctor --fix in a ChangedError.
const action = "repair"

// Plan is what doctor --fix does: the steps, in order; the file the
// objects they change were saved to; the steps made.
type Plan struct {
	Steps  []diagnose.RepairStep `json:"steps"`
	Backup string                `json:"backup,omitempty"`
	Done   []string              `json:"done,omitempty"`
	// Left says, for each finding the repair leaves alone, why and the
	// ways out; Orphaning lists the external resources the repair leaves
	// unmanaged (--orphan-external-resources).
	Left      []string `json:"left,omitempty"`
	Orphaning []string `json:"orphaning,omitempty"`
	// NotRestored names the objects the repair could not make again, and
	// why.
	NotRestored []string `json:"notRestored,omitempty"`
	// Notes say how an object made again differs from what was saved.
	Notes []string `json:"notes,omitempty"`
}

// Executor makes a Plan's steps on one cluster.
type Executor struct {
	Cluster *cluster.Cluster
	// Mapper finds the resource of an owner reference (for the objects
	// made again); read once, when first needed.
	Mapper func() (meta.RESTMapper, error)
	// Replan reads the cluster again and plans the repair anew.
	Replan func(context.Context) ([]diagnose.RepairStep, error)
	// ID tells this repair's record on the Lock from another's.
	ID string
	// DryRun sends every step with the API server's dry run.
	DryRun bool
	// Wait bounds how long a definition is waited for; Interval is how
	// often it is read meanwhile.
	Wait, Interval time.Duration
	// Done hears each step made.
	Done func(diagnose.RepairStep)

	// remade are the CRDs the package manager made again, by name.
	remade map[string]*cluster.CRD
	mapper meta.RESTMapper
}

// Run makes the steps in order. Before each, the cluster is read and the
// repair planned again: a step that is no longer planned exactly so (its
// object changed, was made again or is gone; another writer was at work)
// stops the repair with a ChangedError (exit status 4) that says what was
// done; the steps are sent with the objects' UIDs (and a revision's
// resourceVersion) as preconditions. Stopped midway, by an interruption
// or a failure, the error says what is left and how the backup restores
// what was removed.
func (e *Executor) Run(ctx context.Context, rp *Plan) (err error) {
	c := e.Cluster
	if !e.DryRun && len(rp.Steps) > 0 {
		// Ended here (done, or stopped between steps), the repair leaves
		// no record: only a kill mid-way does, or a stop after it removed
		// finalizers, whose objects only the backup the record names
		// holds until they are made again.
		defer func() {
			if err != nil && removed(rp) {
				return
			}
			if ferr := c.SetLockOperation(context.WithoutCancel(ctx), nil); ferr != nil && err == nil {
				err = fmt.Errorf("remove the record of the repair from the Lock: %w", ferr)
			}
		}()
	}
	for i, planned := range rp.Steps {
		if err := e.step(ctx, rp, i, planned); err != nil {
			return stopped(err, rp, i)
		}
	}
	if len(rp.NotRestored) > 0 {
		return fmt.Errorf("%d object(s) could not be made again: %s; %s", len(rp.NotRestored), strings.Join(rp.NotRestored, "; "), backupSays(rp))
	}
	return nil
}

func (e *Executor) step(ctx context.Context, rp *Plan, i int, planned diagnose.RepairStep) error {
	changed := func(what string) error {
		return &cluster.ChangedError{Action: action, Package: planned.Object, What: what, Done: rp.Done}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.DryRun && !planned.Replanned() && planned.Action != diagnose.RepairRemoveFinalizer {
		// What follows the finalizers' removal waits on it: a dry run
		// removes none.
		return nil
	}
	if !e.DryRun {
		// Recorded before the step (a kill leaves it for doctor to
		// name) and before it is planned again, which this write does
		// not change.
		op := &installed.Operation{Operation: installed.OperationRepair, ID: e.ID, From: diagnose.LockObject, Of: len(rp.Steps), Backup: absolute(rp.Backup),
			Step: i + 1, StepName: planned.Action + " " + planned.Object}
		if err := e.Cluster.SetLockOperation(ctx, op); err != nil {
			return fmt.Errorf("record step %d of the repair on the Lock: %w", i+1, err)
		}
	}
	st := &planned
	if planned.Replanned() && !e.DryRun {
		fresh, err := e.Replan(ctx)
		if err != nil {
			return fmt.Errorf("plan the repair again: %w", err)
		}
		j := slices.IndexFunc(fresh, func(st diagnose.RepairStep) bool { return st.Key() == planned.Key() })
		if j < 0 {
			return changed("it is no longer what was planned (changed, made again or gone)")
		}
		st = &fresh[j]
	}
	err := e.apply(ctx, rp, *st)
	var ce *cluster.ChangedError
	switch {
	case errors.As(err, &ce):
		return changed(ce.Error())
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		return changed(err.Error())
	case err != nil:
		return fmt.Errorf("repair %s: %w", st.Object, err)
	}
	rp.Done = append(rp.Done, st.Action+" "+st.Object)
	if e.Done != nil {
		e.Done(*st)
	}
	return nil
}

// stopped says, of a repair stopped before step i, what was done and
// what is left (a ChangedError already says what was done).
func stopped(err error, rp *Plan, i int) error {
	var ce *cluster.ChangedError
	if errors.As(err, &ce) {
		return err
	}
	var left []string
	for _, st := range rp.Steps[i:] {
		left = append(left, st.Action+" "+st.Object)
	}
	msg := fmt.Sprintf("done: %s; left: %s", cmp.Or(strings.Join(rp.Done, ", "), "nothing"), strings.Join(left, ", "))
	if removed(rp) {
		msg += "; " + backupSays(rp)
	}
	return fmt.Errorf("%w (%s)", err, msg)
}

// removed: a step done removed a finalizer, so objects went that the
// backup holds.
func removed(rp *Plan) bool {
	return slices.ContainsFunc(rp.Done, func(d string) bool { return strings.HasPrefix(d, diagnose.RepairRemoveFinalizer+" ") })
}

// absolute is the backup's path as a later doctor --fix, run elsewhere,
// finds it.
func absolute(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

func backupSays(rp *Plan) string {
	if rp.Backup == "" {
		return "nothing was saved"
	}
	return fmt.Sprintf("the backup %s holds every object as it was, and the record of this repair on the Lock names it: once the package manager has made their CRD again, kubectl xpkg doctor --fix makes the missing ones again from it (or kubectl apply -f %s)", rp.Backup, rp.Backup)
}

func (e *Executor) apply(ctx context.Context, rp *Plan, st diagnose.RepairStep) error {
	c := e.Cluster
	switch st.Action {
	case diagnose.RepairDelete:
		return c.DeleteRevisionExactly(ctx, st.Revision, e.DryRun)
	case diagnose.RepairRemoveLockEntry:
		// A revision made after the revisions were read and before the
		// Lock was would look gone: it is read once more, by name.
		kind := cmp.Or(st.Entry.Kind, st.Entry.Type) + "Revision"
		if u, err := c.Revision(ctx, kind, st.Entry.Name); err != nil || u != nil {
			return cmp.Or(err, error(&cluster.ChangedError{Package: diagnose.LockObject, What: "revision " + st.Entry.Name + " exists", Action: action}))
		}
		return c.RemoveLockEntry(ctx, st.UID, st.Entry.Name, st.Entry.Source, e.DryRun)
	case diagnose.RepairRemoveOwnerRef:
		return c.RemoveOwnerReference(ctx, st.Owner.Resource, st.Owner.Name, st.UID, st.Owner.OwnerUID, e.DryRun)
	case diagnose.RepairRemoveRecord:
		if e.DryRun {
			return nil
		}
		return c.SetLockOperation(ctx, nil)
	case diagnose.RepairRemoveFinalizer:
		h := st.Held
		_, err := c.RemoveFinalizer(ctx, h.CRD, h.Object.GetNamespace(), h.Object.GetName(), st.UID, diagnose.ManagedFinalizer, e.DryRun)
		return err
	case diagnose.RepairAwaitDefinition:
		return e.await(ctx, st.Held)
	case diagnose.RepairRecreate:
		why := e.recreate(ctx, rp, st.Held)
		if why != "" && ctx.Err() != nil {
			// Cut short, not refused: the step is left, not done (the
			// object may have been made), and the repair resumed makes
			// the object again if it is missing.
			return fmt.Errorf("%s: %w", why, ctx.Err())
		}
		if why != "" {
			rp.NotRestored = append(rp.NotRestored, diagnose.HeldName(st.Held.CRD, st.Held.Object)+": "+why)
		}
		return nil
	}
	return fmt.Errorf("unknown repair %s", st.Action)
}
