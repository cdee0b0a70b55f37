package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// The repair of a definition whose deletion objects of its kind hold:
// those objects read whole, their finalizer removed, the definition
// waited for until it is made again, and the objects made again from
// what was read.

// HeldObjects reads every object of crd's kind whole, with one paged
// list: what the repair saves before it changes anything.
func (c *Cluster) HeldObjects(ctx context.Context, crd *CRD) ([]*unstructured.Unstructured, error) {
	gvr, ok := servedGVR(crd)
	if !ok {
		return nil, nil
	}
	objs, err := c.ListResource(ctx, gvr)
	if err != nil {
		return nil, fmt.Errorf("list the objects of CRD %s: %w", crd.Name, err)
	}
	return objs, nil
}

// ServedGVR is where crd's objects are read: its storage version when
// served, else the first it serves.
func ServedGVR(crd *CRD) (schema.GroupVersionResource, bool) { return servedGVR(crd) }

// RemoveFinalizer removes finalizer f from the object of crd's kind
// called ns/name with UID uid: a JSON patch whose tests are the UID and
// the finalizer at its index. gone reports the object already went (its
// finalizer removed by someone else, which is what the step wanted); an
// object made again under the name is a ChangedError.
func (c *Cluster) RemoveFinalizer(ctx context.Context, crd *CRD, ns, name, uid, f string, dryRun bool) (gone bool, err error) {
	gvr, ok := servedGVR(crd)
	if !ok {
		return false, fmt.Errorf("CRD %s serves no version", crd.Name)
	}
	rc := c.dyn.Resource(gvr).Namespace(ns)
	what := objectName(crd, ns, name)
	err = retryOnConflict(ctx, patchRetry, func() error {
		u, err := rc.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			gone = true
			return nil
		case err != nil:
			return fmt.Errorf("read %s: %w", what, err)
		case string(u.GetUID()) != uid:
			return &ChangedError{Package: what, Replaced: true}
		}
		i := slices.Index(u.GetFinalizers(), f)
		if i < 0 {
			// Removed by its controller meanwhile: the object goes, or
			// another finalizer keeps it, which the repair's wait tells.
			return nil
		}
		at := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch, err := json.Marshal([]map[string]any{
			{"op": "test", "path": "/metadata/uid", "value": uid},
			{"op": "test", "path": at, "value": f},
			{"op": "remove", "path": at},
		})
		if err != nil {
			return err
		}
		_, err = rc.Patch(ctx, name, types.JSONPatchType, patch, patchOptions(dryRun))
		switch {
		case apierrors.IsNotFound(err):
			gone = true
			return nil
		case apierrors.IsInvalid(err):
			return apierrors.NewConflict(gvr.GroupResource(), name, err)
		}
		return unanswered(err, "removal of the finalizer of "+what, what)
	})
	return gone, err
}

// objectName names an object of crd's kind as kubectl does:
// PLURAL.GROUP/[NAMESPACE/]NAME.
func objectName(crd *CRD, ns, name string) string {
	if ns != "" {
		name = ns + "/" + name
	}
	return crd.Name + "/" + name
}

// Remade is the state of a definition being waited for: Gone while the
// CRD read is the one that was being deleted (or none is there yet).
type Remade struct {
	// Made: a CRD of the name exists, not the old one, not being deleted,
	// and Established.
	Made bool
	// UID is the CRD's, when one exists; Why says what is waited for.
	UID string
	Why string
	CRD *CRD
}

// DefinitionRemade reads the CRD called name and says whether it was
// made again since the one with UID oldUID.
func (c *Cluster) DefinitionRemade(ctx context.Context, name, oldUID string) (Remade, error) {
	u, err := c.DefinitionObject(ctx, ResourceCRDs, name)
	if err != nil || u == nil {
		return Remade{Why: "it is gone and not made again yet"}, err
	}
	d, err := toDefinition(u)
	if err != nil {
		return Remade{}, err
	}
	r := Remade{UID: d.Metadata.UID}
	established := slices.ContainsFunc(d.conditions(), func(c installed.Condition) bool { return c.Type == "Established" && c.Status == "True" })
	switch {
	case r.UID == oldUID:
		r.Why = "the old one is still being deleted"
	case d.Metadata.DeletionTimestamp != nil:
		r.Why = "the one made again is being deleted"
	case !established:
		r.Why = "the one made again is not established yet"
	default:
		r.Made, r.CRD = true, crdOf(d)
	}
	return r, nil
}

// CreateObject makes u, an object of crd's kind, at the version u names
// (which crd must still serve). An object of its name already there is
// returned with exists set, unchanged.
func (c *Cluster) CreateObject(ctx context.Context, crd *CRD, u *unstructured.Unstructured, dryRun bool) (made *unstructured.Unstructured, exists bool, err error) {
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		return nil, false, err
	}
	if gv.Group != crd.Group || !slices.Contains(crd.Served, gv.Version) {
		return nil, false, fmt.Errorf("CRD %s made again does not serve %s (it serves %v)", crd.Name, u.GetAPIVersion(), crd.Served)
	}
	rc := c.dyn.Resource(gv.WithResource(crd.Plural)).Namespace(u.GetNamespace())
	o := metav1.CreateOptions{FieldManager: FieldManager}
	if dryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	made, err = rc.Create(ctx, u, o)
	if apierrors.IsAlreadyExists(err) {
		now, gerr := rc.Get(ctx, u.GetName(), metav1.GetOptions{})
		if gerr != nil {
			return nil, false, fmt.Errorf("read %s: %w", objectName(crd, u.GetNamespace(), u.GetName()), gerr)
		}
		return now, true, nil
	}
	return made, false, unanswered(err, "creation of "+objectName(crd, u.GetNamespace(), u.GetName()), objectName(crd, u.GetNamespace(), u.GetName()))
}

// GetObject reads the object of crd's kind called ns/name; nil when
// there is none.
func (c *Cluster) GetObject(ctx context.Context, crd *CRD, ns, name string) (*unstructured.Unstructured, error) {
	gvr, ok := servedGVR(crd)
	if !ok {
		return nil, nil
	}
	u, err := c.dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// OwnerExists says whether the owner ref names (in namespace ns, for a
// namespaced owner) still exists with its UID: an object made again with
// a reference to an owner that is gone would be deleted by the garbage
// collector.
func (c *Cluster) OwnerExists(ctx context.Context, mapper meta.RESTMapper, ref metav1.OwnerReference, ns string) (bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, err
	}
	m, err := mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find the resource of %s %s: %w", ref.Kind, ref.Name, err)
	}
	rc := c.dyn.Resource(m.Resource)
	var u *unstructured.Unstructured
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		u, err = rc.Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	} else {
		u, err = rc.Get(ctx, ref.Name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s %s: %w", ref.Kind, ref.Name, err)
	}
	return u.GetUID() == ref.UID, nil
}
