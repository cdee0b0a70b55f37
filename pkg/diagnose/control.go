package diagnose

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// revisionController is a definition's controller reference and its place
// in metadata.ownerReferences, when the controller is a package revision.
func (s *State) revisionController(d *cluster.DefinitionMeta) (metav1.OwnerReference, int, bool) {
	for i, o := range d.Owners {
		if o.Controller != nil && *o.Controller {
			_, ok := s.revisionKinds[groupKind(o)]
			return o, i, ok
		}
	}
	return metav1.OwnerReference{}, -1, false
}

// OrphanRef is a definition whose controller reference names a package
// revision that no longer exists: what removing that reference needs.
type OrphanRef struct {
	// Resource is cluster.ResourceCRDs or cluster.ResourceMRDs.
	Resource        string
	Name            string
	UID             string
	ResourceVersion string
	// Index is the reference's place in metadata.ownerReferences.
	Index           int
	OwnerAPIVersion string
	OwnerKind       string
	OwnerUID        string
	OwnerName       string
}

// OrphanedControllers are the definitions controlled by a revision that no
// longer exists (no revision of its kind has its UID: a revision made
// again under the same name is another), judged only where every revision
// of that kind could be read. A definition being deleted is left out: the
// reference goes with it, and what holds it is definitionsTerminating's.
func (s *State) OrphanedControllers() []OrphanRef {
	var out []OrphanRef
	for i := range s.defs {
		d := &s.defs[i]
		o, at, ok := s.revisionController(d)
		if !ok || d.Deleting != nil || !s.revsRead[s.revisionKinds[groupKind(o)]] || s.revByUID[o.UID] != nil {
			continue
		}
		out = append(out, OrphanRef{Resource: d.Resource, Name: d.Name, UID: d.UID, ResourceVersion: d.ResourceVersion,
			Index: at, OwnerAPIVersion: o.APIVersion, OwnerKind: o.Kind, OwnerUID: string(o.UID), OwnerName: o.Name})
	}
	return out
}

// controlConflicts: Crossplane's establisher makes an active revision the
// controller of every object its package installs, and refuses when
// another controls it ("X is already controlled by KIND NAME (UID U)",
// crossplane-runtime's AddControllerReference). Up to v2.3 it refuses
// whoever that is; v2.4.2 first demotes a controller that is a revision of
// its own kind and either no longer exists or is an inactive revision of
// its own package (demoteOldController). A revision of another package it
// never displaces.
func (s *State) controlConflicts() []findings.Finding {
	var out []findings.Finding
	said := map[string]bool{}
	for _, o := range s.OrphanedControllers() {
		out = append(out, s.orphanFinding(o))
		said[o.Name] = true
	}
	for i := range s.defs {
		if f := s.contested(&s.defs[i]); f != nil && !said[s.defs[i].Name] {
			out = append(out, *f)
			said[s.defs[i].Name] = true
		}
	}
	return append(out, s.conflictConditions(said)...)
}

// orphanFinding: blocking, unless the running Crossplane takes control
// from the gone revision itself (v2.4.2 and later, when every package that
// installs the definition is of the gone revision's kind).
func (s *State) orphanFinding(o OrphanRef) findings.Finding {
	who := s.installers(s.definition(o.Resource, o.Name))
	what := fmt.Sprintf("%s %s is controlled by %s %s (uid %s, ownerReferences[%d]), which no longer exists", defKind(o.Resource), o.Name, o.OwnerKind, o.OwnerName, o.OwnerUID, o.Index)
	if len(who) > 0 {
		what += "; " + strings.Join(who, ", ") + " install(s) it"
	}
	f := findings.Finding{Rule: findings.RuleControlConflict, Severity: findings.Blocking, Object: DefinitionObject(o.Resource, o.Name),
		Message: what + fmt.Sprintf(": Crossplane's package manager takes control of no object another revision controls (up to v2.3 whichever revision that is; v2.4.2 and later take it from a gone revision of their own kind), so the revision that installs it stays unhealthy (%s is already controlled by %s %s), and the API server's garbage collector, which drops references to deleted owners, has not dropped it",
			o.Name, o.OwnerKind, o.OwnerName)}
	kind := s.revisionKinds[schema.FromAPIVersionAndKind(o.OwnerAPIVersion, o.OwnerKind).GroupKind()]
	if v := s.version(); versionIn(v, "v2.4.2", "") && len(who) > 0 && allOfKind(who, kind) {
		f.Severity = findings.Warning
		f.Message = what + fmt.Sprintf(": Crossplane %s takes control from a gone revision of its own kind when the revision that installs it next reconciles, but the reference stays while the API server's garbage collector, which drops references to deleted owners, does not drop it", v)
	}
	f.Message += ". Remove it: " + patchOwnerCommand(o)
	return f
}

// patchOwnerCommand removes the reference o names, and only it: the test
// fails when the references changed since doctor read them.
func patchOwnerCommand(o OrphanRef) string {
	return fmt.Sprintf(`kubectl patch %s %s --type=json -p '[{"op":"test","path":"/metadata/ownerReferences/%d/uid","value":"%s"},{"op":"remove","path":"/metadata/ownerReferences/%d"}]'`,
		patchResource(o.Resource), o.Name, o.Index, o.OwnerUID, o.Index)
}

