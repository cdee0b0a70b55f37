package action

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/Masterminds/semver/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/releases"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
)

// CrossplaneMove is the upgrade of Crossplane itself that doctor
// --crossplane-version checks: the release that runs and the target.
type CrossplaneMove struct {
	// Running is the running release ("" when it could not be read:
	// the report's Unread says why).
	Running string `json:"running,omitempty"`
	Target  string `json:"target"`
	// Deployment is where Running was read, as namespace/name.
	Deployment string `json:"deployment"`
}

// ValidateCrossplaneVersion checks a --crossplane-version: MAJOR.MINOR.PATCH,
// with or without a leading v.
func ValidateCrossplaneVersion(s string) error {
	_, err := releases.Parse(s)
	return err
}

// move is an upgrade of Crossplane against the state doctor read.
type move struct {
	s *state
	// running is nil when it could not be read or is no version;
	// runningRaw is what was read.
	running, target *semver.Version
	runningRaw      string
	// from and to are the releases' lines, nil when the table does not
	// know them.
	from, to *releases.Line
	ns       string
}

func (m *move) targetName() string  { return releases.Name(m.target) }
func (m *move) runningName() string { return releases.Name(m.running) }

// renames tells whether the target names revisions otherwise than the
// running release: then every package gets a new revision.
func (m *move) renames() bool {
	return m.from != nil && m.to != nil && m.from.Naming != m.to.Naming
}

// checkRelease adds to rep what moving to d.CrossplaneVersion would do:
// one read of the Crossplane Deployment, one list of CRDs, one of
// DeploymentRuntimeConfigs when the target has a defect that needs them,
// a count of objects per kind the target removes, and, unless NoRegistry,
// each running package's meta object (one read per image).
func (d *Doctor) checkRelease(ctx context.Context, c *cluster.Cluster, s *state, rep *Report) error {
	target, err := releases.Parse(d.CrossplaneVersion)
	if err != nil {
		return err
	}
	m := &move{s: s, target: target, to: releases.Find(target), ns: d.cfg.XPNamespace}
	rep.Crossplane = &CrossplaneMove{Target: m.targetName(), Deployment: m.ns + "/crossplane"}
	add := func(fs ...Finding) { rep.Findings = append(rep.Findings, fs...) }
	unread := func(err error) { rep.Unread = append(rep.Unread, exit.Message(err)) }
	if raw, err := c.CrossplaneVersion(ctx, m.ns); err != nil {
		unread(runningUnread(err, m.ns))
	} else {
		m.runningRaw, rep.Crossplane.Running = raw, raw
		if v, err := releases.Parse(raw); err == nil {
			m.running, m.from = v, releases.Find(v)
			rep.Crossplane.Running = m.runningName()
		}
	}
	add(m.unknown()...)
	add(m.direction()...)
	add(m.renamed()...)
	if m.to != nil {
		// The CRDs doctor read already (a list that could not be read is
		// an Unread line already, and finds nothing).
		crds := s.coreCRDs(releases.CoreCRDs())
		add(m.storedVersions(crds)...)
		fs, err := m.removedKinds(ctx, c, crds)
		if err != nil {
			unread(err)
		}
		add(fs...)
		add(m.knownBad()...)
	}
	fs, err := d.constraints(ctx, m)
	if err != nil {
		unread(err)
	}
	add(fs...)
	return nil
}

// runningUnread says why the running release could not be read.
func runningUnread(err error, ns string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("no Deployment crossplane in %s, so the running Crossplane is not known (--crossplane-namespace names another namespace)", ns)
	}
	return fmt.Errorf("read the running Crossplane (deployment %s/crossplane): %w", ns, err)
}

// constraintRead is a package's constraint as its running image states it.
type constraintRead struct {
	p          *installed.Package
	image      string
	constraint string
	err        string
}

// constraints checks each package's Crossplane constraint against the
// target. The cluster records it nowhere (a revision copies its package's
// labels and annotations, not its spec: revision/reconciler.go), so it is
// read from the image each package runs, once per image.
func (d *Doctor) constraints(ctx context.Context, m *move) ([]Finding, error) {
	var pkgs []*installed.Package
	for _, p := range m.s.pkgs {
		if ignore, _, _ := unstructured.NestedBool(p.Object.Object, "spec", "ignoreCrossplaneConstraints"); !ignore {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		return nil, nil
	}
	if d.NoRegistry {
		return []Finding{{Rule: RuleCrossplaneConstraint, Severity: Warning, Count: count(int64(len(pkgs))),
			Message: fmt.Sprintf("--offline: the Crossplane constraints of %d packages (spec.crossplane.version of each package's meta object) were not read, and the cluster records them nowhere else (a revision copies its package's labels and annotations, not its spec): check them against %s without --offline",
				len(pkgs), m.targetName())}}, nil
	}
	reg, err := d.cfg.Registry(ctx)
	if err != nil {
		return nil, err
	}
	reads := d.readConstraints(ctx, reg, m.s, pkgs)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Finding
	for _, r := range reads {
		if f := m.constraintFinding(r); f != nil {
			out = append(out, *f)
		}
	}
	return out, nil
}

// readConstraints reads the meta object of the image each package runs
// (its active revision's, else its current revision's, else its own
// reference), eight at a time, each image once.
func (d *Doctor) readConstraints(ctx context.Context, reg *resolve.Registry, s *state, pkgs []*installed.Package) []constraintRead {
	out := make([]constraintRead, len(pkgs))
	var mu sync.Mutex
	seen := map[string]*sync.Once{}
	metas := map[string]resolve.MetaRead{}
	// As outdated reads registries: eight at a time.
	(&Outdated{}).bounded(len(pkgs), func(i int) {
		p := pkgs[i]
		image := runningImage(s, p)
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
		out[i] = constraintRead{p: p, image: image, err: r.Err}
		if r.Meta != nil {
			out[i].constraint = r.Meta.Crossplane
		}
	})
	return out
}

// runningImage is the image a package runs: its active revision's, else
// its current revision's, else its own reference.
func runningImage(s *state, p *installed.Package) string {
	var current string
	for _, r := range s.revisionsOf(p) {
		if r.DesiredState == "Active" && r.Image != "" {
			return r.Image
		}
		if r.Name == p.CurrentRevision {
			current = r.Image
		}
	}
	return cmp.Or(current, p.Source)
}

// coreCRDs are the CRDs of names among those doctor read.
func (s *state) coreCRDs(names []string) map[string]*cluster.CRD {
	out := map[string]*cluster.CRD{}
	for _, d := range s.defs {
		if d.CRD != nil && slices.Contains(names, d.Name) {
			out[d.Name] = d.CRD
		}
	}
	return out
}
