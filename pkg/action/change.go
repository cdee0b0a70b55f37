package action

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/Masterminds/semver/v3"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/compare"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Actions a plan is for.
const (
	ActionUpgrade   = "upgrade"
	ActionRollback  = "rollback"
	ActionUninstall = "uninstall"
	ActionInstall   = "install"
)

// Change moves an installed package to another package reference: what
// Upgrade and Rollback share.
type Change struct {
	Cluster *cluster.Cluster
	Limits  xpkg.Limits
	// XPNamespace is Crossplane's namespace, where its Deployment runs.
	XPNamespace string
	// Activate activates the new revision of a package with Manual
	// activation.
	Activate bool
	// Events hear what each package read found, and what a change made
	// without a plan, or made and followed, goes through.
	Events Events
	// Overlay are Lock entries that stand, in the plan, for those of the
	// same source (and are added where none is): what a set of changes
	// planned together makes of the Lock (plan -f), whose prediction is
	// the set's: a plan of the set predicts nothing by itself.
	Overlay []installed.LockPackage

	cfg *Config
}

// Plan checks moving the installed package to target, changing nothing:
// it compares the running revision's package with the target's, and
// checks the result against the cluster (stored versions, live objects,
// the Lock, the running Crossplane).
func (c *Change) Plan(ctx context.Context, action string, in *Installed, target string) (*Plan, error) {
	r, err := c.Read(ctx, action, in, target)
	if err != nil {
		return nil, err
	}
	return c.Check(ctx, r)
}

// PlanRead is what planning a change reads of the two packages: the plan
// begun, and their comparison (with the target's meta object).
type PlanRead struct {
	plan   *Plan
	in     *Installed
	target string
	res    *compare.PlanInput
}

// Meta is the target's meta object (nil for a legacy package).
func (r *PlanRead) Meta() *xpkg.Meta { return r.res.Meta }

// Read reads and compares the running revision's package and the
// target's, each once: what Check judges. A set of changes (plan -f) reads
// every one first, so that each is checked against what all the others
// make of the Lock.
func (c *Change) Read(ctx context.Context, action string, in *Installed, target string) (*PlanRead, error) {
	pkg := in.Package
	// From is what runs: under Manual activation spec.package may name a
	// revision not yet active.
	p := NewPlan(action, pkg.KindName(), in.Image, target)
	p.in = in
	// Read where the package manager reads: through the ImageConfigs,
	// with the package's pull secrets.
	var refs [2]string
	var opts [2]source.Options
	for i, ref := range []string{in.Image, target} {
		var err error
		if refs[i], opts[i], err = in.Locate(ctx, ref); err != nil {
			return nil, fmt.Errorf("plan the %s of %s: %w", action, p.Package, err)
		}
		if fb := in.Registry.FellBackFor(refs[i]); fb != nil {
			p.add(pullSecretFinding(fb, ref))
		}
	}
	// The packages are read as streams: a provider of 2,000 CRDs is
	// 100 MB of YAML a version, of which the plan keeps the report and
	// the definitions' versions.
	res, err := compare.ForPlan(ctx, refs, opts, c.Limits)
	if err != nil {
		return nil, fmt.Errorf("plan the %s of %s: %w", action, p.Package, err)
	}
	for _, i := range res.Infos {
		c.Events.said(i)
	}
	return &PlanRead{plan: p, in: in, target: target, res: res}, nil
}

