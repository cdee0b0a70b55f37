package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// UpgradeAll moves every installed package to its Wanted version,
// dependencies before the packages that need them, each step planned as a
// single upgrade is.
type UpgradeAll struct {
	Change   *Change
	Outdated *Outdated
	// Pin pins every target by digest; a package pinned already stays
	// pinned either way.
	Pin bool
	// Force goes ahead despite blocking findings.
	Force bool
	// Apply says how each step is carried out (Run); a package with
	// Manual activation cannot be waited for without Change.Activate.
	Options ChangeOptions
}

// NewUpgradeAll is upgrade --all on cfg's cluster, reading packages
// through its registry; it reads the cluster from one watch (Watch) until
// stop.
func NewUpgradeAll(ctx context.Context, cfg *Config, pre, activate bool) (u *UpgradeAll, stop func(), err error) {
	reg, err := cfg.Registry(ctx)
	if err != nil {
		return nil, nil, err
	}
	u = &UpgradeAll{Change: cfg.change(activate), Outdated: &Outdated{Registry: reg, Pre: pre}}
	if stop, err = u.Watch(ctx); err != nil {
		return nil, nil, err
	}
	return u, stop, nil
}

// Step is one package upgrade --all moves.
type Step struct {
	Item      *Item
	Installed *Installed
	Target    string
	Plan      *Plan
}

// Plans is the combined plan of upgrade --all: one plan per step, in the
// order the steps run.
type Plans struct {
	Action string  `json:"action"`
	Steps  []*Plan `json:"steps"`
	// Skipped are the packages whose registry could not be read.
	Skipped []string `json:"skipped,omitempty"`
	// Blocked are the newer versions the packages do not move to because
	// their own dependencies cannot be met.
	Blocked []BlockedMove `json:"blocked,omitempty"`
	// Family and Version are upgrade --family's: the family moved, to one
	// version.
	Family  string `json:"family,omitempty"`
	Version string `json:"version,omitempty"`
	// Families are the provider families upgrade --all moves as one:
	// each to one version.
	Families []FamilyMove `json:"families,omitempty"`

	steps []*Step
	// family are upgrade --family's providers, each of which may carry
	// the record of a run of it cut short; id is this run's.
	family []*installed.Package
	id     string
}

// BlockedMove is a package kept below a version whose dependencies cannot
// be met.
type BlockedMove struct {
	Package string `json:"package"`
	Blocked
}

// Run are the steps of the combined plan, in the order they run.
func (p *Plans) Run() []*Step { return p.steps }

// Blocking reports whether any step has a blocking finding.
func (p *Plans) Blocking() bool {
	return slices.ContainsFunc(p.Steps, (*Plan).Blocking)
}

// Refused is the error of the first step a blocking finding stops.
func (p *Plans) Refused() *RefusedError {
	for _, s := range p.Steps {
		if s.Blocking() {
			return &RefusedError{Plan: s}
		}
	}
	return nil
}

// Watch has the plan and the steps read the package objects, their
// revisions and the Lock from one watch until stop (cluster.Share), so
// that planning a step again and waiting for it do not read them all
// again: the requests grow with the steps, not with their square. An
// identity that may not watch reads directly, as before.
func (u *UpgradeAll) Watch(ctx context.Context) (stop func(), err error) {
	stop, err = u.Change.Cluster.Share(ctx)
	if apierrors.IsForbidden(err) {
		return func() {}, nil
	}
	return stop, err
}

