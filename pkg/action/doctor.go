package action

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// ActionDoctor names doctor among the verbs of Rules.
const ActionDoctor = "doctor"

// Doctor reads the package manager's state once (packages, revisions, the
// Lock, the CRDs and MRDs they install, the DeploymentRuntimeConfigs) and
// finds what keeps packages from installing, under the rules of Rules
// whose verbs name doctor. It changes nothing.
type Doctor struct {
	cfg *Config
	// CrossplaneVersion, when set, also checks the cluster as that
	// release of Crossplane would find it (--crossplane-version).
	CrossplaneVersion string
	// NoRegistry reads no package from a registry (--offline): the
	// packages' Crossplane constraints go unchecked.
	NoRegistry bool
}

// NewDoctor examines cfg's cluster.
func NewDoctor(cfg *Config) *Doctor { return &Doctor{cfg: cfg} }

// Report is what doctor found, in the plan's format.
type Report struct {
	Findings []Finding `json:"findings"`
	// Unread says, one line each, what could not be read (RBAC, say): the
	// findings that needed it could not be made, so a report with Unread
	// is never a clean bill of health.
	Unread []string `json:"unread,omitempty"`
	// Crossplane is the upgrade of Crossplane checked (--crossplane-version).
	Crossplane *CrossplaneMove `json:"crossplane,omitempty"`
	// Packages, Revisions and LockEntries count what was read.
	Packages    int `json:"-"`
	Revisions   int `json:"-"`
	LockEntries int `json:"-"`
	// Repair is what --fix plans and did.
	Repair *Repair `json:"repair,omitempty"`
}

// Blocking reports whether a finding is blocking.
func (r *Report) Blocking() bool {
	return (&Plan{Findings: r.Findings}).Blocking()
}

// Healthy reports a complete read with no finding.
func (r *Report) Healthy() bool { return len(r.Findings) == 0 && len(r.Unread) == 0 }

// Run reads the state and applies every rule to it. Only a cluster that
// cannot be reached at all is an error; what cannot be read is in
// Report.Unread.
func (d *Doctor) Run(ctx context.Context) (*Report, error) {
	rep, _, err := d.examine(ctx)
	return rep, err
}

// examine reads the state and applies the rules: the report, and the
// state it was made from.
func (d *Doctor) examine(ctx context.Context) (*Report, *state, error) {
	c, err := d.cfg.connect()
	if err != nil {
		return nil, nil, err
	}
	s := readState(ctx, c)
	s.readObjects(ctx, c, d.cfg.XPNamespace)
	rep := &Report{Findings: []Finding{}, Unread: s.unread,
		Packages: len(s.pkgs), Revisions: len(s.revs), LockEntries: len(s.lock)}
	for _, rule := range []func() []Finding{s.duplicateNodes, s.unresolved, s.twinNames, s.staleEntries, s.manualInactive, s.historyPiled,
		s.controlConflicts, s.storedUndefined, s.objectsMissing, s.pinnedServiceAccounts, s.familySkew,
		s.unfinishedOperations, s.pausedPackages, s.noRevisions, s.duplicatePackages, s.inactiveRevisions} {
		rep.Findings = append(rep.Findings, rule()...)
	}
	if d.CrossplaneVersion != "" {
		if err := d.checkRelease(ctx, c, s, rep); err != nil {
			return nil, nil, err
		}
	}
	return rep, s, nil
}

// state is the package manager's state as doctor read it: one list of each
// package kind and of each revision kind, and the Lock.
type state struct {
	pkgs []*installed.Package
	revs []*installed.Revision
	lock []installed.LockPackage
	// lockObj is the Lock as read.
	lockObj *unstructured.Unstructured
	// lockCond is the Lock's Resolved condition when not True.
	lockCond *installed.Condition
	// revsRead holds the package kinds whose revisions were read; lockRead
	// whether the Lock was.
	revsRead map[string]bool
	revsAll  bool
	lockRead bool
	unread   []string

	revByName map[string]*installed.Revision
	pkgByKey  map[string]*installed.Package // kind/name

	objectState
}

// readState makes one request per package kind, one per revision kind and
// one for the Lock, whatever the number of packages and revisions; what
// cannot be read is noted and the rest read on.
func readState(ctx context.Context, c *cluster.Cluster) *state {
	s := &state{revsRead: map[string]bool{}, revByName: map[string]*installed.Revision{}, pkgByKey: map[string]*installed.Package{}}
	for _, k := range c.Dialect().Kinds() {
		pkgs, err := c.List(ctx, k, "")
		if err != nil {
			s.unread = append(s.unread, exit.Message(err))
			continue
		}
		for _, p := range pkgs {
			s.pkgs = append(s.pkgs, p)
			s.pkgByKey[p.KindName()] = p
		}
	}
	s.revsAll = true
	for _, k := range c.Dialect().Kinds() {
		revs, err := c.AllRevisions(ctx, k)
		if err != nil {
			s.revsAll = false
			s.unread = append(s.unread, exit.Message(err))
			continue
		}
		s.revsRead[k] = true
		for _, r := range revs {
			s.revs = append(s.revs, r)
			s.revByName[r.Name] = r
		}
	}
	u, err := c.LockObject(ctx)
	switch {
	case err != nil:
		s.unread = append(s.unread, exit.Message(err))
	case u != nil:
		s.lock, s.lockCond, s.lockObj = c.Dialect().ReadLock(u), installed.LockUnresolved(u), u
		s.lockRead = true
	default:
		s.lockRead = true
	}
	return s
}

// packageKind is the package kind of a revision kind (ProviderRevision:
// Provider).
func packageKind(revisionKind string) string { return strings.TrimSuffix(revisionKind, "Revision") }

// owner is the package the revision called name belongs to, and the
// revision (nil, nil when the revision was not found).
func (s *state) owner(name string) (*installed.Package, *installed.Revision) {
	r := s.revByName[name]
	if r == nil {
		return nil, nil
	}
	return s.pkgByKey[installed.KindName(packageKind(r.Kind), r.Package)], r
}

// revisionsOf are p's revisions, newest first.
func (s *state) revisionsOf(p *installed.Package) []*installed.Revision {
	var out []*installed.Revision
	for _, r := range s.revs {
		if r.Package == p.Name && packageKind(r.Kind) == p.Kind {
			out = append(out, r)
		}
	}
	return out
}

// entryOwner names a Lock entry's package as KIND/NAME, or its revision
// when the package is not known.
func (s *state) entryOwner(lp installed.LockPackage) string {
	if p, _ := s.owner(lp.Name); p != nil {
		return p.KindName()
	}
	return "revision " + lp.Name
}

// WriteReport prints the report for people as a plan is printed: what was
// read, the counts by severity, one line per finding, blocking first.
// What could not be read is counted in the heading, not named (the
// command makes each its error line).
func WriteReport(w io.Writer, r *Report) error {
	head := fmt.Sprintf("Doctor: %d packages, %d revisions, %d Lock entries read", r.Packages, r.Revisions, r.LockEntries)
	if x := r.Crossplane; x != nil {
		head = fmt.Sprintf("Crossplane %s (deployment %s) → %s\n%s", cmp.Or(x.Running, "version unknown"), x.Deployment, x.Target, head)
	}
	if len(r.Unread) > 0 {
		head += fmt.Sprintf("; %d reads failed, so the findings are not complete", len(r.Unread))
	}
	if r.Healthy() {
		_, err := fmt.Fprintf(w, "%s\n  no problems found\n", head)
		return err
	}
	return writeFindings(w, head, &Plan{Findings: r.Findings})
}
