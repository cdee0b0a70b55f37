package action

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/repair"
)

// DefaultRepairSettle is how long doctor --fix waits, by default, for the
// package manager to take the repair in.
const DefaultRepairSettle = time.Minute

// Repair is what doctor --fix does: the steps, in order; the file the
// objects they change were saved to; the steps made.
type Repair = repair.Plan

// PlanRepair reads the state, as Run does, and plans the repair of what
// it can prove: the report with its Repair. The objects that hold a
// definition's deletion are read whole for it.
func (d *Doctor) PlanRepair(ctx context.Context) (*Report, error) {
	rep, s, err := d.examine(ctx)
	if err != nil {
		return nil, err
	}
	c, err := d.cfg.connect()
	if err != nil {
		return nil, err
	}
	s.ReadHeldRepairs(ctx, c, d.OrphanExternal)
	rec, _ := s.RepairRecord()
	resume, left, err := repair.Resume(ctx, c, d.mapper, rec)
	if err != nil {
		return nil, err
	}
	steps := s.RepairSteps()
	if n := len(steps); n > 0 && len(resume) > 0 {
		// The record's removal stays last, once the repair it tells of is
		// finished.
		steps = append(steps[:n-1:n-1], append(resume, steps[n-1])...)
	}
	rep.Repair = &Repair{Steps: steps, Left: append(s.RepairLeft(), left...), Orphaning: s.Orphaning()}
	return rep, nil
}

func (d *Doctor) mapper() (meta.RESTMapper, error) { return d.cfg.apiClients().Mapper() }

// Backup is every object the repair changes or deletes, as it is now,
// as kubectl apply -f takes it back.
func (d *Doctor) Backup(ctx context.Context, rep *Report) ([]*unstructured.Unstructured, error) {
	c, err := d.cfg.connect()
	if err != nil {
		return nil, err
	}
	return repair.Backup(ctx, c, rep.Repair.Steps)
}

// RepairOptions say how the repair is carried out.
type RepairOptions struct {
	// DryRun sends every step with the API server's dry run.
	DryRun bool
	// Wait bounds how long a definition is waited for, read every
	// Interval.
	Wait, Interval time.Duration
	// Done hears each step made.
	Done func(diagnose.RepairStep)
}

// Repair makes the steps in order (repair.Executor): each planned again
// before it is made, stopped by another writer's change (exit status 4).
func (d *Doctor) Repair(ctx context.Context, rep *Report, o RepairOptions) error {
	c, err := d.cfg.connect()
	if err != nil {
		return err
	}
	e := &repair.Executor{Cluster: c, ID: newOperationID(), DryRun: o.DryRun, Wait: o.Wait, Interval: o.Interval, Done: o.Done,
		Mapper: d.mapper,
		Replan: func(ctx context.Context) ([]diagnose.RepairStep, error) {
			_, s, err := d.examine(ctx)
			if err != nil {
				return nil, err
			}
			return s.RepairSteps(), nil
		}}
	return changeError(ctx, e.Run(ctx, rep.Repair))
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
