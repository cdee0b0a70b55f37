package diagnose

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// What a change of several steps (rename) leaves when it is killed
// mid-way: its record on the packages, a package paused, one without a
// revision, two packages of one source, a package whose only revision is
// inactive. Crossplane reports none of them: a paused package keeps the
// conditions it had, and a package out of the Lock is "not installed".

// recordedOps are the records of operations on the packages, by ID, with
// the packages that carry each.
func (s *State) recordedOps() (map[string]*installed.Operation, map[string][]string, []findings.Finding) {
	ops, on := map[string]*installed.Operation{}, map[string][]string{}
	var bad []findings.Finding
	for _, p := range s.pkgs {
		op, err := installed.ReadOperation(p)
		if err != nil {
			bad = append(bad, findings.Finding{Rule: findings.RuleUnfinishedOperation, Severity: findings.Warning, Object: p.KindName(),
				Message: err.Error() + ": kubectl-xpkg wrote no such record; remove it (kubectl annotate " + strings.Replace(p.KindName(), "/", " ", 1) + " " + installed.OperationAnnotation + "-)"})
			continue
		}
		if op != nil {
			ops[op.ID] = installed.Later(ops[op.ID], op)
			on[op.ID] = append(on[op.ID], p.KindName())
		}
	}
	return ops, on, bad
}

// RenameCommand is the command that resumes (or, undo, undoes) the
// rename op records.
func RenameCommand(op *installed.Operation, undo bool) string {
	cmd := fmt.Sprintf("kubectl xpkg rename %s %s", op.From, op.NewName())
	if undo {
		cmd += " --undo"
	}
	return cmd + " --yes"
}

// unfinishedOperations: a record left on a package is a change cut short
// (unless it runs now): the packages stay half-changed until the same
// command finishes it or undoes it.
func (s *State) unfinishedOperations() []findings.Finding {
	ops, on, out := s.recordedOps()
	out = append(out, s.unfinishedRepair()...)
	for _, id := range slices.Sorted(maps.Keys(ops)) {
		op := ops[id]
		at := fmt.Sprintf("step %d of %d (%s)", op.Step, op.Of, op.StepName)
		way := fmt.Sprintf("finish it: %s; or undo it: %s", RenameCommand(op, false), RenameCommand(op, true))
		switch {
		case op.Operation == installed.OperationUpgradeFamily:
			out = append(out, s.unfinishedFamily(op, on[id]))
			continue
		case op.Operation != installed.OperationRename:
			way = "finish it with the kubectl-xpkg that began it"
		case s.pkgByKey[op.From] == nil:
			way = fmt.Sprintf("%s is deleted already, so it can only be finished: %s", op.From, RenameCommand(op, false))
		case op.Undo:
			way = fmt.Sprintf("its undo had begun; finish the undo: %s", RenameCommand(op, true))
		}
		out = append(out, findings.Finding{Rule: findings.RuleUnfinishedOperation, Severity: findings.Blocking, Object: op.From, Count: findings.Count(int64(len(on[id]))),
			Message: fmt.Sprintf("%s %s of %s to %s stopped at %s, recorded on %s: unless it is running now, it was cut short and the packages stay half-changed; do not unpause or delete either package by hand (the resolver then installs a twin, and two nodes for one source stop every package); %s",
				op.Operation, id, op.From, op.To, at, strings.Join(on[id], ", "), way)})
	}
	return out
}

// unfinishedRepair: doctor --fix records each step on the Lock before it
// makes it and removes the record when it ends; a record left is a repair
// killed mid-way. Each step is whole (a revision deleted, a Lock entry or
// an owner reference removed) and planned again from the cluster before
// it is made, so running the repair again finishes it.
func (s *State) unfinishedRepair() []findings.Finding {
	lock, op, err := s.lockRecord()
	switch {
	case lock == nil:
		return nil
	case err != nil:
		return []findings.Finding{{Rule: findings.RuleUnfinishedOperation, Severity: findings.Warning, Object: lock.KindName(),
			Message: err.Error() + ": kubectl-xpkg wrote no such record; remove it (kubectl annotate lock " + lock.Name + " " + installed.OperationAnnotation + "-)"}}
	case op == nil:
		return nil
	}
	if HeldRecord(op) {
		// Past a finalizer's removal, objects went that only the backup
		// holds: a new repair finds nothing left to plan for them.
		return []findings.Finding{{Rule: findings.RuleUnfinishedOperation, Severity: findings.Blocking, Object: lock.KindName(),
			Message: fmt.Sprintf("%s %s stopped at step %d of %d (%s), recorded on the Lock: unless it is running now, it was cut short after removing the finalizers of objects whose definition was being deleted, and those objects may be gone; kubectl xpkg doctor --fix makes the missing ones again from its backup %s, with their external names, once the package manager has made their CRD again, and then removes this record (or kubectl apply -f the backup by hand)",
				op.Operation, op.ID, op.Step, op.Of, op.StepName, cmp.Or(op.Backup, "(the file it said it saved them to)"))}}
	}
	return []findings.Finding{{Rule: findings.RuleUnfinishedOperation, Severity: findings.Warning, Object: lock.KindName(),
		Message: fmt.Sprintf("%s %s stopped at step %d of %d (%s), recorded on the Lock: unless it is running now, it was cut short; every step it made is whole, and the findings here say what is left: run kubectl xpkg doctor --fix again to finish the repair (it removes the record)",
			op.Operation, op.ID, op.Step, op.Of, op.StepName)}}
}

