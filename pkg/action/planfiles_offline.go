package action

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/compare"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// offline plans manifests with no cluster (plan -f --offline): against
// the base manifests (the target branch's) and the registries. The Lock
// is the one the new set would make, from each package's meta object.
type offline struct {
	pf  *PlanFiles
	reg *resolve.Registry
	// set are the new manifests' packages; lock the Lock they make.
	set  []*installed.Package
	lock []installed.LockPackage
	// Each reference is read once: metas by reference, compared by the
	// package that moves.
	metas    map[string]*xpkg.Meta
	compared map[*wanted]*compare.PlanInput
}

// planOffline plans ms against pf.Base and the registries only.
func (pf *PlanFiles) planOffline(ctx context.Context, ms []Manifest, ignored int) (*FilesPlan, error) {
	news, err := offlinePackages(ms)
	if err != nil {
		return nil, err
	}
	bases, err := offlinePackages(pf.Base)
	if err != nil {
		return nil, err
	}
	reg, err := pf.cfg.Registry(ctx)
	if err != nil {
		return nil, err
	}
	o := &offline{pf: pf, reg: reg, set: news, metas: map[string]*xpkg.Meta{}, compared: map[*wanted]*compare.PlanInput{}}
	ws := make([]*wanted, len(ms))
	for i, m := range ms {
		ws[i] = &wanted{m: m, want: news[i]}
		if j := slices.IndexFunc(bases, func(b *installed.Package) bool { return b.KindName() == news[i].KindName() }); j >= 0 {
			ws[i].have = bases[j]
		}
	}
	if err := o.readSet(ctx, ws); err != nil {
		return nil, err
	}
	fp := &FilesPlan{Manifests: len(ms), Ignored: ignored, Plans: []*Plan{}, Offline: true, Base: len(bases), Findings: []findings.Finding{}}
	// What the package manager does with the set, as on a cluster that
	// runs only its packages: the Lock they make, and the dependencies
	// the resolver then installs.
	after := diagnose.LockState{Lock: o.lock, Objects: diagnose.Objects(news)}
	if fp.Prediction, err = pf.cfg.predict(ctx, nil, diagnose.LockState{}, after); err != nil {
		return nil, err
	}
	fp.Findings = append(fp.Findings, fp.Prediction.Findings("the change")...)
	for _, w := range ws {
		if p := o.plan(ctx, w); p != nil {
			fp.Plans = append(fp.Plans, p)
		} else {
			fp.Unchanged = append(fp.Unchanged, w.want.KindName())
		}
	}
	for _, b := range bases {
		if !slices.ContainsFunc(news, func(n *installed.Package) bool { return n.KindName() == b.KindName() }) {
			fp.Removed = append(fp.Removed, b.KindName())
		}
	}
	return fp, nil
}

// offlinePackages reads the manifests' packages as a cluster would serve
// them (the kinds are the same in both package API groups).
func offlinePackages(ms []Manifest) ([]*installed.Package, error) {
	d := cluster.StaticDialect()
	out := make([]*installed.Package, len(ms))
	for i, m := range ms {
		kind, err := cluster.ResolveKind(d, m.Object.GetKind())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Where, err)
		}
		p := d.Decode(m.Object)
		p.Kind, p.Name = kind, m.Object.GetName()
		if p.Source == "" {
			return nil, fmt.Errorf("%s: %s has no spec.package: name its package reference", m.Where, p.KindName())
		}
		out[i] = p
	}
	return out, nil
}

