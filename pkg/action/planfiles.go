package action

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// What a manifest does to its package, beyond upgrade, rollback, install
// and uninstall.
const (
	// ActionUpdate edits a package's spec and leaves its package.
	ActionUpdate = "update"
	// ActionPlanFiles names plan -f among the verbs of findings.Rules.
	ActionPlanFiles = "plan"
)

// Manifest is a package object as a manifest gives it, and where.
type Manifest struct {
	// Where is the file and line it was read at.
	Where  string
	Object *unstructured.Unstructured
}

// PlanFiles plans what applying package manifests would do to the
// cluster, each package with the rules its change has (kubectl xpkg plan
// -f): a new package reference is an upgrade (or a rollback, when older),
// a new package an install, another spec edit an update, and a package
// the manifests leave out is said (and, with Prune, uninstalled). The
// manifests are planned as one set: each change is checked against the
// Lock as the whole set leaves it.
type PlanFiles struct {
	cfg   *Config
	Prune bool
	// Base are the previous manifests an offline plan (cfg.Offline)
	// plans against, in place of a cluster.
	Base []Manifest
	// Compositions and Policies are those the manifests hold besides:
	// each composed kind is checked against the cluster's activation.
	Compositions []composition.Composition
	Policies     []installed.MRAP
}

// NewPlanFiles plans manifests against cfg's cluster.
func NewPlanFiles(cfg *Config, prune bool) *PlanFiles { return &PlanFiles{cfg: cfg, Prune: prune} }

