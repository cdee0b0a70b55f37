package action

import (
	"context"
	"sync"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/releases"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
)

// ActionDoctor names doctor among the verbs of findings.Rules.
const ActionDoctor = "doctor"

// Doctor reads the package manager's state once (packages, revisions, the
// Lock, the CRDs and MRDs they install, the DeploymentRuntimeConfigs) and
// finds what keeps packages from installing, under the rules of
// findings.Rules whose verbs name doctor (pkg/diagnose). It changes
// nothing; Repair (--fix) changes what it can prove.
type Doctor struct {
	cfg *Config
	// CrossplaneVersion, when set, also checks the cluster as that
	// release of Crossplane would find it (--crossplane-version).
	CrossplaneVersion string
	// NoRegistry reads no package from a registry (--offline): the
	// packages' Crossplane constraints go unchecked.
	NoRegistry bool
	// OrphanExternal lets --fix end a definition's deletion, whose kind's
	// package is not installed, by removing its objects' finalizers and
	// leaving what they manage unmanaged (--orphan-external-resources).
	OrphanExternal bool
}

// NewDoctor examines cfg's cluster.
func NewDoctor(cfg *Config) *Doctor { return &Doctor{cfg: cfg} }

// Report is what doctor found, in the plan's format, and what --fix
// planned and did.
type Report struct {
	diagnose.Report
	// Repair is what --fix plans and did.
	Repair *Repair `json:"repair,omitempty"`
}

// ValidateCrossplaneVersion checks a --crossplane-version: MAJOR.MINOR.PATCH,
// with or without a leading v.
func ValidateCrossplaneVersion(s string) error {
	_, err := releases.Parse(s)
	return err
}

// Run reads the state and applies every rule to it. Only a cluster that
// cannot be reached at all is an error; what cannot be read is in
// Report.Unread.
func (d *Doctor) Run(ctx context.Context) (*Report, error) {
	rep, _, err := d.examine(ctx)
	return rep, err
}

// examine reads the state and applies the rules: the report, and the
// state it was made from.
func (d *Doctor) examine(ctx context.Context) (*Report, *diagnose.State, error) {
	c, err := d.cfg.connect()
	if err != nil {
		return nil, nil, err
	}
	found, s := diagnose.Examine(ctx, c, d.cfg.XPNamespace)
	rep := &Report{Report: *found}
	if d.CrossplaneVersion != "" {
		rel := diagnose.Release{Target: d.CrossplaneVersion, Namespace: d.cfg.XPNamespace}
		if !d.NoRegistry {
			rel.Constraints = d.constraints(s)
		}
		if err := s.CheckRelease(ctx, c, rel, &rep.Report); err != nil {
			return nil, nil, err
		}
	}
	return rep, s, nil
}

// constraints reads the meta object of the image each package runs (its
// active revision's, else its current revision's, else its own
// reference), eight at a time, each image once.
func (d *Doctor) constraints(s *diagnose.State) func(context.Context, []*installed.Package) ([]diagnose.ConstraintRead, error) {
	return func(ctx context.Context, pkgs []*installed.Package) ([]diagnose.ConstraintRead, error) {
		reg, err := d.cfg.Registry(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]diagnose.ConstraintRead, len(pkgs))
		var mu sync.Mutex
		seen := map[string]*sync.Once{}
		metas := map[string]resolve.MetaRead{}
		// As outdated reads registries: eight at a time.
		(&Outdated{}).bounded(len(pkgs), func(i int) {
			p := pkgs[i]
			image := s.RunningImage(p)
			mu.Lock()
			once := seen[image]
			if once == nil {
				once = &sync.Once{}
				seen[image] = once
			}
			mu.Unlock()
			once.Do(func() {
				r := reg.ReadMeta(ctx, image, pullSecrets(p), resolve.MetaOptions{Limits: d.cfg.Limits})
				mu.Lock()
				metas[image] = r
				mu.Unlock()
			})
			mu.Lock()
			r := metas[image]
			mu.Unlock()
			out[i] = diagnose.ConstraintRead{Package: p, Image: image, Err: r.Err}
			if r.Meta != nil {
				out[i].Constraint = r.Meta.Crossplane
			}
		})
		return out, ctx.Err()
	}
}
