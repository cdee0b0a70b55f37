package action

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/releases"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// stateFindings: a rename proves itself by the new package ending where
// the old one is, installed, healthy and in control, so it starts only
// from a package that is: not paused, not being deleted, with an active,
// healthy current revision, and from a complete read of the state.
func (r *Rename) stateFindings(s *diagnose.State, rp *RenamePlan) []findings.Finding {
	p := rp.old
	var why []string
	for _, u := range s.Unread() {
		why = append(why, "what it needs could not be read ("+u+")")
	}
	if p.Object.GetDeletionTimestamp() != nil {
		why = append(why, "it is being deleted")
	}
	if p.Object.GetAnnotations()[cluster.PausedAnnotation] == "true" {
		why = append(why, "it is paused ("+cluster.PausedAnnotation+")")
	}
	cur := s.Revision(p.CurrentRevision)
	switch {
	case cur == nil:
		why = append(why, "it has no current revision")
	case !cur.IsActive():
		why = append(why, fmt.Sprintf("its current revision %s is not active (activate it first: kubectl xpkg upgrade %s --activate)", cur.Name, p.KindName()))
	}
	if rd := rp.ready; !rd.Ready {
		why = append(why, "it is not installed and healthy ("+strings.Join(rd.Pending, ", ")+"): kubectl xpkg describe "+p.KindName()+" says why")
	}
	if len(why) == 0 {
		return nil
	}
	return []findings.Finding{{Rule: findings.RuleRenameState, Severity: findings.Blocking, Object: p.KindName(),
		Message: fmt.Sprintf("%s cannot be renamed as it stands: %s; a rename checks its work by the new package ending installed, healthy and in control", p.KindName(), strings.Join(why, "; "))}}
}

// targetFindings: the new name must be free and valid, and when others
// depend on the package, the resolver's: between the old revision leaving
// the Lock and the new one entering it, the resolver installs a missing
// dependency under its own name, and only a package already there under
// that name (the paused new one) stops it.
func (r *Rename) targetFindings(s *diagnose.State, rp *RenamePlan) []findings.Finding {
	p, name := rp.old, rp.newName
	obj := installed.KindName(p.Kind, name)
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return []findings.Finding{{Rule: findings.RuleRenameTarget, Severity: findings.Blocking, Object: obj, Message: fmt.Sprintf("%s is no valid package name: %s", name, strings.Join(errs, "; "))}}
	}
	if taken := s.Package(obj); taken != nil {
		return []findings.Finding{{Rule: findings.RuleRenameTarget, Severity: findings.Blocking, Object: obj,
			Message: fmt.Sprintf("%s exists already (it installs %s): give another name, or delete it first", obj, taken.Source)}}
	}
	for _, lp := range installed.Dependents(s.Lock(), rp.source) {
		if d, _ := s.Owner(lp.Name); d != nil && !slices.Contains(rp.dependents, d) {
			rp.dependents = append(rp.dependents, d)
		}
	}
	rp.Dependents = dependentNames(rp.dependents)
	want := diagnose.ResolverName(rp.source)
	if len(rp.dependents) == 0 || name == want {
		return nil
	}
	return []findings.Finding{{Rule: findings.RuleTwinName, Severity: findings.Blocking, Object: obj,
		Message: fmt.Sprintf("%s depend(s) on %s, and Crossplane's resolver names it %s: while the rename hands it over, the Lock has no entry for it and the resolver installs %s/%s, a twin; rename it to %s (the default)",
			diagnose.ShortList(rp.Dependents), rp.source, want, strings.ToLower(p.Kind), want, want)}}
}

// lockFindings are doctor's blocking findings about the Lock as a whole
// (no package resolves while they stand) or about the package and what
// it installed: the rename waits for the Lock to resolve, and hands over
// what it installed.
func (r *Rename) lockFindings(s *diagnose.State, rp *RenamePlan) []findings.Finding {
	ours := map[string]bool{rp.old.KindName(): true, "lock/lock": true}
	for _, o := range rp.objects {
		ours[o.name] = true
		ours[o.obj] = true
	}
	var out []findings.Finding
	for _, f := range s.HandOver() {
		if ours[f.Object] || f.Rule == findings.RuleDuplicateLockNode || f.Rule == findings.RuleDependencyUnresolved {
			out = append(out, f)
		}
	}
	return out
}

// renameReleases are the Crossplane minor releases whose hand-over rename
// was built on (their package manager's source read): v2.3 takes no
// control an active controller holds; v2.4 takes it only from a revision
// of the same package.
var renameReleases = []string{"v2.3", "v2.4"}

// releaseFinding: the order of the rename is what these releases need;
// another release may hand objects over otherwise.
func releaseFinding(rp *RenamePlan) []findings.Finding {
	v := rp.Crossplane
	if r, err := releases.Parse(v); err == nil && slices.Contains(renameReleases, fmt.Sprintf("v%d.%d", r.Major(), r.Minor())) {
		return nil
	}
	what := "the running Crossplane's version could not be read (its Deployment crossplane, --crossplane-namespace)"
	if v != "" {
		what = "Crossplane " + v + " runs"
	}
	return []findings.Finding{{Rule: findings.RuleRenameRelease, Severity: findings.Blocking, Object: rp.Package,
		Message: fmt.Sprintf("%s: rename knows how Crossplane %s hand objects between packages, and no other release", what, strings.Join(renameReleases, " and "))}}
}