// Plan finds the packages whose Wanted version is newer than what they
// run, orders them (dependencies first) and plans each against the
// cluster as it is now.
func (u *UpgradeAll) Plan(ctx context.Context) (*Plans, error) {
	items, lock, err := u.Outdated.Items(ctx, "")
	if err != nil {
		return nil, err
	}
	ps := &Plans{Action: ActionUpgrade, Steps: []*Plan{}}
	var moving []*Item
	for _, it := range items {
		for _, b := range it.Blocked {
			ps.Blocked = append(ps.Blocked, BlockedMove{Package: it.String(), Blocked: b})
		}
		switch {
		case it.Error != "":
			ps.Skipped = append(ps.Skipped, it.String())
		case it.Moves():
			moving = append(moving, it)
		}
	}
	moving, ps.Families = u.groupFamilies(items, moving, lock)
	for _, it := range dependenciesFirst(moving, lock) {
		if err := u.planStep(ctx, ps, it, it.repo+":"+it.wantedTag); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// SkippedError is the error of the packages whose registries could not be
// read (exit status 1), after what could be done was.
func (p *Plans) SkippedError() error {
	if len(p.Skipped) == 0 {
		return nil
	}
	return exit.WithCode(exit.Unread, fmt.Errorf("not upgraded, their registries could not be read (kubectl xpkg outdated says why): %s", strings.Join(p.Skipped, ", ")))
}

// Apply runs the steps of ps (steps says how), as u.Options says, and
// gives the error its exit code: a step a blocking finding stopped 3;
// otherwise as for one upgrade; then the packages skipped.
func (u *UpgradeAll) Apply(ctx context.Context, ps *Plans, ev StepEvents) error {
	o := u.Options.applyOptions()
	if err := u.steps(ctx, ps, o, ev); err != nil {
		var se *StepError
		if !errors.As(err, &se) {
			return changeError(ctx, err)
		}
		// Rolled back below (or nothing moved): the records go.
		forget := ps.Family != "" && o.Atomic && !se.Refused && exit.Code(se.Err) != exit.RollbackFailed
		if ps.Family != "" {
			se.What = "upgrade --family " + ps.Family
		}
		if se.Refused {
			return exit.WithCode(exit.PlanRefused, err)
		}
		if ps.Family != "" && o.Atomic && len(se.Done) > 0 {
			if rerr := u.rollBackFamily(ctx, ps, se, o); rerr != nil {
				return exit.WithCode(exit.RollbackFailed, fmt.Errorf("%w; the family's rollback failed too: %w", err, rerr))
			}
			err = fmt.Errorf("%w; family %s rolled back: %s run their previous versions again", err, ps.Family, strings.Join(se.Done, ", "))
		}
		if forget {
			if ferr := u.forgetFamily(ctx, ps); ferr != nil {
				err = errors.Join(err, ferr)
			}
		}
		return changeError(ctx, err)
	}
	if err := u.forgetFamily(ctx, ps); err != nil {
		return err
	}
	return ps.SkippedError()
}

// dependenciesFirst orders the items so that each comes after every item
// it depends on, directly or through other packages, as the Lock says;
// otherwise in the order given.
func dependenciesFirst(items []*Item, lock []installed.LockPackage) []*Item {
	deps := map[string][]string{}
	for _, lp := range lock {
		r := reference.Repository(lp.Source)
		for _, d := range lp.Dependencies {
			deps[r] = append(deps[r], reference.Repository(d.Package))
		}
	}
	byRepo := map[string]*Item{}
	for _, it := range items {
		byRepo[it.repo] = it
	}
	var out []*Item
	placed, seen := map[*Item]bool{}, map[string]bool{}
	var visit func(repo string)
	visit = func(repo string) {
		if seen[repo] {
			return // done, or a cycle the package manager refuses anyway
		}
		seen[repo] = true
		for _, d := range deps[repo] {
			visit(d)
		}
		if it := byRepo[repo]; it != nil && !placed[it] {
			placed[it] = true
			out = append(out, it)
		}
	}
	for _, it := range items {
		visit(it.repo)
	}
	return out
}

// StepEvents hear how upgrade --all goes: a step planned again before it
// runs (the cluster changed since the combined plan) and a step done.
type StepEvents struct {
	Replanned func(*Plan)
	Done      func(s *Step, updated *installed.Package)
}

// StepError is upgrade --all stopped at a step: what was done before it
// stays, what follows was not tried.
type StepError struct {
	// What is the verb: upgrade --all, or upgrade --family NAME.
	What    string
	Step    *Step
	Done    []string
	NotRun  []string
	Err     error
	Refused bool
}

func (e *StepError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s stopped at %s: %v", cmp.Or(e.What, "upgrade --all"), e.Step.Plan.Package, e.Err)
	if len(e.Done) > 0 {
		fmt.Fprintf(&b, "; upgraded before it: %s", strings.Join(e.Done, ", "))
	}
	if len(e.NotRun) > 0 {
		fmt.Fprintf(&b, "; not tried: %s", strings.Join(e.NotRun, ", "))
	}
	return b.String()
}

func (e *StepError) Unwrap() error { return e.Err }

// steps runs the steps in order. Each step is planned again just before
// it runs: the combined plan may be minutes old, and the steps before it
// changed the cluster. A blocking finding then stops it unless Force; the
// first step is stopped too by any finding its approved plan did not have
// (nothing has changed the cluster since but someone else). With o.Wait
// each step is waited for before the next; with o.Atomic the step that
// fails is rolled back, and nothing after it runs.
func (u *UpgradeAll) steps(ctx context.Context, ps *Plans, o ApplyOptions, ev StepEvents) error {
	var done []string
	for i, s := range ps.steps {
		notRun := func() []string {
			var out []string
			for _, r := range ps.steps[i+1:] {
				out = append(out, r.Plan.Package)
			}
			return out
		}
		if !o.DryRun {
			approved := s.Plan
			in, err := ReadInstalled(ctx, u.Outdated.Registry, s.Installed.Package)
			if err == nil {
				s.Installed = in
				s.Plan, err = u.Change.Plan(ctx, ActionUpgrade, in, s.Target)
			}
			if err != nil {
				return &StepError{Step: s, Done: done, NotRun: notRun(), Err: err}
			}
			if ev.Replanned != nil && i > 0 {
				ev.Replanned(s.Plan)
			}
			if f := newFinding(approved, s.Plan); i == 0 && f != nil {
				return &StepError{Step: s, Done: done, NotRun: notRun(),
					Err: &cluster.ChangedError{Action: ActionUpgrade, Package: s.Plan.Package, What: "a new finding: " + f.Message}}
			}
			if s.Plan.Blocking() && !u.Force {
				return &StepError{Step: s, Done: done, NotRun: notRun(), Err: &RefusedError{Plan: s.Plan}, Refused: true}
			}
		}
		if err := u.recordFamilyStep(ctx, ps, i, o.DryRun); err != nil {
			return &StepError{Step: s, Done: done, NotRun: notRun(), Err: err}
		}
		updated, err := u.Change.Apply(ctx, s.Installed, s.Target, o)
		if err != nil {
			return &StepError{Step: s, Done: done, NotRun: notRun(), Err: err}
		}
		if ev.Done != nil {
			ev.Done(s, updated)
		}
		done = append(done, s.Plan.Package)
	}
	return nil
}

// newFinding is the first finding of fresh (but infos) that the approved
// plan did not have, or nil.
func newFinding(approved, fresh *Plan) *findings.Finding {
	seen := map[string]bool{}
	for _, f := range approved.Findings {
		seen[f.Key()] = true
	}
	for i, f := range fresh.Findings {
		if f.Severity != findings.Info && !seen[f.Key()] {
			return &fresh.Findings[i]
		}
	}
	return nil
}
