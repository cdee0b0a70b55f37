package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// A rename run again with the same arguments finds the record a run cut
// short left (installed.OperationAnnotation) and finishes it, or with
// --undo (or when the record says an undo had begun) undoes it.

// sameRename: the record on old is a rename of old, to the name given
// (if one is).
func (r *Rename) sameRename(old *installed.Package, op *installed.Operation) error {
	usage := func(format string, args ...any) error {
		return &exit.UsageError{Err: fmt.Errorf(format, args...), Hint: "See 'kubectl xpkg doctor' for what the packages record."}
	}
	switch {
	case op.Operation != ActionRename:
		return usage("%s is in the middle of %s %s (%s): finish that first", old.KindName(), op.Operation, op.ID, installed.OperationAnnotation)
	case op.From != old.KindName():
		return usage("%s is the new package of rename %s of %s: finish it with %s, or undo it with %s", old.KindName(), op.ID, op.From, diagnose.RenameCommand(op, false), diagnose.RenameCommand(op, true))
	case r.To != "" && r.To != op.NewName():
		return usage("%s is in the middle of rename %s to %s, not to %s: finish it with %s, or undo it with %s", old.KindName(), op.ID, op.To, r.To, diagnose.RenameCommand(op, false), diagnose.RenameCommand(op, true))
	}
	return nil
}

// resumeFrom makes rp the plan that finishes (or undoes) the rename op
// records: the new package, if made, must carry the same record.
func (r *Rename) resumeFrom(s *diagnose.State, rp *RenamePlan, op *installed.Operation) error {
	rec := op
	if p := s.Package(installed.KindName(rp.old.Kind, rp.newName)); p != nil {
		pop, _ := installed.ReadOperation(p)
		if pop == nil || pop.ID != op.ID {
			return fmt.Errorf("%s records rename %s to %s, but %s is not that rename's (it carries no record of it): delete the record from %s (kubectl annotate %s %s-) once you know which package is which",
				rp.Package, op.ID, rp.To, rp.To, rp.Package, strings.Replace(rp.Package, "/", " ", 1), installed.OperationAnnotation)
		}
		rp.created = p
		rec = installed.Later(op, pop)
	}
	rp.Resume = rec
	rp.Undo = r.Undo || rec.Undo
	return nil
}

// planLeftOver finds the rename arg named that was cut short after its
// old package was deleted: only the new package, carrying the record,
// is left. nil when there is none.
func (r *Rename) planLeftOver(ctx context.Context, c *cluster.Cluster, arg string) (*RenamePlan, error) {
	for _, k := range c.Dialect().Kinds() {
		pkgs, err := c.List(ctx, k, "")
		if err != nil {
			return nil, err
		}
		for _, p := range pkgs {
			op, _ := installed.ReadOperation(p)
			if op == nil || op.Operation != ActionRename || op.To != p.KindName() || (op.From != arg && !strings.HasSuffix(op.From, "/"+arg)) {
				continue
			}
			if r.To != "" && r.To != p.Name {
				continue
			}
			_, from, _ := strings.Cut(op.From, "/")
			rp := &RenamePlan{Plan: NewPlan(ActionRename, op.From, from, op.To), newName: p.Name, created: p, leftOver: true,
				Resume: op, Undo: r.Undo, Objects: []string{}}
			rp.add(resumeFinding(rp))
			rp.Steps = []string{fmt.Sprintf("unpause %s if paused, wait until it is installed and healthy, and remove the record of the rename (%s is deleted already)", op.To, op.From)}
			return rp, nil
		}
	}
	return nil, nil
}

// resumeFinding says what the run does with the rename cut short.
func resumeFinding(rp *RenamePlan) findings.Finding {
	op := rp.Resume
	at := fmt.Sprintf("step %d of %d (%s)", op.Step, op.Of, op.StepName)
	what := "this run finishes it: each step finds done what the run cut short did"
	if rp.Undo {
		what = "this run undoes it: the new package paused and out of the Lock if it ran, the old one active, unpaused and healthy again, then the new one deleted"
	}
	if rp.leftOver {
		what = "the old package is deleted already: " + what
	}
	return findings.Finding{Rule: findings.RuleUnfinishedOperation, Severity: findings.Info, Object: rp.Package,
		Message: fmt.Sprintf("%s carries the record of rename %s to %s, cut short at %s; %s", rp.Package, op.ID, rp.To, at, what)}
}

// undoSteps are the steps of an undo, in the order it takes them.
func (rp *RenamePlan) undoSteps() []string {
	return []string{
		fmt.Sprintf("pause %s again and deactivate its revisions, if it was let run, and wait until they have left the Lock and released what they control", rp.To),
		fmt.Sprintf("activate %s's current revision %s, unpause it and wait until it is installed and healthy", rp.Package, rp.old.CurrentRevision),
		fmt.Sprintf("delete %s, if made, and remove the record of the rename from %s", rp.To, rp.Package),
	}
}
