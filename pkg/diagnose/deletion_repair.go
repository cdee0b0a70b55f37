package diagnose

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// The steps that end a definition's deletion held by objects of its kind
// (definitionsTerminating), without losing what they manage.
const (
	// RepairRemoveFinalizer removes ManagedFinalizer from one held object:
	// what its gone controller would have done, without deleting what it
	// manages (which its controller alone would have done).
	RepairRemoveFinalizer = "remove-finalizer"
	// RepairAwaitDefinition waits until the old definition is gone and the
	// package manager has made it again.
	RepairAwaitDefinition = "await-definition"
	// RepairRecreate makes a held object again from what was read of it,
	// with its external name, so that its provider observes what it
	// managed instead of creating it anew.
	RepairRecreate = "recreate"
)

// ExternalNameAnnotation names what a managed resource manages, as its
// provider knows it.
const ExternalNameAnnotation = "crossplane.io/external-name"

// Held is what a step of the deletion repair works on: the definition
// being deleted (its CRD and that CRD's UID), and for the steps on an
// object, the object as read whole before the repair.
type Held struct {
	CRD    *cluster.CRD
	CRDUID string
	Object *unstructured.Unstructured
}

// heldRepair is one definition's repair as planned: restore (the package
// that serves the kind is installed with an active revision: the objects
// are made again once it makes the definition again) or orphan (asked
// for: the objects go, what they manage is left unmanaged).
type heldRepair struct {
	held    Held
	objects []*unstructured.Unstructured
	restore bool
}

// heldRepairs is what ReadHeldRepairs planned: the repairs and, for each
// deletion left alone, why and the ways out.
type heldRepairs struct {
	repairs []heldRepair
	left    []string
}

// ReadHeldRepairs plans the repair of each definition whose deletion
// objects of its kind hold (definitionsTerminating), reading those
// objects whole, one paged list per kind. orphan allows the deletion of
// a kind whose package is not installed to finish by leaving what its
// objects manage unmanaged. What it cannot repair, with why, is Left.
func (s *State) ReadHeldRepairs(ctx context.Context, c *cluster.Cluster, orphan bool) {
	s.heldRepairs = heldRepairs{}
	seen := map[string]bool{}
	for i := range s.defs {
		d := &s.defs[i]
		crd := s.crdOf(d)
		if d.Deleting == nil || crd == nil || seen[crd.Name] || s.heldBy(d) == nil || s.crdDeleting(d) {
			continue
		}
		seen[crd.Name] = true
		uid := d.UID
		if crdDef := s.definition(cluster.ResourceCRDs, crd.Name); crdDef != nil {
			uid = crdDef.UID
		}
		sv := s.servedBy(d)
		restore := sv.p != nil && sv.active != nil
		if !restore && !orphan {
			s.heldRepairs.left = append(s.heldRepairs.left, notInstalled(sv, crd))
			continue
		}
		objs, err := c.HeldObjects(ctx, crd)
		if err != nil {
			s.heldRepairs.left = append(s.heldRepairs.left, fmt.Sprintf("CRD %s: %s", crd.Name, exit.Message(err)))
			continue
		}
		if why := otherFinalizers(objs); why != "" {
			s.heldRepairs.left = append(s.heldRepairs.left, fmt.Sprintf("CRD %s: %s, which doctor does not remove: the controller that added it does; once it has, doctor --fix repairs the rest", crd.Name, why))
			continue
		}
		s.heldRepairs.repairs = append(s.heldRepairs.repairs, heldRepair{held: Held{CRD: crd, CRDUID: uid}, objects: objs, restore: restore})
	}
}

// notInstalled says why a deletion is left alone: the package that serves
// the kind is not installed (or runs no revision), and the two ways out.
func notInstalled(sv server, crd *cluster.CRD) string {
	pkg := cmp.Or(sv.pkg, "the provider that serves "+kindOf(crd))
	state := "is not installed"
	if sv.p != nil {
		state = "has no active revision"
	}
	return fmt.Sprintf("CRD %s: %s %s, so doctor --fix changes nothing here. Two ways out: install %s again (kubectl xpkg install with --force: its plan's definition-deleting finding is this deletion; give it a DeploymentRuntimeConfig of replicas: 0 until the repair is done, so that its controller cannot delete what the objects manage first) and run kubectl xpkg doctor --fix, which makes every %s again under its external name once the package manager has made the CRD again; or kubectl xpkg doctor --fix --orphan-external-resources, which lists every external resource it leaves unmanaged and lets the deletion finish",
		crd.Name, pkg, state, pkg, crd.Kind)
}

