package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// definitionsTerminating: a CRD's deletion waits until every object of
// its kind is gone (the API server's customresourcecleanup finalizer), and
// a managed resource goes only once the provider's controller has removed
// its finalizer. A provider deleted while its managed resources exist (a
// GitOps prune, kubectl delete) takes its revision with it, the garbage
// collector deletes the CRDs (and MRDs) the revision owned, and nothing
// removes the finalizers: the CRD is Terminating for good (crossplane#6268,
// #4251, #7173). Blocking unless the provider's controller runs and the
// deletion is younger than deletionGrace: it then removes them itself (a
// warning: its logs say what keeps it).
func (s *State) definitionsTerminating() []findings.Finding {
	var out []findings.Finding
	for i := range s.defs {
		d := &s.defs[i]
		h := s.heldBy(d)
		if d.Deleting == nil || h == nil || s.crdDeleting(d) {
			continue
		}
		sv := s.servedBy(d)
		sev := findings.Blocking
		if sv.runs() && time.Since(*d.Deleting) < deletionGrace {
			// Its controller finishes a deletion within seconds; one that
			// lasts is stuck, whoever runs.
			sev = findings.Warning
		}
		crd := s.crdOf(d)
		msg := fmt.Sprintf("%s %s has been deleting for %s and cannot finish while objects of its kind exist: %d %s object(s) remain and hold it: %s. %s %s%s",
			defKind(d.Resource), d.Name, since(*d.Deleting), h.n, h.kind, objectList(h.first, h.n, false), whoRemoves(sv, crd), s.breaks(d, crd, sv), wayOut(sv, crd, h.first[0], true))
		out = append(out, findings.Finding{Rule: findings.RuleDefinitionTerminating, Severity: sev, Object: DefinitionObject(d.Resource, d.Name),
			Count: findings.Count(int64(h.n)), Message: msg})
	}
	return out
}

// crdDeleting: d is an MRD whose CRD is being deleted too, which the
// CRD's finding names.
func (s *State) crdDeleting(d *cluster.DefinitionMeta) bool {
	crd := s.definition(cluster.ResourceCRDs, d.Name)
	return d.Resource == cluster.ResourceMRDs && crd != nil && crd.Deleting != nil
}

func since(t time.Time) string { return duration.HumanDuration(time.Since(t)) }

// objectList names objects (NAMESPACE/NAME), with their finalizers, or
// how long each has been deleting, and how many more there are.
func objectList(first []cluster.ObjectMeta, n int, deleting bool) string {
	var names []string
	for _, o := range first {
		name := o.Name
		if o.Namespace != "" {
			name = o.Namespace + "/" + name
		}
		switch {
		case deleting && o.Deleting != nil:
			name += " (deleting for " + since(*o.Deleting) + ")"
		case len(o.Finalizers) > 0:
			name += " (finalizers: " + strings.Join(o.Finalizers, ", ") + ")"
		default:
			name += " (no finalizer)"
		}
		names = append(names, name)
	}
	if n > len(first) {
		names = append(names, fmt.Sprintf("%d more", n-len(first)))
	}
	return strings.Join(names, ", ")
}

// whoRemoves says who removes the managed-resource finalizer: the
// controller of the package that serves the kind, and whether it runs.
func whoRemoves(sv server, crd *cluster.CRD) string {
	switch {
	case sv.pkg == "" && sv.mrdGone:
		return fmt.Sprintf("The MRD it was made from is gone and no revision owns it any more: the provider that served %s is not installed, so nothing removes %s.", kindOf(crd), ManagedFinalizer)
	case sv.pkg == "":
		return "No package's revision owns the definition, so no provider's controller removes " + ManagedFinalizer + "."
	case !sv.judged:
		return fmt.Sprintf("The controller of %s removes %s (the packages or revisions of its kind could not be read).", sv.pkg, ManagedFinalizer)
	case sv.p == nil && sv.revision != "" && sv.rev == nil:
		return fmt.Sprintf("Only the controller of %s removes %s, and %s is not installed: the revision that served the kind, %s, is gone.", sv.pkg, ManagedFinalizer, sv.pkg, sv.revision)
	case sv.p == nil:
		return fmt.Sprintf("Only the controller of %s removes %s, and %s is not installed.", sv.pkg, ManagedFinalizer, sv.pkg)
	case sv.active == nil:
		return fmt.Sprintf("Only the controller of %s removes %s, and none of its revisions is active: nothing runs it.", sv.pkg, ManagedFinalizer)
	case !sv.runs():
		c := sv.active.Condition("RuntimeHealthy")
		return fmt.Sprintf("Only the controller of %s removes %s, and its active revision %s does not run (RuntimeHealthy=False: %s).", sv.pkg, ManagedFinalizer, sv.active.Name, c.Message)
	}
	return fmt.Sprintf("The controller of %s (active revision %s) removes %s as it deletes what each object manages; if the deletion lasts, its logs say why.", sv.pkg, sv.active.Name, ManagedFinalizer)
}