// readSet compares each package that moves with its base version (which
// reads the target's meta object too), reads the meta object of every
// other package of the set, and makes the set's Lock of them.
func (o *offline) readSet(ctx context.Context, ws []*wanted) error {
	for _, w := range ws {
		if w.have == nil || sameReference(w.have.Source, w.want.Source) {
			continue
		}
		res, err := o.compare(ctx, w.have.Source, w.want.Source)
		if err != nil {
			return fmt.Errorf("%s: plan the change of %s: %w", w.m.Where, w.want.KindName(), err)
		}
		o.compared[w], o.metas[w.want.Source] = res, res.Meta
	}
	for _, w := range ws {
		meta, ok := o.metas[w.want.Source]
		if !ok {
			mr := o.reg.ReadMeta(ctx, w.want.Source, nil, resolve.MetaOptions{Limits: o.pf.cfg.Limits})
			if mr.Err != "" {
				return fmt.Errorf("%s: %s %s", w.m.Where, w.want.Source, mr.Err)
			}
			meta, o.metas[w.want.Source] = mr.Meta, mr.Meta
		}
		w.meta = meta
		o.lock = append(o.lock, lockEntry(w.want, w.want.Source, meta))
	}
	return nil
}

// compare reads both packages as an upgrade's plan does, as the user
// reads them (no cluster: no ImageConfig, no pull secret).
func (o *offline) compare(ctx context.Context, from, to string) (*compare.PlanInput, error) {
	var refs [2]string
	var opts [2]source.Options
	for i, ref := range []string{from, to} {
		var err error
		if refs[i], opts[i], err = o.reg.Locate(ctx, ref, nil); err != nil {
			return nil, err
		}
	}
	res, err := compare.ForPlan(ctx, refs, opts, o.pf.cfg.Limits)
	if err != nil {
		return nil, err
	}
	for _, i := range res.Infos {
		o.pf.cfg.Events.said(i)
	}
	return res, nil
}

// plan plans one manifest against its base: nil when it changes nothing.
func (o *offline) plan(ctx context.Context, w *wanted) *Plan {
	kn, target := w.want.KindName(), w.want.Source
	if w.have == nil {
		p := NewPlan(ActionInstall, kn, "", target)
		o.checkTarget(ctx, p, w.meta, target)
		return p
	}
	edits := specEdits(w.have, w.m)
	res := o.compared[w]
	if res == nil && len(edits) == 0 {
		return nil
	}
	p := NewPlan(ActionUpdate, kn, "", "")
	if res != nil {
		p = o.planChange(ctx, w, res)
	}
	if len(edits) > 0 {
		p.add(offlineEditFinding(w, edits))
	}
	return p
}

// planChange plans a new package reference: an upgrade, or a rollback
// when older, with what the two packages and the set tell.
func (o *offline) planChange(ctx context.Context, w *wanted, res *compare.PlanInput) *Plan {
	from, target := w.have.Source, w.want.Source
	action := ActionUpgrade
	if diagnose.DowngradeFinding(false, refVersion(from), refVersion(target)) != nil {
		action = ActionRollback
	}
	p := NewPlan(action, w.want.KindName(), from, target)
	// Every CRD stores objects at least at its storage version: stranding
	// one is certain without the cluster.
	p.add(diagnose.StoredVersionFindings(diff.Preflight(res.Old, res.New, storageVersions(res.Old)), target)...)
	if f := droppedDefinitionsFinding(diagnose.RemovedKinds(res.Old, res.New), w.want.KindName(), target); f != nil {
		p.add(*f)
	}
	o.checkTarget(ctx, p, res.Meta, target)
	if f := diagnose.DowngradeFinding(action == ActionRollback, refVersion(from), refVersion(target)); f != nil {
		p.add(*f)
	}
	p.add(diagnose.BreakingFindings(res.Report)...)
	return p
}

// checkTarget adds what an install and a change share: the target's
// validity, the set's constraints on it, and its Crossplane constraint,
// which only the cluster can check (its dependencies are the set's
// prediction).
func (o *offline) checkTarget(ctx context.Context, p *Plan, meta *xpkg.Meta, target string) {
	p.add(invalidPackageFindings(meta, target)...)
	p.add(o.dependentFindings(p.Package, target)...)
	if meta != nil && meta.Crossplane != "" {
		p.add(findings.Finding{Rule: findings.RuleOffline, Severity: findings.Info, Object: p.Package,
			Message: fmt.Sprintf("%s needs Crossplane %s, which is not checked offline: plan -f without --offline checks it against the running Crossplane", target, meta.Crossplane)})
	}
}

