// Package diagnose reads the package manager's state once (packages,
// revisions, the Lock, the CRDs and MRDs they install, the
// DeploymentRuntimeConfigs, where there are MRDs the Compositions and the
// activation policies, and, once a rule needs it, the running
// Crossplane's version) and applies doctor's rules to it, returning
// findings. It also holds the rules a change of one package is judged by
// against that state: the stored versions and live objects it would
// strand, the Lock's constraints, the running Crossplane. pkg/action's
// doctor, rename, install, outdated and change verbs call it; it reads the
// cluster through pkg/cluster and changes nothing.
package diagnose

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// State is the package manager's state as read once: one list of each
// package kind and of each revision kind, and the Lock (and, after
// ReadObjects, what the packages installed).
type State struct {
	pkgs  []*installed.Package
	revs  []*installed.Revision
	lock  []installed.LockPackage
	nodes installed.LockNodes
	// lockObj is the Lock as read.
	lockObj *unstructured.Unstructured
	// lockCond is the Lock's Resolved condition when not True.
	lockCond *installed.Condition
	// revsRead holds the package kinds whose revisions were read; lockRead
	// whether the Lock was.
	revsRead map[string]bool
	pkgsRead map[string]bool
	revsAll  bool
	lockRead bool
	unread   []string

	revByName map[string]*installed.Revision
	pkgByKey  map[string]*installed.Package // kind/name

	objectState
	deletionState
	activationState
}

// Read makes one request per package kind, one per revision kind and one
// for the Lock, whatever the number of packages and revisions; what
// cannot be read is noted (Unread) and the rest read on.
func Read(ctx context.Context, c *cluster.Cluster) *State {
	s := &State{revsRead: map[string]bool{}, pkgsRead: map[string]bool{}, revByName: map[string]*installed.Revision{}, pkgByKey: map[string]*installed.Package{}}
	for _, k := range c.Dialect().Kinds() {
		pkgs, err := c.List(ctx, k, "")
		if err != nil {
			s.unread = append(s.unread, exit.Message(err))
			continue
		}
		s.pkgsRead[k] = true
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
		s.lock, s.lockCond, s.lockObj = c.Dialect().DecodeLock(u), installed.LockUnresolved(u), u
		s.lockRead = true
	default:
		s.lockRead = true
	}
	s.nodes = installed.NodesBySource(s.lock)
	return s
}

// Report is what doctor found, in the plan's format.
type Report struct {
	Findings []findings.Finding `json:"findings"`
	// Unread says, one line each, what could not be read (RBAC, say): the
	// findings that needed it could not be made, so a report with Unread
	// is never a clean bill of health.
	Unread []string `json:"unread,omitempty"`
	// Crossplane is the upgrade of Crossplane checked (CheckRelease).
	Crossplane *CrossplaneMove `json:"crossplane,omitempty"`
	// Packages, Revisions and LockEntries count what was read.
	Packages    int `json:"-"`
	Revisions   int `json:"-"`
	LockEntries int `json:"-"`
}

// Blocking reports whether a finding is blocking.
func (r *Report) Blocking() bool { return findings.HasBlocking(r.Findings) }

// Healthy reports a complete read with no finding.
func (r *Report) Healthy() bool { return len(r.Findings) == 0 && len(r.Unread) == 0 }

// Rule is one of doctor's rules: what it finds in the state.
type Rule func(*State) []findings.Finding

// Examine reads c's state once (Read, then ReadObjects with Crossplane's
// namespace) and applies every doctor rule to it, in the order the report
// lists what they find. Only what could be read is judged: the rest is
// the report's Unread.
func Examine(ctx context.Context, c *cluster.Cluster, namespace string) (*Report, *State) {
	s := Read(ctx, c)
	s.ReadObjects(ctx, c, namespace)
	rep := &Report{Findings: []findings.Finding{}, Unread: s.unread,
		Packages: len(s.pkgs), Revisions: len(s.revs), LockEntries: len(s.lock)}
	for _, rule := range []Rule{(*State).duplicateNodes, (*State).unresolved, (*State).twinNames, (*State).staleEntries, (*State).manualInactive, (*State).historyPiled,
		(*State).controlConflicts, (*State).storedUndefined, (*State).objectsMissing, (*State).pinnedServiceAccounts, (*State).familySkew,
		(*State).unfinishedOperations, (*State).pausedPackages, (*State).noRevisions, (*State).duplicatePackages, (*State).inactiveRevisions,
		(*State).definitionsTerminating, (*State).managedDeleting, (*State).deletionsStuck, (*State).providerConfigsStuck,
		(*State).inactiveComposed, (*State).activationUnused, (*State).activationUnmatched} {
		rep.Findings = append(rep.Findings, rule(s)...)
	}
	return rep, s
}

// HandOver are the blocking findings of doctor's rules about the Lock as
// a whole (no package resolves while they stand) and about who controls,
// stores and records the objects packages install: what stops objects
// changing hands between packages.
func (s *State) HandOver() []findings.Finding {
	var out []findings.Finding
	for _, rule := range []Rule{(*State).duplicateNodes, (*State).unresolved, (*State).controlConflicts, (*State).storedUndefined, (*State).objectsMissing} {
		for _, f := range rule(s) {
			if f.Severity == findings.Blocking {
				out = append(out, f)
			}
		}
	}
	return out
}

// Unread says, one line each, what could not be read.
func (s *State) Unread() []string { return s.unread }

// Packages are the packages read, of every kind.
func (s *State) Packages() []*installed.Package { return s.pkgs }

// Package is the package KIND/NAME, or nil.
func (s *State) Package(kindName string) *installed.Package { return s.pkgByKey[kindName] }

// Revision is the revision called name, or nil.
func (s *State) Revision(name string) *installed.Revision { return s.revByName[name] }

// Lock is the Lock's entries.
func (s *State) Lock() []installed.LockPackage { return s.lock }

// LockResolved reports whether the Lock says it is resolved (or was not
// read).
func (s *State) LockResolved() bool { return s.lockCond == nil }

// packageKind is the package kind of a revision kind (ProviderRevision:
// Provider).
func packageKind(revisionKind string) string { return strings.TrimSuffix(revisionKind, "Revision") }

// Owner is the package the revision called name belongs to, and the
// revision (nil, nil when the revision was not found).
func (s *State) Owner(name string) (*installed.Package, *installed.Revision) {
	r := s.revByName[name]
	if r == nil {
		return nil, nil
	}
	return s.pkgByKey[installed.KindName(packageKind(r.Kind), r.Package)], r
}

// RevisionsOf are p's revisions, newest first.
func (s *State) RevisionsOf(p *installed.Package) []*installed.Revision {
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
func (s *State) entryOwner(lp installed.LockPackage) string {
	if p, _ := s.Owner(lp.Name); p != nil {
		return p.KindName()
	}
	return "revision " + lp.Name
}
