package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// actionRepair names doctor --fix in a ChangedError.
const actionRepair = "repair"

// DefaultRepairSettle is how long doctor --fix waits, by default, for the
// package manager to take the repair in.
const DefaultRepairSettle = time.Minute

// Repair is what doctor --fix does: the steps, in order; the file the
// objects they change were saved to; the steps made.
type Repair struct {
	Steps  []diagnose.RepairStep `json:"steps"`
	Backup string                `json:"backup,omitempty"`
	Done   []string              `json:"done,omitempty"`
}

// PlanRepair reads the state, as Run does, and plans the repair of what
// it can prove: the report with its Repair.
func (d *Doctor) PlanRepair(ctx context.Context) (*Report, error) {
	rep, s, err := d.examine(ctx)
	if err != nil {
		return nil, err
	}
	rep.Repair = &Repair{Steps: s.RepairSteps()}
	return rep, nil
}

// Backup is every object the repair changes or deletes, as it is now,
// as kubectl apply -f takes it back (what only the API server sets is
// left out).
func (d *Doctor) Backup(ctx context.Context, rep *Report) ([]*unstructured.Unstructured, error) {
	c, err := d.cfg.connect()
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, st := range rep.Repair.Steps {
		if seen[st.Object] {
			continue
		}
		seen[st.Object] = true
		u, err := backupObject(ctx, c, st)
		if err != nil {
			return nil, err
		}
		if u != nil {
			objs = append(objs, restorable(u))
		}
	}
	return objs, nil
}

func backupObject(ctx context.Context, c *cluster.Cluster, st diagnose.RepairStep) (*unstructured.Unstructured, error) {
	switch st.Action {
	case diagnose.RepairDelete:
		return c.Revision(ctx, st.Revision.Kind, st.Revision.Name)
	case diagnose.RepairRemoveLockEntry, diagnose.RepairRemoveRecord:
		return c.LockObject(ctx)
	case diagnose.RepairRemoveOwnerRef:
		return c.DefinitionObject(ctx, st.Owner.Resource, st.Owner.Name)
	}
	return nil, fmt.Errorf("unknown repair %s", st.Action)
}

// restorable is u without what the API server sets (identity, versions,
// times, field managers) and without its status, which the package
// manager writes again.
func restorable(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	delete(u.Object, "status")
	return u
}

// RepairOptions say how the repair is carried out.
type RepairOptions struct {
	// DryRun sends every step with the API server's dry run.
	DryRun bool
	// Done hears each step made.
	Done func(diagnose.RepairStep)
}

// Repair makes the steps in order. Before each, the cluster is read and
// the repair planned again: a step that is no longer planned exactly so
// (its object changed, was made again or is gone; another writer was at
// work) stops the repair with a ChangedError (exit status 4) that says
// what was done; the steps are sent with the objects' UIDs (and a
// revision's resourceVersion) as preconditions.
func (d *Doctor) Repair(ctx context.Context, rep *Report, o RepairOptions) error {
	return changeError(ctx, d.repair(ctx, rep, o))
}