// dependentFindings: the set's packages whose dependsOn excludes the
// target version, as planLock checks the Lock's.
func (o *offline) dependentFindings(pkg, target string) []findings.Finding {
	repo, version := reference.Repository(target), refVersion(target)
	pinned := reference.Digest(target) != ""
	var out []findings.Finding
	if _, err := semver.NewVersion(version); err == nil {
		out = diagnose.DependentFindings(o.lock, o.set, repo, version)
	} else if deps := installed.Dependents(o.lock, repo); len(deps) > 0 && !pinned {
		out = append(out, findings.Finding{Rule: findings.RuleDependentConstraint, Severity: findings.Warning, Object: pkg,
			Message: fmt.Sprintf("%s is no semantic version, so the constraints of the %d packages of the manifests that depend on %s cannot be checked against it", version, len(deps), pkg)})
	}
	if pinned {
		out = append(out, diagnose.PinnedFindings(Holds(o.lock, o.set, repo), pkg, target)...)
	}
	return out
}

// invalidPackageFindings: a meta object Crossplane refuses.
func invalidPackageFindings(meta *xpkg.Meta, target string) []findings.Finding {
	if meta == nil {
		return nil
	}
	var out []findings.Finding
	for _, msg := range xpkg.MetadataProblems(meta.Object) {
		out = append(out, findings.Finding{Rule: findings.RuleInvalidPackage, Severity: findings.Blocking, Object: meta.Kind + " " + meta.Name(),
			Message: fmt.Sprintf("%s is invalid: its %s %s", target, meta.Kind, msg)})
	}
	return out
}

// storageVersions are the versions each definition stores objects at for
// certain: its storage version (status.storedVersions may hold more).
func storageVersions(defs diff.Definitions) map[string][]string {
	out := map[string][]string{}
	for name, vs := range defs {
		for _, v := range vs {
			if v.Storage {
				out[name] = append(out[name], v.Name)
			}
		}
	}
	return out
}

// droppedDefinitionsFinding: kinds and versions the target drops, whose
// live objects only the cluster can count. One finding for them all.
func droppedDefinitionsFinding(losses map[string][]string, pkg, target string) *findings.Finding {
	if len(losses) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(losses))
	shown := names
	if len(shown) > 3 {
		shown = shown[:3]
	}
	list := strings.Join(shown, ", ")
	if len(names) > len(shown) {
		list += fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	return &findings.Finding{Rule: findings.RuleOffline, Severity: findings.Warning, Object: pkg, Count: findings.Count(int64(len(names))),
		Message: fmt.Sprintf("%s drops a kind or a served version of %d CRD(s) (%s): whether objects of them exist, which would be deleted with a kind or break clients of a version, only the cluster can tell; plan -f without --offline counts them", target, len(names), list)}
}

// offlineEditFinding says what a spec edit does without knowing the
// running Crossplane: from v2.4 a new revision, and under Manual
// activation a package that runs nothing until it is activated.
func offlineEditFinding(w *wanted, edits []string) findings.Finding {
	kn := w.want.KindName()
	f := findings.Finding{Rule: findings.RuleSpecChange, Severity: findings.Info, Object: kn}
	effect := "on Crossplane v2.4 and later each spec edit makes a new revision"
	switch {
	case w.have.ActivationPolicy == "Manual":
		f.Severity = findings.Warning
		effect = fmt.Sprintf("on Crossplane v2.4 and later it makes a new revision and, under Manual activation, deactivates the running one: %s runs nothing until the new revision is activated", kn)
	case w.want.Kind != "Configuration":
		effect += ", and the runtime restarts"
	}
	f.Message = fmt.Sprintf("%s (%s): %s; %s (offline, the running Crossplane's version is not known)", kn, w.m.Where, strings.Join(edits, ", "), effect)
	return f
}
