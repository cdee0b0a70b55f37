package diagnose

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/releases"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// unknown: what the release table cannot vouch for is said, and what
// rests on it is left unchecked rather than guessed.
func (m *move) unknown() []findings.Finding {
	var out []findings.Finding
	warn := func(msg string) {
		out = append(out, findings.Finding{Rule: findings.RuleCrossplaneUnknown, Severity: findings.Warning, Message: msg})
	}
	if m.to == nil {
		warn(fmt.Sprintf("this kubectl xpkg's release table knows Crossplane %s, not %s: checked are the minor step, a downgrade and the packages' Crossplane constraints; which versions of its core CRDs %s defines, how it names revisions and its known defects are not (a newer kubectl xpkg may know them)",
			releases.Known(), m.targetName(), m.targetName()))
	}
	if m.target.Prerelease() != "" && m.to != nil {
		warn(fmt.Sprintf("%s is a pre-release: the table's facts of %s are those of its releases, which a pre-release need not share (v2.4.0-rc.0 still named revisions by the image digest)", m.targetName(), m.to.Minor))
	}
	switch {
	case m.runningRaw != "" && m.running == nil:
		warn(fmt.Sprintf("Crossplane runs as %q (deployment %s/crossplane), which is no semantic version: the minor step, a downgrade and what changes between the two releases could not be checked", m.runningRaw, m.ns))
	case m.running != nil && m.from == nil && m.to != nil:
		warn(fmt.Sprintf("the release table knows Crossplane %s, not the running %s: whether %s names revisions otherwise, so that every package gets a new revision, was not checked", releases.Known(), m.runningName(), m.targetName()))
	}
	return out
}

// direction: a downgrade, or an upgrade that skips a minor version.
func (m *move) direction() []findings.Finding {
	if m.running == nil || m.target.Equal(m.running) {
		return nil
	}
	if m.target.LessThan(m.running) {
		return []findings.Finding{{Rule: findings.RuleCrossplaneDowngrade, Severity: findings.Blocking, Object: "deployment/crossplane",
			Message: fmt.Sprintf("%s is older than the running %s: Crossplane does not support downgrades (each release migrates what it stores forward, never back); to go back, restore the state from before the upgrade", m.targetName(), m.runningName())}}
	}
	steps, ok := releases.Route(m.running, m.target)
	switch {
	case ok && len(steps) <= 1:
		return nil
	case ok:
		return []findings.Finding{{Rule: findings.RuleCrossplaneSkipped, Severity: findings.Blocking, Object: "deployment/crossplane", Count: findings.Count(int64(len(steps) - 1)),
			Message: fmt.Sprintf("%s to %s skips %s: Crossplane supports upgrading one minor version at a time (crossplane#6864): each release migrates at its start the stored versions the next one drops, and a skipped release's migration never runs; upgrade to %s (the latest patch of each) and then to %s",
				m.runningName(), m.targetName(), strings.Join(steps[:len(steps)-1], ", "), strings.Join(steps[:len(steps)-1], ", then "), m.targetName())}}
	}
	return []findings.Finding{{Rule: findings.RuleCrossplaneSkipped, Severity: findings.Blocking, Object: "deployment/crossplane",
		Message: fmt.Sprintf("%s to %s is no supported upgrade: Crossplane upgrades one minor version at a time, and v1.20 to v2.0 is the one step between major versions (crossplane#6864)", m.runningName(), m.targetName())}}
}

