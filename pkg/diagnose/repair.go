package diagnose

import (
	"fmt"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// What a repair step does.
const (
	RepairDelete          = "delete"
	RepairRemoveLockEntry = "remove-lock-entry"
	RepairRemoveOwnerRef  = "remove-owner-reference"
	RepairRemoveRecord    = "remove-record"
)

// LockObject is the Lock as kubectl names it.
const LockObject = "lock/lock"

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

	Revision *installed.Revision   `json:"-"` // RepairDelete
	Entry    installed.LockPackage `json:"-"` // RepairRemoveLockEntry
	Owner    *OrphanRef            `json:"-"` // RepairRemoveOwnerRef
	// Held is the definition and the object, as read whole, of the steps
	// that end a deletion held by objects of its kind.
	Held *Held `json:"-"`
	// UID is the changed object's (the Lock's for an entry): the repair
	// stops when it is another object by then.
	UID string `json:"-"`
}

// Key tells steps apart across two readings of the cluster: the same
// change of the same object.
func (st RepairStep) Key() string {
	k := st.Action + "|" + st.Object + "|" + st.UID
	if st.Revision != nil {
		k += fmt.Sprintf("|%d", st.Revision.Object.GetGeneration())
	}
	if st.Action == RepairRemoveLockEntry {
		k += "|" + st.Entry.Name + "|" + st.Entry.Source
	}
	if st.Owner != nil {
		k += "|" + st.Owner.OwnerUID
	}
	return k
}

// Done says the step was made.
func (st RepairStep) Done() string {
	switch st.Action {
	case RepairDelete:
		return st.Object + " deleted"
	case RepairRemoveLockEntry:
		return fmt.Sprintf("%s: entry %s removed", st.Object, st.Entry.Name)
	case RepairRemoveRecord:
		return st.Object + ": record of the repair cut short removed"
	case RepairRemoveFinalizer:
		return st.Object + ": " + ManagedFinalizer + " removed"
	case RepairAwaitDefinition:
		return st.Object + " gone and made again by the package manager"
	case RepairRecreate:
		return st.Object + " recreated with external name " + ExternalName(st.Held.Object)
	}
	return fmt.Sprintf("%s: owner reference to %s removed", st.Object, st.Owner.OwnerName)
}

// RepairSteps: deleting the stale revisions behind duplicate nodes first
// (what takes every package down), then the stale Lock entries and the
// orphaned controller references, then the deletions held by objects
// (planned by ReadHeldRepairs).
func (s *State) RepairSteps() []RepairStep {
	steps := s.staleRevisionSteps()
	steps = append(steps, s.goneEntrySteps()...)
	steps = append(steps, s.orphanSteps()...)
	steps = append(steps, s.heldSteps()...)
	return append(steps, s.recordSteps()...)
}

// Replanned says whether the step is planned again from a new reading
// before it is made. The steps on held objects are not: each write
// carries the object's UID as its precondition, and the steps before
// change what a new reading would plan.
func (st RepairStep) Replanned() bool { return st.Held == nil }

// recordSteps: the record a repair killed mid-way left on the Lock goes
// last, once the repair it tells of is finished.
func (s *State) recordSteps() []RepairStep {
	op, lockUID := s.RepairRecord()
	if op == nil {
		return nil
	}
	return []RepairStep{{Rule: findings.RuleUnfinishedOperation, Action: RepairRemoveRecord, Object: LockObject, UID: lockUID,
		Message: fmt.Sprintf("remove the record of %s %s, cut short at step %d of %d (%s): this repair finishes it", op.Operation, op.ID, op.Step, op.Of, op.StepName)}}
}

// staleRevisionSteps delete the revisions that hold a second Lock node
// for their package's source and that the package manager would let go
// (StaleNodes).
func (s *State) staleRevisionSteps() []RepairStep {
	var out []RepairStep
	for _, n := range s.StaleNodes() {
		p, r := n.Package, n.Revision
		out = append(out, RepairStep{Rule: findings.RuleDuplicateLockNode, Action: RepairDelete, Revision: r, UID: r.UID(),
			Object: strings.ToLower(r.Kind) + "/" + r.Name,
			Message: fmt.Sprintf("delete revision %s of %s, which is not its current revision (%s) and holds a second Lock node for %s",
				r.Name, p.KindName(), p.CurrentRevision, n.Source)})
	}
	return out
}

// goneEntrySteps: Lock entries whose revision no longer exists (every
// revision was read); nothing writes them back.
func (s *State) goneEntrySteps() []RepairStep {
	entries, lockUID := s.GoneEntries()
	var out []RepairStep
	for _, lp := range entries {
		out = append(out, RepairStep{Rule: findings.RuleStaleLockEntry, Action: RepairRemoveLockEntry, Object: LockObject, Entry: lp, UID: lockUID,
			Message: fmt.Sprintf("remove the Lock's entry %s (source %s): its revision no longer exists", lp.Name, lp.Source)})
	}
	return out
}

// orphanSteps: a definition's controller reference to a revision that no
// longer exists. Removing it loses nothing (its owner is gone) and lets
// the establisher of the revision that installs the definition now take
// control; left alone, the garbage collector may delete the definition,
// and its objects with it, once it sees the owner gone.
func (s *State) orphanSteps() []RepairStep {
	var out []RepairStep
	for _, o := range s.OrphanedControllers() {
		kind := map[string]string{cluster.ResourceCRDs: "customresourcedefinition", cluster.ResourceMRDs: "managedresourcedefinition"}[o.Resource]
		out = append(out, RepairStep{Rule: findings.RuleControlConflict, Action: RepairRemoveOwnerRef, Object: kind + "/" + o.Name, Owner: &o, UID: o.UID,
			Message: fmt.Sprintf("remove the controller reference of %s/%s to %s %s (UID %s), which no longer exists", kind, o.Name, o.OwnerKind, o.OwnerName, o.OwnerUID)})
	}
	return out
}