// FilesPlan is the plan of a set of manifests.
type FilesPlan struct {
	// Manifests counts the package manifests; Ignored the other objects.
	Manifests int     `json:"manifests"`
	Ignored   int     `json:"ignored"`
	Plans     []*Plan `json:"plans"`
	// Unchanged are the packages the manifests leave as they are.
	Unchanged []string `json:"unchanged,omitempty"`
	// Absent are the packages installed explicitly that no manifest
	// names (those the package manager installed as dependencies are
	// expected in none).
	Absent []string `json:"absent,omitempty"`
	// Offline: planned against Base package manifests and the
	// registries, with no cluster; Removed are the packages of Base
	// that no manifest names (a GitOps prune would uninstall them).
	Offline bool     `json:"offline,omitempty"`
	Base    int      `json:"base,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Prediction is what the package manager does after the whole set is
	// applied, and Findings what it finds there (a Lock that stalls, a
	// package left unhealthy).
	*diagnose.Prediction
	Findings []findings.Finding `json:"findings"`
}

// Blocking reports whether any plan, or the set's prediction, has a
// blocking finding.
func (fp *FilesPlan) Blocking() bool {
	return slices.ContainsFunc(fp.Plans, (*Plan).Blocking) || findings.HasBlocking(fp.Findings)
}

// wanted is one manifest's package against the cluster's.
type wanted struct {
	m    Manifest
	want *installed.Package
	have *installed.Package // nil: a new package
	// target is the reference the manifest names, as the package manager
	// reads it; meta its meta object, when the reference changes.
	target string
	meta   *xpkg.Meta
	// read is an upgrade's (or rollback's) two packages, read; checked
	// a new package's target, read: what validate's rules find in it, and
	// its definitions.
	read    *PlanRead
	checked *xpkg.Checked
}

// Plan plans the manifests; ignored counts the objects that are no
// package.
func (pf *PlanFiles) Plan(ctx context.Context, ms []Manifest, ignored int) (*FilesPlan, error) {
	if pf.cfg.Offline {
		return pf.planOffline(ctx, ms, ignored)
	}
	c, err := pf.cfg.connect()
	if err != nil {
		return nil, err
	}
	// The packages, their revisions and the Lock from one watch, however
	// many manifests there are (an identity that may not watch reads
	// directly).
	stop, err := c.Share(ctx)
	switch {
	case apierrors.IsForbidden(err):
		stop = func() {}
	case err != nil:
		return nil, err
	}
	defer stop()
	pkgs, err := c.List(ctx, "", "")
	if err != nil {
		return nil, err
	}
	ws, err := matchManifests(c, pkgs, ms)
	if err != nil {
		return nil, err
	}
	fp := &FilesPlan{Manifests: len(ms), Ignored: ignored, Plans: []*Plan{}, Findings: []findings.Finding{}}
	overlay, err := pf.readTargets(ctx, ws)
	if err != nil {
		return nil, err
	}
	if err := pf.predict(ctx, fp, pkgs, ws, overlay); err != nil {
		return nil, err
	}
	for _, w := range ws {
		p, err := pf.planOne(ctx, w, overlay)
		if err != nil {
			return nil, err
		}
		if p == nil {
			fp.Unchanged = append(fp.Unchanged, w.want.KindName())
			continue
		}
		p.Findings = fp.Prediction.Resolving(p.Findings)
		fp.Plans = append(fp.Plans, p)
	}
	if err := pf.checkCompositions(ctx, c, fp, ws); err != nil {
		return nil, err
	}
	return fp, pf.absent(ctx, fp, pkgs, ws)
}

// predict is what the package manager does after the set is applied:
// its packages at their targets, in the Lock as the set leaves it.
func (pf *PlanFiles) predict(ctx context.Context, fp *FilesPlan, pkgs []*installed.Package, ws []*wanted, overlay []installed.LockPackage) error {
	if len(overlay) == 0 {
		return nil
	}
	lock, _, err := pf.cfg.cluster.LockState(ctx)
	if err != nil {
		return err
	}
	var secrets []string
	for _, w := range ws {
		secrets = append(secrets, pullSecrets(w.want)...)
	}
	before := diagnose.StateOf(lock, pkgs)
	pred, err := pf.cfg.predict(ctx, slices.Compact(slices.Sorted(slices.Values(secrets))), before, before.With(overlay...))
	if err != nil {
		return err
	}
	fp.Prediction = pred
	fp.Findings = append(fp.Findings, pred.Findings("the change")...)
	return nil
}

// matchManifests pairs each manifest with the cluster's package of its
// kind and name; a manifest of a package API the cluster does not serve
// is an error naming it.
func matchManifests(c *cluster.Cluster, pkgs []*installed.Package, ms []Manifest) ([]*wanted, error) {
	d := c.Dialect()
	var out []*wanted
	for _, m := range ms {
		gvk := m.Object.GroupVersionKind()
		kind, err := cluster.ResolveKind(d, gvk.Kind)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", m.Where, gvk.GroupVersion(), gvk.Kind, err)
		}
		gvr, err := d.Resource(kind)
		if err != nil || gvr.Group != gvk.Group {
			return nil, fmt.Errorf("%s: %s is a %s package, but this cluster serves its packages in %s: the manifest is for another Crossplane", m.Where, strings.ToLower(gvk.Kind)+"/"+m.Object.GetName(), gvk.Group, gvr.Group)
		}
		w := &wanted{m: m, want: d.Decode(m.Object)}
		w.want.Kind, w.want.Name = kind, m.Object.GetName()
		if i := slices.IndexFunc(pkgs, func(p *installed.Package) bool { return p.Kind == kind && p.Name == w.want.Name }); i >= 0 {
			w.have = pkgs[i]
		}
		out = append(out, w)
	}
	return out, nil
}

// readTargets reads every package reference the manifests change or
// add, once each: an upgrade's two packages compared (Change.Read), a new
// package's meta object. It returns the Lock entries the set makes of
// them: their new versions and their new dependencies, which the plans
// are checked against instead of what runs.
func (pf *PlanFiles) readTargets(ctx context.Context, ws []*wanted) ([]installed.LockPackage, error) {
	reg, err := pf.cfg.Registry(ctx)
	if err != nil {
		return nil, err
	}
	var overlay []installed.LockPackage
	for _, w := range ws {
		if w.have != nil && sameReference(w.have.Source, w.want.Source) {
			continue
		}
		w.target = w.want.Source
		if w.have != nil {
			if err := pf.readChange(ctx, w); err != nil {
				return nil, err
			}
		} else {
			c, err := readValidated(ctx, reg, w.target, pullSecrets(w.want), pf.cfg.Limits)
			if err != nil {
				return nil, fmt.Errorf("%s: %s cannot be read: %w", w.m.Where, w.target, err)
			}
			w.meta, w.checked = c.Meta, c
		}
		overlay = append(overlay, lockEntryOf(w))
	}
	return overlay, nil
}

// readChange reads the installed package's move to w's target: an
// upgrade, or a rollback when the target is older (as a revert names it).
func (pf *PlanFiles) readChange(ctx context.Context, w *wanted) error {
	in, err := pf.cfg.installed(ctx, w.have)
	if err != nil {
		return err
	}
	action := ActionUpgrade
	if f := diagnose.DowngradeFinding(false, refVersion(in.Image), refVersion(w.target)); f != nil {
		action = ActionRollback
	}
	if w.read, err = pf.cfg.change(false).Read(ctx, action, in, w.target); err != nil {
		return fmt.Errorf("%s: %w", w.m.Where, err)
	}
	w.meta = w.read.Meta()
	return nil
}

// lockEntryOf is the Lock entry the package manager would make of w's
// target.
func lockEntryOf(w *wanted) installed.LockPackage { return lockEntry(w.want, w.target, w.meta) }

// lockEntry is the Lock entry the package manager would make of want at
// ref, whose meta object is meta (nil: none, a legacy package).
func lockEntry(want *installed.Package, ref string, meta *xpkg.Meta) installed.LockPackage {
	lp := installed.LockPackage{Name: want.Name, Type: want.Kind, Source: reference.Repository(ref), Version: refVersion(ref)}
	if meta == nil {
		return lp
	}
	for _, d := range meta.DependsOn {
		kind := d.Kind
		if kind != "" {
			kind = strings.ToUpper(kind[:1]) + kind[1:]
		}
		lp.Dependencies = append(lp.Dependencies, installed.LockDependency{Package: d.Package, Constraints: d.Version, Type: kind})
	}
	return lp
}

// sameReference tells whether two package references name the same
// package: the same repository and the same tag or digest.
func sameReference(a, b string) bool {
	return a == b || installed.SameRepo(reference.Repository(a), reference.Repository(b)) &&
		reference.Tag(a) == reference.Tag(b) && reference.Digest(a) == reference.Digest(b)
}

// overlaid is lock with the set's entries in place of those of the same
// source, and the new ones added.
func overlaid(lock, set []installed.LockPackage) []installed.LockPackage {
	out := slices.Clone(lock)
	for _, e := range set {
		i := slices.IndexFunc(out, func(lp installed.LockPackage) bool { return installed.SameRepo(lp.Source, e.Source) })
		if i < 0 {
			out = append(out, e)
			continue
		}
		e.Name = out[i].Name
		out[i] = e
	}
	return out
}