// renamed: when the target names revisions otherwise than the running
// release (v2.3 by the image digest, v2.4 by a hash of the digest and the
// package's generation: manager/reconciler.go, crossplane#7473), no
// current revision keeps its name: on its start the package manager makes
// every package a new revision and deactivates the old one, whatever the
// activation policy, and activates the new one only under Automatic.
func (m *move) renamed() []findings.Finding {
	if !m.renames() {
		return nil
	}
	why := fmt.Sprintf("Crossplane %s names revisions by %s, %s by %s", m.to.Minor, m.to.Naming, m.from.Minor, m.from.Naming)
	var out []findings.Finding
	var restart, only []string
	for _, p := range m.s.pkgs {
		run := m.s.active(p)
		switch {
		case run == nil:
			continue // runs nothing now: manual-inactive says so
		case p.ActivationPolicy == "Manual":
			out = append(out, manualOffline(p, run, m.targetName(), why))
		case installed.HasRuntime(p.Kind):
			restart = append(restart, p.KindName())
		default:
			only = append(only, p.KindName())
		}
	}
	if n := len(restart) + len(only); n > 0 {
		msg := fmt.Sprintf("%s: no current revision keeps its name, so when %s starts the package manager makes each of these %d packages a new revision and deactivates the old one", why, m.targetName(), n)
		if len(restart) > 0 {
			msg += fmt.Sprintf("; %d restart their runtimes (a new Deployment each: nothing reconciles what one manages until its pods are ready): %s", len(restart), strings.Join(restart, ", "))
		}
		if len(only) > 0 {
			msg += "; a new revision only: " + strings.Join(only, ", ")
		}
		out = append(out, findings.Finding{Rule: findings.RuleCrossplaneRevisions, Severity: findings.Info, Count: findings.Count(int64(n)), Message: msg})
	}
	for _, p := range m.s.pkgs {
		if repo, want, by, ok := m.s.twinRisk(p); ok {
			out = append(out, findings.Finding{Rule: findings.RuleCrossplaneTwin, Severity: findings.Blocking, Object: p.KindName(),
				Message: fmt.Sprintf("%s installs %s, which %s depend(s) on, under a name other than the resolver's (%s); %s, so %s starts by replacing every revision, and while %s's is replaced the Lock has no entry for %s: the resolver installs it again as %s/%s and the Lock then holds two nodes for it, which takes every package's dependencies down (devantler-tech/platform#3454, after 2.3.4 to 2.4.0); before upgrading, give it that name, keeping what it installed: kubectl xpkg rename %s",
					p.KindName(), repo, strings.Join(by, ", "), want, why, m.targetName(), p.KindName(), repo, strings.ToLower(p.Kind), want, p.KindName())})
		}
	}
	return out
}

// manualOffline: under Manual activation the new revision stays inactive
// (manager/reconciler.go activates one only under Automatic) while the
// running one is deactivated: a provider's or function's runtime stops
// until someone activates the new revision, which blocks; a
// configuration's objects stay, though no revision controls them.
func manualOffline(p *installed.Package, run *installed.Revision, target, why string) findings.Finding {
	kn := p.KindName()
	f := findings.Finding{Rule: findings.RuleCrossplaneManual, Severity: findings.Blocking, Object: kn}
	head := fmt.Sprintf("%s activates revisions by hand (revisionActivationPolicy: Manual); %s, so when %s starts the package manager makes %s a new revision, deactivates the running %s and leaves the new one inactive",
		kn, why, target, kn, run.Name)
	way := fmt.Sprintf("activate it once %s runs (kubectl xpkg upgrade %s --activate), or set its revisionActivationPolicy to Automatic before upgrading", target, kn)
	if installed.HasRuntime(p.Kind) {
		f.Message = fmt.Sprintf("%s: its runtime stops and nothing %s until someone activates it; %s", head, map[bool]string{true: "reconciles what it manages", false: "can call it"}[p.Kind == "Provider"], way)
		return f
	}
	f.Severity = findings.Warning
	f.Message = fmt.Sprintf("%s: its definitions and compositions stay, but no revision controls them until someone activates it; %s", head, way)
	return f
}

// active is p's active revision, or nil.
func (s *State) active(p *installed.Package) *installed.Revision {
	for _, r := range s.RevisionsOf(p) {
		if r.DesiredState == "Active" {
			return r
		}
	}
	return nil
}