// otherFinalizers names a finalizer, other than ManagedFinalizer, that
// holds a held object ("" when none does).
func otherFinalizers(objs []*unstructured.Unstructured) string {
	for _, u := range objs {
		for _, f := range u.GetFinalizers() {
			if f != ManagedFinalizer {
				return fmt.Sprintf("%s is held also by the finalizer %s", displayName(u), f)
			}
		}
	}
	return ""
}

func displayName(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return u.GetNamespace() + "/" + u.GetName()
	}
	return u.GetName()
}

// RepairLeft says, for each deletion the repair leaves alone, why and
// the ways out.
func (s *State) RepairLeft() []string { return s.heldRepairs.left }

// heldSteps: for each definition, the finalizer of each object removed
// (whose deletion then lets the definition's finish), then, to restore,
// the definition waited for until the package manager has made it again,
// and each object made again.
func (s *State) heldSteps() []RepairStep {
	var out []RepairStep
	for _, hr := range s.heldRepairs.repairs {
		for _, u := range hr.objects {
			h := hr.held
			h.Object = u
			msg := fmt.Sprintf("remove %s from %s %s (external name %s)%s", ManagedFinalizer, hr.held.CRD.Kind, displayName(u), ExternalName(u), deletedSince(u))
			if !hr.restore {
				msg += ": what it manages is left in place, unmanaged"
			}
			out = append(out, RepairStep{Rule: findings.RuleDefinitionTerminating, Action: RepairRemoveFinalizer, Object: HeldName(hr.held.CRD, u), UID: string(u.GetUID()), Held: &h, Message: msg})
		}
		if !hr.restore {
			continue
		}
		out = append(out, RepairStep{Rule: findings.RuleDefinitionTerminating, Action: RepairAwaitDefinition, Object: "customresourcedefinition/" + hr.held.CRD.Name, UID: hr.held.CRDUID, Held: &hr.held,
			Message: fmt.Sprintf("wait until CRD %s is gone and the package manager has made it again", hr.held.CRD.Name)})
		for _, u := range hr.objects {
			h := hr.held
			h.Object = u
			out = append(out, RepairStep{Rule: findings.RuleDefinitionTerminating, Action: RepairRecreate, Object: HeldName(hr.held.CRD, u), UID: string(u.GetUID()), Held: &h,
				Message: fmt.Sprintf("make %s %s again from the backup, with external name %s%s", hr.held.CRD.Kind, displayName(u), ExternalName(u), policies(u))})
		}
	}
	return out
}

func deletedSince(u *unstructured.Unstructured) string {
	if t := u.GetDeletionTimestamp(); t != nil {
		return ", deleted since " + t.UTC().Format(time.RFC3339)
	}
	return ", not being deleted yet (the CRD's deletion deletes it)"
}

// HeldName names an object of crd's kind as kubectl does.
func HeldName(crd *cluster.CRD, u *unstructured.Unstructured) string {
	return crd.Name + "/" + displayName(u)
}

// ExternalName is u's external name, or says it has none.
func ExternalName(u *unstructured.Unstructured) string {
	if n := u.GetAnnotations()[ExternalNameAnnotation]; n != "" {
		return n
	}
	return "none: its provider had not named what it manages"
}

// policies names the object's deletion and management policies, when set.
func policies(u *unstructured.Unstructured) string {
	var out []string
	if p, ok, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy"); ok {
		out = append(out, "deletionPolicy "+p)
	}
	if p, ok, _ := unstructured.NestedStringSlice(u.Object, "spec", "managementPolicies"); ok {
		out = append(out, "managementPolicies ["+strings.Join(p, ", ")+"]")
	}
	if len(out) == 0 {
		return ""
	}
	return ", " + strings.Join(out, ", ")
}

// Orphaning lists the external resources an orphaning repair leaves
// unmanaged: KIND NAME (external name X).
func (s *State) Orphaning() []string {
	var out []string
	for _, hr := range s.heldRepairs.repairs {
		if hr.restore {
			continue
		}
		for _, u := range hr.objects {
			out = append(out, fmt.Sprintf("%s %s (external name %s)", hr.held.CRD.Kind, displayName(u), ExternalName(u)))
		}
	}
	return slices.Clip(out)
}
