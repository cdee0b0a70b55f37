package diagnose

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/Masterminds/semver/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/releases"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
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

// move is an upgrade of Crossplane against the state doctor read.
type move struct {
	s *State
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

// Release is an upgrade of Crossplane to check against the state
// (doctor --crossplane-version).
type Release struct {
	// Target is the release to check.
	Target string
	// Namespace is Crossplane's.
	Namespace string
	// Constraints reads the Crossplane constraint of the image each
	// package runs (RunningImage); nil reads none (--offline). Its error
	// is what stopped every read.
	Constraints func(context.Context, []*installed.Package) ([]ConstraintRead, error)
}

// CheckRelease adds to rep what moving to rel.Target would do: one read of
// the Crossplane Deployment, a count of objects per kind the target
// removes, and what rel.Constraints reads; the CRDs and
// DeploymentRuntimeConfigs are those ReadObjects read.
func (s *State) CheckRelease(ctx context.Context, c *cluster.Cluster, rel Release, rep *Report) error {
	target, err := releases.Parse(rel.Target)
	if err != nil {
		return err
	}
	m := &move{s: s, target: target, to: releases.Find(target), ns: rel.Namespace}
	rep.Crossplane = &CrossplaneMove{Target: m.targetName(), Deployment: m.ns + "/crossplane"}
	add := func(fs ...findings.Finding) { rep.Findings = append(rep.Findings, fs...) }
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
	fs, err := m.constraints(ctx, rel.Constraints)
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

// ConstraintRead is a package's Crossplane constraint as its running
// image states it, or why it could not be read.
type ConstraintRead struct {
	Package    *installed.Package
	Image      string
	Constraint string
	Err        string
}

// constraints checks each package's Crossplane constraint against the
// target. The cluster records it nowhere (a revision copies its package's
// labels and annotations, not its spec: revision/reconciler.go), so it is
// read from the image each package runs.
func (m *move) constraints(ctx context.Context, read func(context.Context, []*installed.Package) ([]ConstraintRead, error)) ([]findings.Finding, error) {
	var pkgs []*installed.Package
	for _, p := range m.s.pkgs {
		if ignore, _, _ := unstructured.NestedBool(p.Object.Object, "spec", "ignoreCrossplaneConstraints"); !ignore {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		return nil, nil
	}
	if read == nil {
		return []findings.Finding{{Rule: findings.RuleCrossplaneConstraint, Severity: findings.Warning, Count: findings.Count(int64(len(pkgs))),
			Message: fmt.Sprintf("--offline: the Crossplane constraints of %d packages (spec.crossplane.version of each package's meta object) were not read, and the cluster records them nowhere else (a revision copies its package's labels and annotations, not its spec): check them against %s without --offline",
				len(pkgs), m.targetName())}}, nil
	}
	reads, err := read(ctx, pkgs)
	if err != nil {
		return nil, err
	}
	var out []findings.Finding
	for _, r := range reads {
		if f := m.constraintFinding(r); f != nil {
			out = append(out, *f)
		}
	}
	return out, nil
}

// RunningImage is the image a package runs: its active revision's, else
// its current revision's, else its own reference.
func (s *State) RunningImage(p *installed.Package) string {
	var current string
	for _, r := range s.RevisionsOf(p) {
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
func (s *State) coreCRDs(names []string) map[string]*cluster.CRD {
	out := map[string]*cluster.CRD{}
	for _, d := range s.defs {
		if d.CRD != nil && slices.Contains(names, d.Name) {
			out[d.Name] = d.CRD
		}
	}
	return out
}