// storedVersions: Crossplane's start applies its own CRDs before it
// migrates anything (cmd/crossplane/core/init.go: NewCoreCRDs, then the
// migrators), and the API server refuses a CRD whose status.storedVersions
// names a version its spec no longer has (apiextensions validation:
// ValidateCustomResourceDefinitionStoredVersions), so Crossplane does
// not start (crossplane#6717).
func (m *move) storedVersions(crds map[string]*cluster.CRD) []findings.Finding {
	defines := m.to.Defines()
	var out []findings.Finding
	for _, name := range slices.Sorted(maps.Keys(crds)) {
		crd, vs := crds[name], defines[name]
		if vs == nil {
			continue // a kind the target removed: removedKinds
		}
		for _, sv := range crd.Stored {
			if slices.Contains(vs, sv) {
				continue
			}
			out = append(out, findings.Finding{Rule: findings.RuleCrossplaneStored, Severity: findings.Blocking, Object: name,
				Message: fmt.Sprintf("CRD %s stores objects at %s, which Crossplane %s no longer defines (it defines %s): its start cannot update the CRD, as the API server refuses a CRD whose status.storedVersions names a version its spec lacks, and Crossplane does not start (crossplane#6717); %s",
					name, sv, m.targetName(), strings.Join(vs, ", "), m.migrateWay(crd, sv))})
		}
	}
	return out
}

// migrateWay says what moves a CRD's objects off a stored version: the
// running release's start, a later patch of its line, or by hand.
func (m *move) migrateWay(crd *cluster.CRD, stored string) string {
	if m.from != nil {
		for _, v := range crd.Stored {
			if m.from.MigratesAt(m.running, crd.Name, v) {
				return fmt.Sprintf("the running %s migrates it when it starts: restart it (kubectl rollout restart deployment/crossplane -n %s) and check again", m.runningName(), m.ns)
			}
		}
		for _, v := range crd.Stored {
			if p := m.from.FirstMigrating(m.running, crd.Name, v); p != "" {
				return fmt.Sprintf("Crossplane %s and later patches of %s migrate it when they start: upgrade to the latest %s patch first", p, m.from.Minor, m.from.Minor)
			}
		}
	}
	return fmt.Sprintf("migrate it by hand: write every object back at the storage version %s (kubectl get %s -A -o json | kubectl replace -f -), then remove %s from the CRD's status.storedVersions (kubectl edit crd %s --subresource=status)",
		crd.Storage, crd.Name, stored, crd.Name)
}

// removedKinds: core kinds the target no longer has. Their CRDs stay
// (Crossplane deletes none), but nothing reads their objects, and a
// package field that pointed at one goes with it.
func (m *move) removedKinds(ctx context.Context, c *cluster.Cluster, crds map[string]*cluster.CRD) ([]findings.Finding, error) {
	gone := m.to.GoneBy()
	if m.from != nil {
		before := m.from.GoneBy()
		gone = slices.DeleteFunc(gone, func(r releases.Removed) bool { return slices.Contains(before, r) })
	}
	var out []findings.Finding
	for _, g := range gone {
		crd := crds[g.CRD]
		if crd == nil {
			continue
		}
		n, err := c.CountObjects(ctx, crd)
		if err != nil {
			return out, err
		}
		if n.N > 0 {
			out = append(out, findings.Finding{Rule: findings.RuleCrossplaneRemovedKind, Severity: findings.Warning, Object: g.CRD, Count: findings.Count(n.N),
				Message: fmt.Sprintf("%s, a kind Crossplane %s no longer has: the CRD stays, but nothing reads them once it runs; delete them when nothing needs them", ObjectsExist(n, g.Kind), m.targetName())})
		}
		out = append(out, m.refsTo(g)...)
	}
	return out, nil
}

// refsTo: packages whose spec points at an object of a removed kind.
func (m *move) refsTo(g releases.Removed) []findings.Finding {
	if g.Ref == "" {
		return nil
	}
	var out []findings.Finding
	for _, p := range m.s.pkgs {
		name, _, _ := unstructured.NestedString(p.Object.Object, "spec", g.Ref, "name")
		if name == "" {
			continue
		}
		out = append(out, findings.Finding{Rule: findings.RuleCrossplaneRemovedKind, Severity: findings.Blocking, Object: p.KindName(),
			Message: fmt.Sprintf("%s takes its runtime's settings from %s %s (spec.%s), which Crossplane %s drops with the kind: once it runs, %s's runtime runs without them (a ServiceAccount's annotations, say); move them to a DeploymentRuntimeConfig (spec.runtimeConfigRef) first",
				p.KindName(), g.Kind, name, g.Ref, m.targetName(), p.KindName())})
	}
	return out
}

