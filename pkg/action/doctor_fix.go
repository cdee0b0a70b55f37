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
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// What a repair step does.
const (
	RepairDelete          = "delete"
	RepairRemoveLockEntry = "remove-lock-entry"
	RepairRemoveOwnerRef  = "remove-owner-reference"
	RepairRemoveRecord    = "remove-record"
	actionRepair          = "repair"
	lockObject            = "lock/lock"
	DefaultRepairSettle   = time.Minute
)

// RepairStep is one change doctor --fix makes: only what it can prove
// right from the state it read (a revision the package manager itself
// would let go, a Lock entry nothing stands behind, a controller
// reference to a revision that is gone). Every other finding stays a
// finding, with the steps to take by hand.
type RepairStep struct {
	// Rule is the finding's the step repairs.
	Rule   string `json:"rule"`
	Action string `json:"action"`
	// Object is what the step changes, as kubectl names it.
	Object  string `json:"object"`
	Message string `json:"message"`

	rev   *installed.Revision   // RepairDelete
	entry installed.LockPackage // RepairRemoveLockEntry
	owner *diagnose.OrphanRef   // RepairRemoveOwnerRef
	// uid is the changed object's (the Lock's for an entry): the repair
	// stops when it is another object by then.
	uid string
}

// key tells steps apart across two readings of the cluster: the same
// change of the same object.
func (st RepairStep) key() string {
	k := st.Action + "|" + st.Object + "|" + st.uid
	if st.rev != nil {
		k += fmt.Sprintf("|%d", st.rev.Object.GetGeneration())
	}
	if st.Action == RepairRemoveLockEntry {
		k += "|" + st.entry.Name + "|" + st.entry.Source
	}
	if st.owner != nil {
		k += "|" + st.owner.OwnerUID
	}
	return k
}

// Done says the step was made.
func (st RepairStep) Done() string {
	switch st.Action {
	case RepairDelete:
		return st.Object + " deleted"
	case RepairRemoveLockEntry:
		return fmt.Sprintf("%s: entry %s removed", st.Object, st.entry.Name)
	case RepairRemoveRecord:
		return st.Object + ": record of the repair cut short removed"
	}
	return fmt.Sprintf("%s: owner reference to %s removed", st.Object, st.owner.OwnerName)
}

// Repair is what doctor --fix does: the steps, in order; the file the
// objects they change were saved to; the steps made.
type Repair struct {
	Steps  []RepairStep `json:"steps"`
	Backup string       `json:"backup,omitempty"`
	Done   []string     `json:"done,omitempty"`
}

// PlanRepair reads the state, as Run does, and plans the repair of what
// it can prove: the report with its Repair.
func (d *Doctor) PlanRepair(ctx context.Context) (*Report, error) {
	rep, s, err := d.examine(ctx)
	if err != nil {
		return nil, err
	}
	rep.Repair = &Repair{Steps: repairSteps(s)}
	return rep, nil
}

// repairSteps: deleting the stale revisions behind duplicate nodes first
// (what takes every package down), then the stale Lock entries and the
// orphaned controller references.
func repairSteps(s *diagnose.State) []RepairStep {
	steps := staleRevisionSteps(s)
	steps = append(steps, goneEntrySteps(s)...)
	steps = append(steps, orphanSteps(s)...)
	return append(steps, recordSteps(s)...)
}

// recordSteps: the record a repair killed mid-way left on the Lock goes
// last, once the repair it tells of is finished.
func recordSteps(s *diagnose.State) []RepairStep {
	op, lockUID := s.RepairRecord()
	if op == nil {
		return nil
	}
	return []RepairStep{{Rule: findings.RuleUnfinishedOperation, Action: RepairRemoveRecord, Object: lockObject, uid: lockUID,
		Message: fmt.Sprintf("remove the record of %s %s, cut short at step %d of %d (%s): this repair finishes it", op.Operation, op.ID, op.Step, op.Of, op.StepName)}}
}

