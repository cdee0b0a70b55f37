package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// PlanFamily plans upgrade --family: the family provider and every
// member of the family installed, to one version (version, or the
// newest that every one of their repositories has and every installed
// package's constraint admits), the family provider first. Providers at
// that version already are no step.
func (u *UpgradeAll) PlanFamily(ctx context.Context, family, version string) (*Plans, error) {
	items, lock, err := u.Outdated.Items(ctx, "")
	if err != nil {
		return nil, err
	}
	fam, err := familyItems(items, family)
	if err != nil {
		return nil, err
	}
	if version == "" {
		if version, err = familyVersion(fam, items, lock, u.Outdated.Pre); err != nil {
			return nil, err
		}
	} else if err := familyHas(fam, version); err != nil {
		return nil, err
	}
	ps := &Plans{Action: ActionUpgrade, Steps: []*Plan{}, Family: family, Version: version, id: newOperationID()}
	for _, it := range fam {
		ps.family = append(ps.family, it.pkg)
		if it.Current == version {
			continue
		}
		if err := u.planStep(ctx, ps, it, it.repo+":"+version); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// planStep plans one step of ps: it moving to target (pinned when asked,
// or when it is pinned now).
func (u *UpgradeAll) planStep(ctx context.Context, ps *Plans, it *Item, target string) error {
	in, err := ReadInstalled(ctx, u.Outdated.Registry, it.pkg)
	if err != nil {
		return err
	}
	if u.Pin || it.Pinned {
		if target, err = in.Pin(ctx, target); err != nil {
			return err
		}
	}
	plan, err := u.Change.Plan(ctx, ActionUpgrade, in, target)
	if err != nil {
		return err
	}
	if err := Waitable(in.Package, u.Options.Wait, u.Change.Activate); err != nil {
		return err
	}
	ps.Steps = append(ps.Steps, plan)
	ps.steps = append(ps.steps, &Step{Item: it, Installed: in, Target: target, Plan: plan})
	return nil
}

// familyItems are the family's providers, the family providers first,
// then the members by name; each must have been read.
func familyItems(items []*Item, family string) ([]*Item, error) {
	var fam []*Item
	for _, it := range items {
		if it.Family == family {
			fam = append(fam, it)
		}
	}
	if len(fam) == 0 {
		return nil, fmt.Errorf("no installed provider belongs to the family %s (kubectl xpkg get providers -o wide shows each provider's FAMILY)", family)
	}
	slices.SortStableFunc(fam, func(a, b *Item) int {
		fa, fb := diagnose.NamesFamily(a.repo, family), diagnose.NamesFamily(b.repo, family)
		switch {
		case fa && !fb:
			return -1
		case fb && !fa:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, it := range fam {
		if it.Error != "" {
			return nil, fmt.Errorf("%s of family %s: its registry could not be read (%s): a family moves as one or not at all", it, family, it.Error)
		}
	}
	return fam, nil
}

// familyVersion is the newest version every provider of the family has,
// and every constraint on any of them admits (resolve.Admitted).
func familyVersion(fam, all []*Item, lock []installed.LockPackage, pre bool) (string, error) {
	pkgs := make([]*installed.Package, len(all))
	for i, it := range all {
		pkgs[i] = it.pkg
	}
	var common []versions.Tag
	for i, it := range fam {
		// A hold that is no range (a digest) is the plan's to check.
		var ranges []string
		for _, h := range Holds(lock, pkgs, it.repo) {
			if resolve.IsRange(h.Constraint) {
				ranges = append(ranges, h.Constraint)
			}
		}
		tags, _ := resolve.Admitted(it.tags, ranges, pre)
		if i == 0 {
			common = tags
			continue
		}
		common = slices.DeleteFunc(common, func(t versions.Tag) bool {
			return !slices.ContainsFunc(tags, func(u versions.Tag) bool { return u.Name == t.Name })
		})
	}
	if len(common) == 0 {
		return "", fmt.Errorf("no version is in every repository of the family (%s) and admitted by every constraint on them: name one, kubectl xpkg upgrade --family %s VERSION", familyNames(fam), fam[0].Family)
	}
	return common[0].Name, nil
}

// familyHas: every provider of the family has version.
func familyHas(fam []*Item, version string) error {
	var lack []string
	for _, it := range fam {
		if !slices.ContainsFunc(it.tags, func(t versions.Tag) bool { return t.Name == version }) {
			lack = append(lack, it.String())
		}
	}
	if len(lack) > 0 {
		return fmt.Errorf("%s: no version %s in the repository of %s: a family moves as one", fam[0].Family, version, strings.Join(lack, ", "))
	}
	return nil
}

func familyNames(fam []*Item) string {
	names := make([]string, len(fam))
	for i, it := range fam {
		names[i] = it.String()
	}
	return strings.Join(names, ", ")
}

// FamilyMove is a provider family upgrade --all moves as one.
type FamilyMove struct {
	Family  string `json:"family"`
	Version string `json:"version"`
}

// groupFamilies: a provider family of which a provider moves moves as
// one, to the version upgrade --family would choose, unless a provider
// of it runs a newer one (or a registry of it could not be read): then
// its providers move on their own, as before.
func (u *UpgradeAll) groupFamilies(items, moving []*Item, lock []installed.LockPackage) ([]*Item, []FamilyMove) {
	var fams []string
	for _, it := range moving {
		if it.Family != "" && !slices.Contains(fams, it.Family) {
			fams = append(fams, it.Family)
		}
	}
	slices.Sort(fams)
	var moves []FamilyMove
	for _, f := range fams {
		fam, err := familyItems(items, f)
		if err != nil {
			continue
		}
		v, err := familyVersion(fam, items, lock, u.Outdated.Pre)
		if err != nil || slices.ContainsFunc(fam, func(it *Item) bool { return newer(it.Current, v) }) {
			continue
		}
		moves = append(moves, FamilyMove{Family: f, Version: v})
		for _, it := range fam {
			moving = slices.DeleteFunc(moving, func(m *Item) bool { return m == it })
			if it.Current != v {
				it.Wanted, it.wantedTag = v, v
				moving = append(moving, it)
			}
		}
	}
	return moving, moves
}

// newer: a is a semantic version above b.
func newer(a, b string) bool {
	va, errA := semver.NewVersion(a)
	vb, errB := semver.NewVersion(b)
	return errA == nil && errB == nil && va.GreaterThan(vb)
}

// rollBackFamily puts the steps done back where they were through the
// Rollback action, the last first, each waited for, once a step of the
// family failed (its own --atomic rolled it back already). The steps
// share one rollback budget.
func (u *UpgradeAll) rollBackFamily(ctx context.Context, ps *Plans, se *StepError, o ApplyOptions) error {
	rb := u.Change.rollback(o)
	deadline := time.Now().Add(rb.budget())
	// Also after Ctrl-C: the family must not be left half moved.
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	var errs []error
	for i := len(ps.steps) - 1; i >= 0; i-- {
		s := ps.steps[i]
		if !slices.Contains(se.Done, s.Plan.Package) {
			continue
		}
		was := s.Installed.Package
		u.Change.Events.say("%s: rolling back to %s, since %s failed and a family moves as one", s.Plan.Package, was.Source, se.Step.Plan.Package)
		now, err := u.Change.Cluster.Get(rctx, was.Kind, was.Name)
		if err == nil {
			rb.Budget = max(time.Until(deadline), time.Nanosecond)
			_, _, err = rb.putBack(rctx, was, now)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("roll back %s to %s: %w", s.Plan.Package, was.Source, err))
			continue
		}
		u.Change.Events.result("%s rolled back to %s", s.Plan.Package, was.Version)
	}
	return errors.Join(errs...)
}

// ActionUpgradeFamily names upgrade --family in the record it writes.
const ActionUpgradeFamily = installed.OperationUpgradeFamily

// recordFamilyStep writes, before step i of upgrade --family moves its
// provider, the record of the run on that provider
// (installed.OperationAnnotation): a run killed mid-way leaves the family
// half moved, and doctor names it (unfinished-operation) with the
// command that finishes it and the providers to roll back. upgrade --all
// records nothing.
func (u *UpgradeAll) recordFamilyStep(ctx context.Context, ps *Plans, i int, dryRun bool) error {
	if ps.Family == "" || dryRun {
		return nil
	}
	s := ps.steps[i]
	p := s.Installed.Package
	op := &installed.Operation{Operation: ActionUpgradeFamily, ID: ps.id, From: ps.Family, To: ps.Version, Step: i + 1, Of: len(ps.steps),
		StepName: fmt.Sprintf("upgrade %s to %s", p.KindName(), s.Target), Was: p.Source}
	if err := u.Change.Cluster.SetOperation(ctx, p, op); err != nil {
		return fmt.Errorf("record step %d of upgrade --family %s on %s: %w", i+1, ps.Family, p.KindName(), err)
	}
	return nil
}

// forgetFamily removes the records of upgrade --family (this run's and a
// run's cut short) from the family's providers, once it is done or
// rolled back.
func (u *UpgradeAll) forgetFamily(ctx context.Context, ps *Plans) error {
	var errs []error
	for _, p := range ps.family {
		if op := installed.OperationOf(p); op == nil && !slices.ContainsFunc(ps.steps, func(s *Step) bool { return s.Installed.Package.KindName() == p.KindName() }) {
			continue // carried no record when planned, and was no step
		}
		if err := u.Change.Cluster.SetOperation(context.WithoutCancel(ctx), p, nil); err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("remove the record of upgrade --family %s from %s: %w", ps.Family, p.KindName(), err))
		}
	}
	return errors.Join(errs...)
}
