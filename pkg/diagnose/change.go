package diagnose

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/releases"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// StoredVersionFindings: each stored version the target would strand
// stops the change.
func StoredVersionFindings(blockers []diff.Blocker, target string) []findings.Finding {
	var out []findings.Finding
	for _, b := range blockers {
		way := fmt.Sprintf("migrate them to a version both serve and remove %s from the CRD's status.storedVersions (docs/diff-rules.md)", b.Version)
		if b.Target != "" {
			way = fmt.Sprintf("migrate them to %s and remove %s from the CRD's status.storedVersions (docs/diff-rules.md)", b.Target, b.Version)
		}
		out = append(out, findings.Finding{
			Rule: findings.RuleStoredVersionDropped, Severity: findings.Blocking, Object: b.CRD,
			Message: fmt.Sprintf("CRD %s stores objects at %s, which %s %s: %s", b.CRD, b.Version, target, b.Problem, way),
		})
	}
	return out
}

// RemovedKinds are the CRDs whose kind (gone) or some served version
// (dropped) the new package no longer offers: CRD name → what it loses.
func RemovedKinds(old, new diff.Definitions) map[string][]string {
	olds, news := old.Served(), new.Served()
	out := map[string][]string{}
	for crd, ovs := range olds {
		nvs, ok := news[crd]
		if !ok {
			out[crd] = nil // the whole kind
			continue
		}
		for _, v := range ovs {
			if !slices.Contains(nvs, v) {
				out[crd] = append(out[crd], v)
			}
		}
	}
	return out
}

// LiveObjectFindings counts the objects of each CRD that loses its kind
// or a version: with objects, a kind that goes stops the change (they
// would be deleted with it), a version that goes is a warning (clients
// that use it break), unless the version is stored, which
// stored-version-dropped already stops.
// crds holds (at least) the CRDs of losses that exist.
func LiveObjectFindings(ctx context.Context, c *cluster.Cluster, crds map[string]*cluster.CRD, losses map[string][]string, target string) ([]findings.Finding, error) {
	live, err := CountLive(ctx, c, crds, slices.Sorted(maps.Keys(losses)))
	if err != nil {
		return nil, err
	}
	var out []findings.Finding
	for _, l := range live {
		f := findings.Finding{Rule: findings.RuleLiveObjects, Object: l.CRD.Name, Count: findings.Count(l.N.N)}
		if vs := losses[l.CRD.Name]; vs == nil {
			f.Severity = findings.Blocking
			f.Message = fmt.Sprintf("%s and %s no longer defines CRD %s: they would be deleted with it; delete or move them first", ObjectsExist(l.N, l.CRD.Kind), target, l.CRD.Name)
		} else {
			f.Severity = findings.Warning
			f.Message = fmt.Sprintf("%s and %s drops version %s of CRD %s: clients and manifests that use it must move to %s", ObjectsExist(l.N, l.CRD.Kind), target, strings.Join(vs, ", "), l.CRD.Name, l.CRD.Storage)
		}
		out = append(out, f)
	}
	return out, nil
}

// DeletingFindings: each definition the target defines (defs: its CRDs,
// MRDs and XRDs, by the name of the CRD each makes) whose CRD in the
// cluster (crds) is being deleted stops the change. The CRD stays
// Established while Terminating and the package manager applies it
// without error, so the package turns Healthy, but the API server refuses
// every object of the kind until the objects that hold the deletion
// (whose finalizers a gone provider no longer removes) are gone.
func DeletingFindings(crds map[string]*cluster.CRD, defs []string, target string) []findings.Finding {
	var out []findings.Finding
	for _, name := range slices.Sorted(slices.Values(defs)) {
		crd := crds[name]
		if crd == nil || crd.Deleting.IsZero() {
			continue
		}
		out = append(out, findings.Finding{Rule: findings.RuleDefinitionDeleting, Severity: findings.Blocking, Object: name,
			Message: fmt.Sprintf("CRD %s, which %s defines, is being deleted (since %s): the package manager cannot make it again until the deletion finishes, and the API server refuses every object of kind %s meanwhile; let the deletion finish first: objects of the kind hold it (kubectl xpkg doctor names what holds it); or, to keep them, install with --force and run kubectl xpkg doctor --fix, which makes each of them again once the package manager has made the CRD again",
				name, target, crd.Deleting.UTC().Format(time.RFC3339), crd.Kind)})
	}
	return out
}

// LiveKind is a CRD in the cluster with objects of its kind.
type LiveKind struct {
	CRD *cluster.CRD
	N   cluster.ObjectCount
}