// Check judges what Read read against the cluster, and returns the plan.
func (c *Change) Check(ctx context.Context, r *PlanRead) (*Plan, error) {
	p, in, target, res, action := r.plan, r.in, r.target, r.res, r.plan.Action
	pkg := in.Package
	// One read of both packages' CRDs serves every rule: the kinds the
	// target loses are among the old package's, the definitions it makes
	// among its own.
	names := append(res.Old.Names(), res.New.Names()...)
	slices.Sort(names)
	crds, err := c.Cluster.CRDs(ctx, slices.Compact(names))
	if err != nil {
		return nil, fmt.Errorf("plan the %s of %s: %w", action, p.Package, err)
	}
	p.add(diagnose.DeletingFindings(crds, res.New.Names(), target)...)
	stored := make(map[string][]string, len(crds))
	for name, crd := range crds {
		stored[name] = crd.Stored
	}
	p.add(diagnose.StoredVersionFindings(diff.Preflight(res.Old, res.New, stored), target)...)
	live, err := diagnose.LiveObjectFindings(ctx, c.Cluster, crds, diagnose.RemovedKinds(res.Old, res.New), target)
	if err != nil {
		return nil, fmt.Errorf("plan the %s of %s: %w", action, p.Package, err)
	}
	p.add(live...)
	if res.Meta != nil {
		for _, msg := range xpkg.MetadataProblems(res.Meta.Object) {
			p.add(findings.Finding{Rule: findings.RuleInvalidPackage, Severity: findings.Blocking, Object: res.Meta.Kind + " " + res.Meta.Name(),
				Message: fmt.Sprintf("%s is invalid: its %s %s", target, res.Meta.Kind, msg)})
		}
	}
	if err := planActivation(ctx, c.Cluster, p, res.Meta, res.New.NotIn(res.Old), target); err != nil {
		return nil, fmt.Errorf("plan the %s of %s: %w", action, p.Package, err)
	}
	if err := c.planLock(ctx, p, in, res.Meta, target); err != nil {
		return nil, fmt.Errorf("plan the %s of %s: %w", action, p.Package, err)
	}
	running, unread := c.Cluster.CrossplaneVersion(ctx, c.XPNamespace)
	if res.Meta != nil {
		if f := diagnose.CrossplaneVersionFinding(res.Meta.Crossplane, running, unread, c.XPNamespace, target); f != nil {
			p.add(*f)
		}
	}
	// Nothing to downgrade when nothing runs (no revision activated yet).
	if f := diagnose.DowngradeFinding(action == ActionRollback, refVersion(in.Image), refVersion(target)); f != nil && in.Running() != nil {
		p.add(*f)
	}
	manual := pkg.ActivationPolicy == "Manual" && !c.Activate
	if manual {
		p.add(diagnose.ManualActivationFinding(p.Package, in.Running(), running))
	}
	runtime := ""
	if c.cfg != nil {
		runtime = c.cfg.crossplane(ctx).PackageRuntime
	}
	if f := diagnose.RuntimeRestartFinding(pkg, in.Running(), manual, runtime); f != nil {
		p.add(*f)
	}
	p.add(diagnose.BreakingFindings(res.Report)...)
	return p, nil
}

// pullSecretFinding: a package read with the user's credentials because
// its ImageConfig's pull secret could not be: the plan may rest on what
// the package manager cannot pull.
func pullSecretFinding(fb *resolve.FellBack, ref string) findings.Finding {
	return findings.Finding{Rule: findings.RulePullSecret, Severity: findings.Warning, Object: "ImageConfig " + cmp.Or(fb.ImageConfig, "<unknown>"),
		Message: fmt.Sprintf("%s was read with your own registry credentials: the pull secret %s of ImageConfig %s could not be read (%s), and the package manager pulls with it, so it may fail to pull what this plan read; fix the secret, or check that Crossplane can read it",
			ref, fb.Secret, cmp.Or(fb.ImageConfig, "<unknown>"), exit.Message(fb.Err))}
}

// planLock checks the Lock: dependents' constraints on the target
// version, and what the package manager then does (the prediction).
func (c *Change) planLock(ctx context.Context, p *Plan, in *Installed, meta *xpkg.Meta, target string) error {
	lock, unresolved, err := c.Cluster.LockState(ctx)
	if err != nil {
		return err
	}
	p.add(diagnose.LockFindings(lock, unresolved)...)
	pkgs, err := c.Cluster.List(ctx, "", "")
	if err != nil {
		return err
	}
	if c.Overlay == nil && c.cfg != nil {
		before := diagnose.StateOf(lock, pkgs)
		pred, err := c.cfg.predict(ctx, pullSecrets(in.Package), before, before.With(lockEntry(in.Package, target, meta)))
		if err != nil {
			return err
		}
		p.Prediction = pred
		p.Findings = pred.Resolving(p.Findings)
		p.add(pred.Findings(target)...)
	}
	lock = overlaid(lock, c.Overlay)
	// The tag says the version, also when a digest pins it.
	repo := reference.Repository(target)
	version := refVersion(target)
	pinned := reference.Digest(target) != ""
	if _, err := semver.NewVersion(version); err == nil {
		p.add(diagnose.DependentFindings(lock, pkgs, repo, version)...)
	} else if deps := installed.Dependents(lock, repo); len(deps) > 0 && !pinned {
		p.add(findings.Finding{Rule: findings.RuleDependentConstraint, Severity: findings.Warning, Object: p.Package,
			Message: fmt.Sprintf("%s is no semantic version, so the constraints of the %d packages that depend on %s cannot be checked against it", version, len(deps), p.Package)})
	}
	if pinned {
		p.add(diagnose.PinnedFindings(Holds(lock, pkgs, repo), p.Package, target)...)
	}
	return nil
}

// refVersion is the version a reference names: its tag, also when a digest
// pins it, else its digest.
func refVersion(ref string) string { return cmp.Or(reference.Tag(ref), reference.Version(ref)) }