// HeldRecord: op is a doctor --fix cut short in the repair of a held
// deletion (at the first finalizer's removal or after it), so objects
// may be gone that only its backup holds.
func HeldRecord(op *installed.Operation) bool {
	action, _, _ := strings.Cut(op.StepName, " ")
	return op.Operation == installed.OperationRepair && (action == RepairRemoveFinalizer || action == RepairAwaitDefinition || action == RepairRecreate)
}

// lockRecord is the record of an operation on the Lock (nil lock: no
// Lock read).
func (s *State) lockRecord() (*installed.Package, *installed.Operation, error) {
	if s.lockObj == nil {
		return nil, nil, nil
	}
	lock := &installed.Package{Kind: "Lock", Name: s.lockObj.GetName(), Object: s.lockObj}
	op, err := installed.ReadOperation(lock)
	return lock, op, err
}

// RepairRecord is the record a doctor --fix cut short left on the Lock,
// nil for none, and the Lock's UID.
func (s *State) RepairRecord() (*installed.Operation, string) {
	lock, op, _ := s.lockRecord()
	if op == nil || op.Operation != installed.OperationRepair {
		return nil, ""
	}
	return op, string(lock.Object.GetUID())
}

// unfinishedFamily: upgrade --family cut short leaves the family half
// moved: the same command finishes it (providers at the version are no
// step), and each provider moved goes back with rollback.
func (s *State) unfinishedFamily(op *installed.Operation, on []string) findings.Finding {
	var back []string
	for _, kn := range on {
		if p := s.pkgByKey[kn]; p != nil {
			if rec := installed.OperationOf(p); rec != nil && rec.Was != "" && rec.Was != p.Source {
				back = append(back, fmt.Sprintf("kubectl xpkg rollback %s (to %s)", kn, rec.Was))
			}
		}
	}
	undo := ""
	if len(back) > 0 {
		undo = "; or put back what it moved: " + strings.Join(back, "; ")
	}
	return findings.Finding{Rule: findings.RuleUnfinishedOperation, Severity: findings.Blocking, Object: on[0], Count: findings.Count(int64(len(on))),
		Message: fmt.Sprintf("upgrade --family %s to %s (%s) stopped at step %d of %d (%s), recorded on %s: unless it is running now, it was cut short and the family is half moved; finish it: kubectl xpkg upgrade --family %s %s%s",
			op.From, op.To, op.ID, op.Step, op.Of, op.StepName, strings.Join(on, ", "), op.From, op.To, undo)}
}

// partOf says which recorded operation p is part of, as a clause ("" for
// none), and how to end it.
func partOf(p *installed.Package) string {
	op := installed.OperationOf(p)
	if op == nil || op.Operation != installed.OperationRename {
		return ""
	}
	return fmt.Sprintf("; it is part of rename %s of %s to %s (unfinished-operation): finish it (%s) or undo it (%s) rather than change it by hand", op.ID, op.From, op.To, RenameCommand(op, false), RenameCommand(op, true))
}

// pausedPackages: the package manager leaves a paused package alone, and
// its conditions stay what they were (Healthy=True while nothing runs).
func (s *State) pausedPackages() []findings.Finding {
	var out []findings.Finding
	for _, p := range s.pkgs {
		if !p.Paused() {
			continue
		}
		msg := fmt.Sprintf("%s is paused (%s: \"true\"): the package manager makes, activates and deactivates none of its revisions, and its Installed and Healthy conditions are those from before the pause", p.KindName(), installed.PausedAnnotation)
		if cur := s.revByName[p.CurrentRevision]; cur != nil && !cur.IsActive() {
			msg += fmt.Sprintf("; its current revision %s is inactive: it runs nothing", cur.Name)
		}
		if part := partOf(p); part != "" {
			msg += part
		} else {
			msg += fmt.Sprintf("; unpause it: kubectl annotate %s %s-", strings.Replace(p.KindName(), "/", " ", 1), installed.PausedAnnotation)
		}
		out = append(out, findings.Finding{Rule: findings.RulePackagePaused, Severity: findings.Warning, Object: p.KindName(), Message: msg})
	}
	return out
}