// staleRevisionSteps delete the revisions that hold a second Lock node
// for their package's source and that the package manager would let go
// (diagnose's StaleNodes).
func staleRevisionSteps(s *diagnose.State) []RepairStep {
	var out []RepairStep
	for _, n := range s.StaleNodes() {
		p, r := n.Package, n.Revision
		out = append(out, RepairStep{Rule: findings.RuleDuplicateLockNode, Action: RepairDelete, rev: r, uid: r.UID(),
			Object: strings.ToLower(r.Kind) + "/" + r.Name,
			Message: fmt.Sprintf("delete revision %s of %s, which is not its current revision (%s) and holds a second Lock node for %s",
				r.Name, p.KindName(), p.CurrentRevision, n.Source)})
	}
	return out
}

// goneEntrySteps: Lock entries whose revision no longer exists (every
// revision was read); nothing writes them back.
func goneEntrySteps(s *diagnose.State) []RepairStep {
	entries, lockUID := s.GoneEntries()
	var out []RepairStep
	for _, lp := range entries {
		out = append(out, RepairStep{Rule: findings.RuleStaleLockEntry, Action: RepairRemoveLockEntry, Object: lockObject, entry: lp, uid: lockUID,
			Message: fmt.Sprintf("remove the Lock's entry %s (source %s): its revision no longer exists", lp.Name, lp.Source)})
	}
	return out
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

func backupObject(ctx context.Context, c *cluster.Cluster, st RepairStep) (*unstructured.Unstructured, error) {
	switch st.Action {
	case RepairDelete:
		return c.Revision(ctx, st.rev.Kind, st.rev.Name)
	case RepairRemoveLockEntry, RepairRemoveRecord:
		return c.LockObject(ctx)
	case RepairRemoveOwnerRef:
		return c.DefinitionObject(ctx, st.owner.Resource, st.owner.Name)
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
	Done func(RepairStep)
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
	op := &installed.Operation{Operation: installed.OperationRepair, ID: newOperationID(), From: lockObject, Of: len(rp.Steps)}
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
func (d *Doctor) replanStep(ctx context.Context, planned RepairStep, dryRun bool) (*RepairStep, error) {
	if dryRun {
		return &planned, nil
	}
	_, s, err := d.examine(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan the repair again: %w", err)
	}
	fresh := repairSteps(s)
	i := slices.IndexFunc(fresh, func(st RepairStep) bool { return st.key() == planned.key() })
	if i < 0 {
		return nil, nil
	}
	return &fresh[i], nil
}

func applyStep(ctx context.Context, c *cluster.Cluster, st RepairStep, dryRun bool) error {
	switch st.Action {
	case RepairDelete:
		return c.DeleteRevisionExactly(ctx, st.rev, dryRun)
	case RepairRemoveLockEntry:
		// A revision made after the revisions were read and before the
		// Lock was would look gone: it is read once more, by name.
		kind := cmp.Or(st.entry.Kind, st.entry.Type) + "Revision"
		if u, err := c.Revision(ctx, kind, st.entry.Name); err != nil || u != nil {
			return cmp.Or(err, error(&cluster.ChangedError{Package: lockObject, What: "revision " + st.entry.Name + " exists", Action: actionRepair}))
		}
		return c.RemoveLockEntry(ctx, st.uid, st.entry.Name, st.entry.Source, dryRun)
	case RepairRemoveOwnerRef:
		return c.RemoveOwnerReference(ctx, st.owner.Resource, st.owner.Name, st.uid, st.owner.OwnerUID, dryRun)
	case RepairRemoveRecord:
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

// orphanSteps: a definition's controller reference to a revision that no
// longer exists. Removing it loses nothing (its owner is gone) and lets
// the establisher of the revision that installs the definition now take
// control; left alone, the garbage collector may delete the definition,
// and its objects with it, once it sees the owner gone.
func orphanSteps(s *diagnose.State) []RepairStep {
	var out []RepairStep
	for _, o := range s.OrphanedControllers() {
		kind := map[string]string{cluster.ResourceCRDs: "customresourcedefinition", cluster.ResourceMRDs: "managedresourcedefinition"}[o.Resource]
		out = append(out, RepairStep{Rule: findings.RuleControlConflict, Action: RepairRemoveOwnerRef, Object: kind + "/" + o.Name, owner: &o, uid: o.UID,
			Message: fmt.Sprintf("remove the controller reference of %s/%s to %s %s (UID %s), which no longer exists", kind, o.Name, o.OwnerKind, o.OwnerName, o.OwnerUID)})
	}
	return out
}