func (d *Doctor) repair(ctx context.Context, rep *Report, o RepairOptions) (err error) {
	c, err := d.cfg.connect()
	if err != nil {
		return err
	}
	rp := rep.Repair
	op := &installed.Operation{Operation: installed.OperationRepair, ID: newOperationID(), From: diagnose.LockObject, Of: len(rp.Steps)}
	if !o.DryRun && len(rp.Steps) > 0 {
		// Ended here (done, or stopped between steps), the repair leaves
		// no record: only a kill mid-way does.
		defer func() {
			if ferr := c.SetLockOperation(context.WithoutCancel(ctx), nil); ferr != nil && err == nil {
				err = fmt.Errorf("remove the record of the repair from the Lock: %w", ferr)
			}
		}()
	}
	for i, planned := range rp.Steps {
		changed := func(what string) error {
			return &cluster.ChangedError{Action: actionRepair, Package: planned.Object, What: what, Done: rp.Done}
		}
		if !o.DryRun {
			// Recorded before the step (a kill leaves it for doctor to
			// name) and before it is planned again, which this write
			// does not change.
			op.Step, op.StepName = i+1, planned.Action+" "+planned.Object
			if err := c.SetLockOperation(ctx, op); err != nil {
				return fmt.Errorf("record step %d of the repair on the Lock: %w (done before: %s)", i+1, err, cmp.Or(strings.Join(rp.Done, ", "), "nothing"))
			}
		}
		st, err := d.replanStep(ctx, planned, o.DryRun)
		if err != nil {
			return err
		}
		if st == nil {
			return changed("it is no longer what was planned (changed, made again or gone)")
		}
		err = applyStep(ctx, c, *st, o.DryRun)
		var ce *cluster.ChangedError
		switch {
		case errors.As(err, &ce):
			return changed(ce.Error())
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			return changed(err.Error())
		case err != nil:
			return fmt.Errorf("repair %s: %w (done before: %s)", st.Object, err, cmp.Or(strings.Join(rp.Done, ", "), "nothing"))
		}
		rp.Done = append(rp.Done, st.Action+" "+st.Object)
		if o.Done != nil {
			o.Done(*st)
		}
	}
	return nil
}

// replanStep reads the cluster again and returns the step as planned now,
// nil when it is not. A dry run changes nothing, so the plan stands.
func (d *Doctor) replanStep(ctx context.Context, planned diagnose.RepairStep, dryRun bool) (*diagnose.RepairStep, error) {
	if dryRun {
		return &planned, nil
	}
	_, s, err := d.examine(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan the repair again: %w", err)
	}
	fresh := s.RepairSteps()
	i := slices.IndexFunc(fresh, func(st diagnose.RepairStep) bool { return st.Key() == planned.Key() })
	if i < 0 {
		return nil, nil
	}
	return &fresh[i], nil
}

func applyStep(ctx context.Context, c *cluster.Cluster, st diagnose.RepairStep, dryRun bool) error {
	switch st.Action {
	case diagnose.RepairDelete:
		return c.DeleteRevisionExactly(ctx, st.Revision, dryRun)
	case diagnose.RepairRemoveLockEntry:
		// A revision made after the revisions were read and before the
		// Lock was would look gone: it is read once more, by name.
		kind := cmp.Or(st.Entry.Kind, st.Entry.Type) + "Revision"
		if u, err := c.Revision(ctx, kind, st.Entry.Name); err != nil || u != nil {
			return cmp.Or(err, error(&cluster.ChangedError{Package: diagnose.LockObject, What: "revision " + st.Entry.Name + " exists", Action: actionRepair}))
		}
		return c.RemoveLockEntry(ctx, st.UID, st.Entry.Name, st.Entry.Source, dryRun)
	case diagnose.RepairRemoveOwnerRef:
		return c.RemoveOwnerReference(ctx, st.Owner.Resource, st.Owner.Name, st.UID, st.Owner.OwnerUID, dryRun)
	case diagnose.RepairRemoveRecord:
		if dryRun {
			return nil
		}
		return c.SetLockOperation(ctx, nil)
	}
	return fmt.Errorf("unknown repair %s", st.Action)
}

// Settle reads the cluster again, every interval, until the package
// manager has taken the repair in (no blocking finding, the Lock
// resolved) or wait has passed, and returns the last report.
func (d *Doctor) Settle(ctx context.Context, wait, interval time.Duration) (*Report, error) {
	deadline := time.Now().Add(wait)
	for {
		rep, s, err := d.examine(ctx)
		if err != nil {
			return nil, err
		}
		if (!rep.Blocking() && s.LockResolved()) || !time.Now().Add(interval).Before(deadline) {
			return rep, nil
		}
		select {
		case <-ctx.Done():
			return rep, nil
		case <-time.After(interval):
		}
	}
}