// knownBad: the target is a patch release with a known defect; blocking
// where this cluster triggers it.
func (m *move) knownBad() []findings.Finding {
	var out []findings.Finding
	for _, d := range m.to.DefectsAt(m.target) {
		f := findings.Finding{Rule: findings.RuleCrossplaneKnownBad, Severity: findings.Warning, Object: "deployment/crossplane"}
		head := fmt.Sprintf("Crossplane %s has a known defect (%s, fixed in %s): %s", m.targetName(), d.Issue, d.FixedIn, d.Summary)
		if d.When != releases.PinnedServiceAccount {
			f.Severity, f.Message = findings.Blocking, head+"; upgrade to "+d.FixedIn+" instead"
			out = append(out, f)
			continue
		}
		if !m.s.configsRead {
			f.Message = fmt.Sprintf("%s. It bites when %s; whether one does here could not be read: upgrade to %s instead", head, d.When, d.FixedIn)
			out = append(out, f)
			continue
		}
		f.Message = fmt.Sprintf("%s. It bites when %s; none does here, but one made later would: upgrade to %s instead", head, d.When, d.FixedIn)
		if pinned := m.pinned(m.s.configs); len(pinned) > 0 {
			f.Severity = findings.Blocking
			f.Message = fmt.Sprintf("%s. It bites when %s, and here %s: upgrade to %s instead", head, d.When, strings.Join(pinned, "; "), d.FixedIn)
		}
		out = append(out, f)
	}
	return out
}

// pinned describes each DeploymentRuntimeConfig that names its
// ServiceAccount, with the providers and functions that use it (a
// package without runtimeConfigRef uses "default").
func (m *move) pinned(drcs []cluster.RuntimeConfig) []string {
	var out []string
	for _, rc := range drcs {
		if rc.ServiceAccount == "" {
			continue
		}
		var users []string
		for _, p := range m.s.pkgs {
			if installed.HasRuntime(p.Kind) && orDefault(p.RuntimeConfig) == rc.Name {
				users = append(users, p.KindName())
			}
		}
		s := fmt.Sprintf("DeploymentRuntimeConfig %s names ServiceAccount %s", rc.Name, rc.ServiceAccount)
		if len(users) > 0 {
			s += " (for " + strings.Join(users, ", ") + ")"
		}
		out = append(out, s)
	}
	return out
}

func orDefault(runtimeConfig string) string {
	if runtimeConfig == "" {
		return "default"
	}
	return runtimeConfig
}

// constraintFinding judges one package's constraint against the target.
func (m *move) constraintFinding(r ConstraintRead) *findings.Finding {
	kn := r.Package.KindName()
	switch {
	case r.Err != "":
		return &findings.Finding{Rule: findings.RuleCrossplaneConstraint, Severity: findings.Warning, Object: kn,
			Message: fmt.Sprintf("%s's Crossplane constraint could not be read: %s %s; check it against %s yourself (kubectl xpkg inspect %s)", kn, r.Image, r.Err, m.targetName(), r.Image)}
	case r.Constraint == "":
		return nil
	}
	ok, err := versions.Satisfies(r.Constraint, m.targetName())
	switch {
	case err != nil:
		return &findings.Finding{Rule: findings.RuleCrossplaneConstraint, Severity: findings.Warning, Object: kn,
			Message: fmt.Sprintf("%s (%s) needs Crossplane %q, which cannot be checked against %s: %v", kn, r.Image, r.Constraint, m.targetName(), err)}
	case ok:
		return nil
	}
	return &findings.Finding{Rule: findings.RuleCrossplaneConstraint, Severity: findings.Blocking, Object: kn,
		Message: fmt.Sprintf("%s (%s) needs Crossplane %s, which excludes %s: once it runs, the package manager marks the revision unhealthy (incompatible Crossplane version) and installs nothing more of it; first upgrade %s to a version that admits %s (kubectl xpkg outdated), or set its spec.ignoreCrossplaneConstraints",
			kn, r.Image, r.Constraint, m.targetName(), kn, m.targetName())}
}
