package action

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// inventory finds what the old package's revisions installed: the objects
// their status.objectRefs name, and every CRD and MRD that names one of
// them as owner (objectRefs can be lost, and the package manager releases
// only what they name). The CRDs among them, and those the MRDs define,
// are what the rename counts live objects of.
func (r *Rename) inventory(ctx context.Context, c *cluster.Cluster, s *diagnose.State, rp *RenamePlan) error {
	revUIDs, current := map[string]bool{}, map[string]bool{}
	for _, rev := range rp.revs {
		revUIDs[rev.UID()] = true
		if rev.Name == rp.old.CurrentRevision {
			current[rev.UID()] = true
		}
	}
	defs := s.Definitions()
	seen := map[string]bool{}
	for i := range defs {
		d := &defs[i]
		owned, controlled := ownedBy(d.Owners, revUIDs)
		if !owned {
			continue
		}
		// What the current revision owns is what it controlled before a
		// rename cut short released it.
		ofCurrent, _ := ownedBy(d.Owners, current)
		controlled = controlled || ofCurrent
		gvr, err := cluster.DefinitionGVR(d.Resource)
		if err != nil {
			return err
		}
		o := ownedObject{name: diagnose.DefinitionObject(d.Resource, d.Name), gvr: gvr, obj: d.Name, uid: d.UID, controlled: controlled, crd: d.CRD}
		seen[o.name] = true
		rp.objects = append(rp.objects, o)
	}
	if err := r.recorded(ctx, c, rp, revUIDs, current, seen); err != nil {
		return err
	}
	for _, o := range rp.objects {
		if o.crd != nil {
			rp.counted = append(rp.counted, o.crd)
		}
	}
	// The CRDs an installed object defines (an MRD's, an XRD's): their
	// definition owns them, and keeps them.
	defined := map[string]bool{}
	for _, o := range rp.objects {
		defined[o.uid] = true
	}
	for i := range defs {
		d := &defs[i]
		if owned, _ := ownedBy(d.Owners, defined); owned && d.CRD != nil && !defined[d.UID] {
			rp.counted = append(rp.counted, d.CRD)
		}
	}
	slices.SortFunc(rp.objects, func(a, b ownedObject) int { return strings.Compare(a.name, b.name) })
	for _, o := range rp.objects {
		rp.Objects = append(rp.Objects, o.name)
	}
	return nil
}

// recorded adds the objects the revisions' objectRefs name that are no
// CRD or MRD (XRDs, Compositions, webhook configurations...), read one
// by one.
func (r *Rename) recorded(ctx context.Context, c *cluster.Cluster, rp *RenamePlan, revUIDs, current, seen map[string]bool) error {
	for _, rev := range rp.revs {
		for _, ref := range rev.Objects {
			name := strings.ToLower(ref.Kind) + "/" + ref.Name
			if seen[name] {
				continue
			}
			seen[name] = true
			gvr, err := r.resource(ref)
			if err != nil {
				return fmt.Errorf("plan the rename of %s: %s recorded in revision %s: %w", rp.Package, name, rev.Name, err)
			}
			u, err := c.Object(ctx, gvr, ref.Name)
			if err != nil {
				return fmt.Errorf("plan the rename of %s: %w", rp.Package, err)
			}
			if u == nil {
				continue // gone: nothing to keep
			}
			_, controlled := ownedBy(u.GetOwnerReferences(), revUIDs)
			ofCurrent, _ := ownedBy(u.GetOwnerReferences(), current)
			controlled = controlled || ofCurrent
			rp.objects = append(rp.objects, ownedObject{name: name, gvr: gvr, obj: ref.Name, uid: string(u.GetUID()), controlled: controlled})
		}
	}
	return nil
}

// resource maps a recorded object's kind to its resource.
func (r *Rename) resource(ref installed.ObjectRef) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	m, err := r.cfg.apiClients().Mapper()
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	mapping, err := m.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return mapping.Resource, nil
}

// ownedBy says whether one of uids owns the object, and whether it
// controls it.
func ownedBy(owners []metav1.OwnerReference, uids map[string]bool) (owned, controlled bool) {
	for _, o := range owners {
		if uids[string(o.UID)] {
			owned = true
			controlled = controlled || o.Controller != nil && *o.Controller
		}
	}
	return owned, controlled
}

// objectNow is an inventoried object as it is now.
type objectNow struct {
	uid    string
	owners []metav1.OwnerReference
}

// controller names the object's controller ("" for none).
func (o objectNow) controller() string {
	for _, r := range o.owners {
		if r.Controller != nil && *r.Controller {
			return r.Name
		}
	}
	return ""
}

// objectsNow reads the inventoried objects as they are now, by name
// (kind/name; a gone one is absent): the CRDs and the MRDs with one list
// each, which is what the waits read every second (a provider of 2,000
// CRDs would otherwise cost 2,000 requests a second), the others one GET
// each.
func (h *handOver) objectsNow(ctx context.Context) (map[string]objectNow, error) {
	out := map[string]objectNow{}
	listed := map[string]bool{}
	for _, o := range h.rp.objects {
		res := o.gvr.Resource
		switch {
		case res == cluster.ResourceCRDs || res == cluster.ResourceMRDs:
			if listed[res] {
				continue
			}
			listed[res] = true
			if err := h.listDefinitions(ctx, res, out); err != nil {
				return nil, err
			}
		default:
			u, err := h.c.Object(ctx, o.gvr, o.obj)
			if err != nil {
				return nil, err
			}
			if u != nil {
				out[o.name] = objectNow{uid: string(u.GetUID()), owners: u.GetOwnerReferences()}
			}
		}
	}
	return out, nil
}

// listDefinitions adds every CRD or MRD (res) to out.
func (h *handOver) listDefinitions(ctx context.Context, res string, out map[string]objectNow) error {
	list := h.c.AllCRDs
	if res == cluster.ResourceMRDs {
		list = h.c.AllMRDs
	}
	defs, err := list(ctx)
	if err != nil {
		return err
	}
	for _, d := range defs {
		out[diagnose.DefinitionObject(d.Resource, d.Name)] = objectNow{uid: d.UID, owners: d.Owners}
	}
	return nil
}