// noRevisions: a package without a revision installs and runs nothing.
func (s *State) noRevisions() []findings.Finding {
	var out []findings.Finding
	for _, p := range s.pkgs {
		if !s.revsRead[p.Kind] || p.Object.GetDeletionTimestamp() != nil || len(s.RevisionsOf(p)) > 0 {
			continue
		}
		why := fmt.Sprintf("the package manager has made none (kubectl xpkg describe %s says why)", p.KindName())
		if p.Paused() {
			why = fmt.Sprintf("it is paused (%s), so the package manager makes none", installed.PausedAnnotation)
		}
		out = append(out, findings.Finding{Rule: findings.RuleNoRevision, Severity: findings.Warning, Object: p.KindName(),
			Message: fmt.Sprintf("%s has no revision: it installs and runs nothing; %s%s", p.KindName(), why, partOf(p))})
	}
	return out
}

// duplicatePackages: two packages of one repository are two nodes for
// one source as soon as both have an active revision in the Lock, and
// while one is paused or inactive, the other's every change (and the
// resolver) may bring them there. duplicate-lock-node tells the case
// where both are in the Lock already.
func (s *State) duplicatePackages() []findings.Finding {
	byRepo := map[string][]*installed.Package{}
	for _, p := range s.pkgs {
		repo := reference.Repository(p.Source)
		byRepo[repo] = append(byRepo[repo], p)
	}
	var out []findings.Finding
	for _, repo := range slices.Sorted(maps.Keys(byRepo)) {
		ps := byRepo[repo]
		if len(ps) < 2 || len(s.nodes.Repo(repo)) > 1 {
			continue
		}
		out = append(out, s.duplicatePackage(repo, ps))
	}
	return out
}

func (s *State) duplicatePackage(repo string, ps []*installed.Package) findings.Finding {
	var names []string
	var op *installed.Operation
	for _, p := range ps {
		n := p.KindName()
		if p.Paused() {
			n += " (paused)"
		}
		names = append(names, n)
		op = cmp.Or(op, installed.OperationOf(p))
	}
	head := fmt.Sprintf("%s install %s: the Lock takes one node per source, and once both have an active revision in it Crossplane resolves no package's dependencies", strings.Join(names, ", "), repo)
	way := ""
	switch want := ResolverName(repo); {
	case op != nil && op.Operation == installed.OperationRename:
		way = fmt.Sprintf("they are the two packages of rename %s (unfinished-operation): finish it (%s) or undo it (%s); deleting the new one and unpausing the old by hand lets the resolver install a twin", op.ID, RenameCommand(op, false), RenameCommand(op, true))
	case s.pkgByKey[installed.KindName(ps[0].Kind, want)] != nil:
		way = fmt.Sprintf("Crossplane's resolver keeps %s (its name for the repository, which it installs again whenever the Lock has no entry for it): delete the other (first check with kubectl xpkg describe which definitions only its revision owns: they go with it)", installed.KindName(ps[0].Kind, want))
	default:
		way = "keep one and delete the others (kubectl xpkg describe shows what each revision installed; definitions only a deleted revision owns go with it)"
	}
	return findings.Finding{Rule: findings.RuleDuplicatePackage, Severity: findings.Blocking, Object: ps[0].KindName(), Count: findings.Count(int64(len(ps))), Message: head + "; " + way}
}

// inactiveRevisions: a package under Automatic activation none of whose
// revisions is active runs nothing, though its conditions (kept while it
// is paused) may say Healthy; the dependents of its source report it
// missing.
func (s *State) inactiveRevisions() []findings.Finding {
	var out []findings.Finding
	for _, p := range s.pkgs {
		revs := s.RevisionsOf(p)
		if p.ActivationPolicy == "Manual" || !s.revsRead[p.Kind] || len(revs) == 0 || slices.ContainsFunc(revs, (*installed.Revision).IsActive) {
			continue
		}
		f := findings.Finding{Rule: findings.RuleInactiveRevision, Severity: findings.Warning, Object: p.KindName()}
		msg := fmt.Sprintf("%s activates its revisions automatically, but none of its %d revision(s) is active (its current revision %s is inactive): it runs nothing, whatever its Installed and Healthy conditions say",
			p.KindName(), len(revs), cmp.Or(p.CurrentRevision, "(none)"))
		if deps := installed.Dependents(s.lock, reference.Repository(p.Source)); len(deps) > 0 {
			f.Severity = findings.Blocking
			var by []string
			for _, d := range deps {
				by = append(by, s.entryOwner(d))
			}
			msg += fmt.Sprintf("; %s depend(s) on it and find it missing", strings.Join(by, ", "))
		}
		switch part := partOf(p); {
		case part != "":
			msg += part
		case p.Paused():
			msg += fmt.Sprintf("; it is paused, so the package manager activates none: unpause it (kubectl annotate %s %s-)", strings.Replace(p.KindName(), "/", " ", 1), installed.PausedAnnotation)
		default:
			msg += fmt.Sprintf("; kubectl xpkg upgrade %s --activate activates its current revision", p.KindName())
		}
		f.Message = msg
		out = append(out, f)
	}
	return out
}