// CountLive counts the objects of the named CRDs (read before, in crds)
// that exist, all at once, and returns those with any, in the order named.
func CountLive(ctx context.Context, c *cluster.Cluster, crds map[string]*cluster.CRD, names []string) ([]LiveKind, error) {
	var present []*cluster.CRD
	for _, name := range names {
		if crd, ok := crds[name]; ok {
			present = append(present, crd)
		}
	}
	counts, err := c.CountAll(ctx, present)
	if err != nil {
		return nil, err
	}
	var out []LiveKind
	for i, n := range counts {
		if n.N > 0 {
			out = append(out, LiveKind{present[i], n})
		}
	}
	return out, nil
}

// ObjectsExist says how many objects of a kind exist, in a sentence.
func ObjectsExist(n cluster.ObjectCount, kind string) string {
	s := fmt.Sprintf("%d object of kind %s exists", n.N, kind)
	if n.N != 1 || n.AtLeast {
		s = fmt.Sprintf("%d objects of kind %s exist", n.N, kind)
	}
	if n.AtLeast {
		s = "at least " + s
	}
	return s
}

// ManualActivationFinding says what a change of a package under Manual
// activation does: every Crossplane v2 release deactivates every revision
// but the one the package's spec now makes, whatever the activation policy,
// so the running revision stops at once and nothing runs until the new one
// is activated; from v2.4 a revision is made for every spec edit, not only
// for a new reference.
func ManualActivationFinding(pkg string, run *installed.Revision, crossplane string) findings.Finding {
	msg := fmt.Sprintf("%s activates revisions by hand: the new revision waits until activated (pass --activate)", pkg)
	if run != nil {
		msg = fmt.Sprintf("%s activates revisions by hand: Crossplane deactivates its running revision %s at once and %s runs nothing until the new revision is activated (pass --activate)", pkg, run.Name, pkg)
	}
	switch v24, known := FromV24(crossplane); {
	case known && v24:
		msg += fmt.Sprintf("; on Crossplane %s, running here, any edit of its spec does the same, not only a new package reference", crossplane)
	case !known:
		msg += "; from Crossplane v2.4 any edit of its spec does the same, not only a new package reference"
	}
	return findings.Finding{Rule: findings.RuleManualActivation, Severity: findings.Info, Object: pkg, Message: msg}
}

// RuntimeRestartFinding says that a change of a provider or function
// restarts its runtime: each revision runs in a Deployment of its own,
// which Crossplane deletes when it deactivates the revision. Under Manual
// activation without --activate nothing starts (manualActivationFinding).
// Crossplane's runtime controller skips a revision that is paused
// (crossplane.io/paused: "true") or being deleted, and runs none at all
// with --package-runtime=External (runtime is the running Crossplane's
// setting): then nothing is deleted, and the finding says so.
func RuntimeRestartFinding(p *installed.Package, run *installed.Revision, manual bool, runtime string) *findings.Finding {
	if manual || run == nil || (p.Kind != "Provider" && p.Kind != "Function") || runtime == "External" {
		return nil
	}
	kn := p.KindName()
	f := &findings.Finding{Rule: findings.RuleRuntimeRestart, Severity: findings.Info, Object: kn,
		Message: fmt.Sprintf("%s's runtime restarts: Crossplane deletes the Deployment of its running revision %s and starts the new revision's; until its pods are ready, nothing reconciles what %s manages", kn, run.Name, kn)}
	if o := run.Object; o != nil && (o.GetAnnotations()["crossplane.io/paused"] == "true" || o.GetDeletionTimestamp() != nil) {
		why := "is paused (crossplane.io/paused)"
		if o.GetDeletionTimestamp() != nil {
			why = "is being deleted"
		}
		f.Severity = findings.Warning
		f.Message = fmt.Sprintf("%s's running revision %s %s: Crossplane's runtime controller skips it, so its Deployment is not deleted and keeps running beside the new revision's, both reconciling what %s manages, until the revision is unpaused or gone", kn, run.Name, why, kn)
	}
	return f
}

// FromV24 reports whether a Crossplane version is v2.4 or later, and
// whether that is known at all.
func FromV24(version string) (v24, known bool) {
	v, err := releases.Parse(version)
	if err != nil {
		return false, false
	}
	return !v.LessThan(semver.MustParse("v2.4.0-0")), true
}