// gitOpsMarks are the labels and annotations GitOps tools track their
// objects by: such a tool puts back the package under its old name (a
// twin) or prunes the new one.
var gitOpsMarks = []struct{ key, tool string }{
	{"argocd.argoproj.io/tracking-id", "Argo CD"},
	{"argocd.argoproj.io/instance", "Argo CD"},
	{"kustomize.toolkit.fluxcd.io/name", "Flux"},
	{"helm.toolkit.fluxcd.io/name", "Flux"},
	{"meta.helm.sh/release-name", "Helm"},
}

// gitOpsFindings: a package a GitOps tool manages comes back under its
// old name after the rename: two packages of one source, and every
// package unhealthy.
func gitOpsFindings(p *installed.Package) []findings.Finding {
	for _, m := range gitOpsMarks {
		if p.Object.GetLabels()[m.key] != "" || p.Object.GetAnnotations()[m.key] != "" {
			return []findings.Finding{{Rule: findings.RuleRenameGitOps, Severity: findings.Blocking, Object: p.KindName(),
				Message: fmt.Sprintf("%s is managed by %s (%s): it would install it again under its old name, a twin that takes every package down; suspend its sync, rename, change the name in the source it syncs, then resume (or pass --force)", p.KindName(), m.tool, m.key)}}
		}
	}
	return nil
}

// isGitOpsMark tells a label or annotation a GitOps tool tracks by: the
// new package does not copy it.
func isGitOpsMark(key string) bool {
	return slices.ContainsFunc(gitOpsMarks, func(m struct{ key, tool string }) bool { return m.key == key })
}

// handOverFindings say what the package manager does with the objects on
// the running release, and what stops meanwhile.
func handOverFindings(rp *RenamePlan) []findings.Finding {
	p := rp.old
	var crds, mrds, other int
	for _, o := range rp.objects {
		switch o.gvr.Resource {
		case cluster.ResourceCRDs:
			crds++
		case cluster.ResourceMRDs:
			mrds++
		default:
			other++
		}
	}
	v := rp.Crossplane
	msg := fmt.Sprintf("%s installed %d CRDs, %d MRDs and %d other objects (%d live objects of their kinds); Crossplane %s hands an object to another package's revision only once released, so %s is paused and its revision deactivated: it leaves the Lock and releases control (its owner reference stays, so nothing is deleted; rename releases what its status.objectRefs misses); then %s's revision takes control of each; an MRD keeps control of its CRD throughout. Not Manual activation: on v2.4 the edit that sets it makes another revision, which enters the Lock beside the running one",
		p.KindName(), crds, mrds, other, rp.Live, orUnknown(v), p.KindName(), rp.To)
	out := []findings.Finding{{Rule: findings.RuleRenameHandOver, Severity: findings.Info, Object: p.KindName(), Count: findings.Count(int64(len(rp.objects))), Message: msg}}
	if len(rp.dependents) > 0 {
		out = append(out, findings.Finding{Rule: findings.RuleRenameHandOver, Severity: findings.Info, Object: p.KindName(), Count: findings.Count(int64(len(rp.dependents))),
			Message: fmt.Sprintf("%s depend(s) on it: until %s enters the Lock their dependency is missing and they report it; the resolver finds %s already there (paused) and installs nothing", diagnose.ShortList(rp.Dependents), rp.To, rp.To)})
	}
	if installed.HasRuntime(p.Kind) {
		out = append(out, findings.Finding{Rule: findings.RuleRuntimeRestart, Severity: findings.Info, Object: p.KindName(),
			Message: fmt.Sprintf("the runtime of %s stops when its revision is deactivated, and %s's starts only after: nothing reconciles its kinds in between, and its webhooks answer from %s's Service once it runs", p.KindName(), rp.To, rp.newName)})
	}
	return out
}

func orUnknown(v string) string {
	if v == "" {
		return "(release unknown)"
	}
	return v
}

// steps are the rename's steps, in the order Apply takes them.
func (rp *RenamePlan) steps() []string {
	if rp.Undo {
		return rp.undoSteps()
	}
	p, to := rp.old, rp.To
	why := "the package manager makes no revision of it"
	if len(rp.dependents) > 0 {
		why = "it holds the name the resolver would install the dependency under"
	}
	stopped, healthy := "", ""
	if installed.HasRuntime(p.Kind) {
		stopped = " and its runtime has stopped"
	}
	if len(rp.dependents) > 0 {
		healthy = fmt.Sprintf(", and its dependents (%s) are healthy", diagnose.ShortList(rp.Dependents))
	}
	return []string{
		fmt.Sprintf("create %s paused (%s), with the spec of %s: %s", to, cluster.PausedAnnotation, p.KindName(), why),
		fmt.Sprintf("pause %s (%s) and deactivate %s, and wait until it has left the Lock, released control of %d objects%s", p.KindName(), cluster.PausedAnnotation, revisionNames(rp.revs), len(rp.objects), stopped),
		fmt.Sprintf("unpause %s%s", to, map[bool]string{true: " and activate its revision (Manual activation)"}[rp.old.ActivationPolicy == "Manual"]),
		fmt.Sprintf("wait until %s is installed and healthy, its revision controls each object %s's controlled, the Lock holds one node for %s%s", to, p.KindName(), rp.source, healthy),
		fmt.Sprintf("make %s an owner of what only %s's older revisions own, delete %s, and check that every object is still there (%d live objects of their kinds)", to, p.KindName(), p.KindName(), rp.Live),
	}
}

// revisionNames names the active revisions.
func revisionNames(revs []*installed.Revision) string {
	var names []string
	for _, r := range revs {
		if r.IsActive() {
			names = append(names, "revision "+r.Name)
		}
	}
	if len(names) == 0 {
		return "its revisions"
	}
	return strings.Join(names, ", ")
}