// allOfKind reports whether every package of names (KIND/NAME) is of kind.
func allOfKind(names []string, kind string) bool {
	prefix := strings.ToLower(kind) + "/"
	return kind != "" && !slices.ContainsFunc(names, func(n string) bool { return !strings.HasPrefix(n, prefix) })
}

// installers are the packages that install a definition: its owners of a
// package kind (every revision makes its package an owner of what it
// installs) and the packages whose active revision records it.
func (s *State) installers(d *cluster.DefinitionMeta) []string {
	if d == nil {
		return nil
	}
	var out []string
	add := func(kn string) {
		if !slices.Contains(out, kn) {
			out = append(out, kn)
		}
	}
	for _, o := range d.Owners {
		if s.packageKinds[groupKind(o)] {
			add(installed.KindName(o.Kind, o.Name))
		}
	}
	for _, r := range s.recorders[d.Name] {
		add(revPackage(r))
	}
	return out
}

// contested: a definition another package's revision controls, which an
// active revision records too (it installed it while it held it, and
// cannot take it back).
func (s *State) contested(d *cluster.DefinitionMeta) *findings.Finding {
	o, _, ok := s.revisionController(d)
	c := s.revByUID[o.UID]
	if !ok || c == nil {
		return nil
	}
	var others []string
	for _, r := range s.recorders[d.Name] {
		if revPackage(r) != revPackage(c) {
			others = append(others, fmt.Sprintf("%s (revision %s)", revPackage(r), r.Name))
		}
	}
	if len(others) == 0 {
		return nil
	}
	return &findings.Finding{Rule: findings.RuleControlConflict, Severity: findings.Blocking, Object: DefinitionObject(d.Resource, d.Name),
		Message: fmt.Sprintf("%s %s is controlled by revision %s of %s, and %s install(s) it too: Crossplane lets one revision control an object and never takes it from another package's, so the other cannot take control of it (%s is already controlled by %s %s); two packages cannot both install %s: uninstall one of them, or move it to a version that no longer ships it",
			defKind(d.Resource), d.Name, c.Name, revPackage(c), strings.Join(others, ", "), d.Name, o.Kind, o.Name, d.Name)}
}

// controlledBy is crossplane-runtime's refusal, as a revision's condition
// carries it: object, controller kind, name and UID.
var controlledBy = regexp.MustCompile(`(\S+) is already controlled by (\S+) (\S+) \(UID ([^)]*)\)`)

// conflictConditions: an active revision that says it cannot take control
// (past the moment an upgrade's hand-over takes), for an object not
// already named from the definitions' own references.
func (s *State) conflictConditions(said map[string]bool) []findings.Finding {
	var out []findings.Finding
	for _, r := range s.revs {
		c := revisionHealth(r)
		if !r.IsActive() || c == nil || c.Status != "False" || !strings.Contains(c.Message, "is already controlled by") || !installed.IsTerminal(c) {
			continue
		}
		m := controlledBy.FindStringSubmatch(c.Message)
		if m != nil && said[m[1]] {
			continue
		}
		out = append(out, findings.Finding{Rule: findings.RuleControlConflict, Severity: findings.Blocking, Object: revPackage(r),
			Message: fmt.Sprintf("%s's revision %s cannot take control of what its package installs: %s%s", revPackage(r), r.Name, c.Message, s.conflictWayOut(r, m))})
	}
	return out
}

// conflictWayOut says, from what the condition names, who holds the
// object and what lets the revision take it.
func (s *State) conflictWayOut(r *installed.Revision, m []string) string {
	if m == nil {
		return ""
	}
	obj, kind, name := m[1], m[2], m[3]
	c := s.revByUID[types.UID(m[4])]
	switch {
	case c != nil && revPackage(c) != revPackage(r):
		return fmt.Sprintf(". %s is a revision of %s: two packages cannot both install %s; uninstall one of them, or move it to a version that no longer ships it", name, revPackage(c), obj)
	case c != nil:
		return fmt.Sprintf(". %s is another revision of %s: Crossplane v2.4.2 and later take control from it once it is inactive; earlier releases wait until it releases %s, which it does when it reconciles as inactive: if it does not, delete it (kubectl delete %s %s)", name, revPackage(r), obj, strings.ToLower(kind), name)
	case s.readRevisionKind(kind):
		return fmt.Sprintf(". %s %s no longer exists: remove the reference with uid %s from %s's metadata.ownerReferences", kind, name, m[4], obj)
	}
	return fmt.Sprintf(". %s %s is no package revision: if it should not own %s, remove its reference (uid %s) from %s's metadata.ownerReferences", kind, name, obj, m[4], obj)
}

// readRevisionKind reports whether kind is a revision kind whose revisions
// were all read.
func (s *State) readRevisionKind(kind string) bool {
	for gk, pk := range s.revisionKinds {
		if gk.Kind == kind && s.revsRead[pk] {
			return true
		}
	}
	return false
}