// breaks says what the deletion takes down meanwhile: no object of the
// kind can be created, so the Compositions that compose it fail, and the
// packages whose revisions own it lose it once it is gone.
func (s *State) breaks(d *cluster.DefinitionMeta, crd *cluster.CRD, sv server) string {
	gk := schema.GroupKind{Group: crd.Group, Kind: crd.Kind}
	msg := fmt.Sprintf("Until it is gone the API server creates no %s", kindOf(crd))
	if comps := s.composing(gk); len(comps) > 0 {
		msg += fmt.Sprintf(", so the Compositions that compose it cannot: %s", ShortList(comps))
	}
	var owners []string
	for _, o := range d.Owners {
		if r := s.revByUID[o.UID]; r != nil && !slices.Contains(owners, revPackage(r)) {
			owners = append(owners, revPackage(r))
		}
	}
	if len(owners) > 0 {
		msg += fmt.Sprintf("; the revisions of %s own it and lose it when it goes", strings.Join(owners, ", "))
	}
	return msg + ". "
}

// wayOut is the one sentence that ends the deletion: the package that
// serves the kind running again, whose controller removes the finalizers,
// or the deletion finished by orphaning what the objects manage. For a
// definition's deletion (terminating), doctor --fix is the way: it makes
// the objects again once the package manager has made the definition
// again, or, asked to, orphans them.
func wayOut(sv server, crd *cluster.CRD, example cluster.ObjectMeta, terminating bool) string {
	orphan := fmt.Sprintf("let the deletion finish by orphaning: kubectl patch %s %s%s --type=merge -p '{\"metadata\":{\"finalizers\":null}}' removes an object's finalizers, leaving what it manages in place, unmanaged",
		crd.Name, example.Name, namespaceFlag(example.Namespace))
	restore := ""
	if terminating {
		orphan = "let the deletion finish by orphaning what the objects manage: kubectl xpkg doctor --fix --orphan-external-resources lists it, then removes their finalizers"
		restore = ", then kubectl xpkg doctor --fix saves every object, removes its finalizer without deleting what it manages, waits for the package manager to make the CRD again and makes each object again under its external name"
	}
	switch {
	case sv.pkg == "" && sv.mrdGone:
		return fmt.Sprintf("Install the provider that serves %s again%s; or %s", kindOf(crd), cmp.Or(restore, ": its controller then removes the finalizers, deleting what each object manages, and the deletion finishes"), orphan)
	case sv.pkg == "" || !sv.judged:
		return "To end it, " + orphan
	case sv.p == nil:
		return fmt.Sprintf("Install %s again%s; or %s", sv.pkg, cmp.Or(restore, ": its controller then removes the finalizers, deleting what each object manages, and the deletion finishes"), orphan)
	case sv.active == nil:
		return fmt.Sprintf("Activate a revision of %s (kubectl xpkg upgrade %s --activate)%s; or %s", sv.pkg, sv.pkg, cmp.Or(restore, ": its controller then removes the finalizers"), orphan)
	case terminating && !sv.runs():
		return fmt.Sprintf("kubectl xpkg doctor --fix%s; or get %s's runtime running again: its controller then removes the finalizers, deleting what each object manages", strings.TrimPrefix(restore, ", then kubectl xpkg doctor --fix"), sv.pkg)
	case terminating:
		return "If its controller cannot delete what they manage, kubectl xpkg doctor --fix" + strings.TrimPrefix(restore, ", then kubectl xpkg doctor --fix")
	case !sv.runs():
		return fmt.Sprintf("Get %s's runtime running again: its controller then removes the finalizers; or %s", sv.pkg, orphan)
	}
	return "If its controller cannot delete what they manage, " + orphan
}

// kindOf names crd's kind as KIND.GROUP.
func kindOf(crd *cluster.CRD) string {
	return schema.GroupKind{Group: crd.Group, Kind: crd.Kind}.String()
}

func namespaceFlag(ns string) string {
	if ns == "" {
		return ""
	}
	return " -n " + ns
}