// CrossplaneVersionFinding checks the target's spec.crossplane.version
// against the running Crossplane ("" when unknown: unread says why). A
// check that could not run is a warning that says why, never a pass.
func CrossplaneVersionFinding(constraint, running string, unread error, namespace, target string) *findings.Finding {
	if constraint == "" {
		return nil
	}
	if running == "" {
		why := "no version found"
		if unread != nil {
			why = DeploymentUnread(unread, namespace)
		}
		return &findings.Finding{Rule: findings.RuleCrossplaneVersion, Severity: findings.Warning,
			Message: fmt.Sprintf("%s needs Crossplane %s, which could not be checked: %s; check it with kubectl get deployment crossplane -n %s", target, constraint, why, namespace)}
	}
	ok, err := versions.Satisfies(constraint, running)
	if err != nil {
		return &findings.Finding{Rule: findings.RuleCrossplaneVersion, Severity: findings.Warning,
			Message: fmt.Sprintf("%s needs Crossplane %q, which cannot be checked against %s: %v", target, constraint, running, err)}
	}
	if ok {
		return &findings.Finding{Rule: findings.RuleCrossplaneVersion, Severity: findings.Info,
			Message: fmt.Sprintf("%s needs Crossplane %s; Crossplane %s runs", target, constraint, running)}
	}
	return &findings.Finding{Rule: findings.RuleCrossplaneVersion, Severity: findings.Blocking,
		Message: fmt.Sprintf("%s needs Crossplane %s, but Crossplane %s runs: the package manager would refuse it; upgrade Crossplane first", target, constraint, running)}
}

// DependentFindings: installed packages whose dependsOn (in the Lock)
// excludes the target version of repo.
func DependentFindings(lock []installed.LockPackage, pkgs []*installed.Package, repo, version string) []findings.Finding {
	var out []findings.Finding
	for _, d := range installed.Dependents(lock, repo) {
		for _, dep := range d.Dependencies {
			if reference.Repository(dep.Package) != repo || dep.Constraints == "" {
				continue
			}
			ok, err := versions.Satisfies(dep.Constraints, version)
			if err == nil && ok {
				continue
			}
			who := PackageName(pkgs, d.Source)
			out = append(out, findings.Finding{Rule: findings.RuleDependentConstraint, Severity: findings.Blocking, Object: who,
				Message: fmt.Sprintf("%s depends on %s %s, which excludes %s: upgrade %s to a version that allows it first", who, repo, dep.Constraints, version, who)})
		}
	}
	return out
}

// PackageName is the installed package of a repository as kind/name
// (what the verbs take), else the repository itself.
func PackageName(pkgs []*installed.Package, repo string) string {
	for _, p := range pkgs {
		if reference.Repository(p.Source) == reference.Repository(repo) {
			return p.KindName()
		}
	}
	return repo
}

// DowngradeFinding: a target older than what runs. It stops an upgrade
// (say rollback when that is meant) and is only noted for a rollback.
func DowngradeFinding(rollback bool, from, to string) *findings.Finding {
	fv, err1 := semver.NewVersion(from)
	tv, err2 := semver.NewVersion(to)
	if err1 != nil || err2 != nil || !tv.LessThan(fv) {
		return nil
	}
	if rollback {
		return &findings.Finding{Rule: findings.RuleDowngrade, Severity: findings.Info, Message: fmt.Sprintf("%s is older than the running %s", to, from)}
	}
	return &findings.Finding{Rule: findings.RuleDowngrade, Severity: findings.Blocking,
		Message: fmt.Sprintf("%s is older than the running %s: use kubectl xpkg rollback to go back, or --force", to, from)}
}

// BreakingFindings sums up the diff's other breaking changes.
func BreakingFindings(r *diff.Report) []findings.Finding {
	var out []findings.Finding
	for _, obj := range r.Objects {
		n := 0
		var first string
		for _, c := range obj.Changes {
			if c.Severity == diff.Breaking {
				if n == 0 {
					first = c.String()
				}
				n++
			}
		}
		if n == 0 {
			continue
		}
		msg := fmt.Sprintf("%s: %s", obj.Label(), first)
		if n > 1 {
			msg += fmt.Sprintf(" (and %d more breaking changes: kubectl xpkg diff shows them)", n-1)
		}
		out = append(out, findings.Finding{Rule: findings.RuleBreakingChange, Severity: findings.Warning, Object: obj.Label(), Message: msg, Count: findings.Count(int64(n))})
	}
	return out
}

// PinnedFindings: a package that others depend on with a version range
// cannot be pinned by digest. The package manager records a pinned
// package's version in the Lock as its digest, does not match it against
// a range, reports the dependency missing, and the dependent turns
// unhealthy (crossplane/crossplane#7458; seen with Crossplane v2.3.4).
func PinnedFindings(holds []versions.Hold, pkg, target string) []findings.Finding {
	var out []findings.Finding
	for _, h := range holds {
		if _, err := semver.NewConstraint(h.Constraint); err != nil {
			continue // a digest constraint compares digests: that works
		}
		out = append(out, findings.Finding{Rule: findings.RulePinnedDependency, Severity: findings.Blocking, Object: h.By,
			Message: fmt.Sprintf("%s depends on %s %s; pinned by digest, %s is recorded in the Lock as %s, which Crossplane does not match against a version range: it reports the dependency missing and %s turns unhealthy; move %s without a digest",
				h.By, pkg, h.Constraint, pkg, reference.Digest(target), h.By, pkg)})
	}
	return out
}