// managedDeleting: managed resources being deleted wait for their
// provider's controller to remove ManagedFinalizer; when the provider
// that serves their kind has no active revision (gone, or deactivated),
// nothing does. Kinds whose definition is being deleted are
// definitionsTerminating's.
func (s *State) managedDeleting() []findings.Finding {
	var out []findings.Finding
	seen := map[string]bool{}
	for i := range s.defs {
		d := &s.defs[i]
		crd := s.crdOf(d)
		if crd == nil || seen[crd.Name] || s.kindDeleting(crd.Name) {
			continue
		}
		seen[crd.Name] = true
		h, sv := s.held[crd.Name], s.servedBy(d)
		if h == nil || h.deletingN == 0 || sv.pkg == "" || !sv.judged || sv.active != nil {
			continue
		}
		state := "is not installed"
		if sv.p != nil {
			state = "has no active revision"
		}
		out = append(out, findings.Finding{Rule: findings.RuleManagedDeletionStuck, Severity: findings.Blocking, Object: DefinitionObject(cluster.ResourceCRDs, crd.Name),
			Count: findings.Count(int64(h.deletingN)),
			Message: fmt.Sprintf("%d %s object(s) (CRD %s) are being deleted and wait for %s, which only the controller of %s removes, and %s %s: %s. %s",
				h.deletingN, h.kind, crd.Name, ManagedFinalizer, sv.pkg, sv.pkg, state, objectList(h.deletingFirst, h.deletingN, true), wayOut(sv, crd, h.deletingFirst[0], false))})
	}
	return out
}

// kindDeleting: the CRD or the MRD named name is being deleted.
func (s *State) kindDeleting(name string) bool {
	for _, r := range []string{cluster.ResourceCRDs, cluster.ResourceMRDs} {
		if d := s.definition(r, name); d != nil && d.Deleting != nil {
			return true
		}
	}
	return false
}

// deletionGrace is how long a package's or revision's deletion may take
// before doctor calls it stuck: the package manager and the garbage
// collector finish theirs within seconds.
const deletionGrace = 2 * time.Minute

// deletionsStuck: a package or revision deleted more than deletionGrace
// ago that finalizers still hold. While it exists no package of its name
// can be installed again (nor a revision of its name made).
func (s *State) deletionsStuck() []findings.Finding {
	var out []findings.Finding
	for _, p := range s.pkgs {
		if f, ok := s.stuck(p.Object, p.KindName(), "package "+p.KindName(), p.KindName()); ok {
			out = append(out, f)
		}
	}
	for _, r := range s.revs {
		if f, ok := s.stuck(r.Object, revPackage(r), "revision "+r.Name+" of "+revPackage(r), strings.ToLower(r.Kind)+"/"+r.Name); ok {
			out = append(out, f)
		}
	}
	return out
}

func (s *State) stuck(u *unstructured.Unstructured, object, what, kubectlName string) (findings.Finding, bool) {
	if u == nil {
		return findings.Finding{}, false
	}
	dt := u.GetDeletionTimestamp()
	fs := u.GetFinalizers()
	if dt == nil || len(fs) == 0 || time.Since(dt.Time) < deletionGrace {
		return findings.Finding{}, false
	}
	var why []string
	for _, f := range fs {
		why = append(why, fmt.Sprintf("%s, which %s", f, s.finalizerRemover(f, u)))
	}
	return findings.Finding{Rule: findings.RuleDeletionStuck, Severity: findings.Blocking, Object: object,
		Message: fmt.Sprintf("%s has been deleting for %s, held by %s. Until it is gone nothing of its name can be made again (kubectl get %s -o yaml shows it)",
			what, since(dt.Time), strings.Join(why, "; and "), kubectlName)}, true
}

// finalizerRemover says who removes a finalizer of a package or revision.
func (s *State) finalizerRemover(f string, u *unstructured.Unstructured) string {
	switch f {
	case "revision.pkg.crossplane.io":
		return fmt.Sprintf("Crossplane's package manager removes once it has taken the revision out of the Lock: check that Crossplane runs (kubectl -n %s get deployment crossplane) and what its log says", s.namespace)
	case "foregroundDeletion":
		return "the garbage collector removes once every object it owns (with blockOwnerDeletion) is gone: the deletion of those is what waits"
	case "orphan":
		return "the garbage collector removes once it has orphaned the objects it owns"
	}
	return fmt.Sprintf("the controller that added it removes (kubectl patch %s %s --type=json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]' drops every finalizer, ending the deletion without it)",
		strings.ToLower(u.GetKind()), u.GetName())
}
