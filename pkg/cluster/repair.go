package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// The repairs doctor makes: each changes exactly the object it read, and
// refuses (a ChangedError, exit status 4) when that object changed in a
// way that matters since.

// LockObject reads the Lock as it is stored, nil when there is none.
func (c *Cluster) LockObject(ctx context.Context) (*unstructured.Unstructured, error) {
	gvr, name, ok := c.dialect.LockResource()
	if !ok {
		return nil, nil
	}
	u, err := c.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the Lock: %w", err)
	}
	return u, nil
}

// Revision reads a revision of kind (ProviderRevision, …) as it is
// stored, nil when it is gone.
func (c *Cluster) Revision(ctx context.Context, kind, name string) (*unstructured.Unstructured, error) {
	rc, err := c.revisionClient(kind)
	if err != nil {
		return nil, err
	}
	u, err := rc.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", kind, name, err)
	}
	return u, nil
}

func (c *Cluster) revisionClient(kind string) (resourceClient, error) {
	gvr, err := c.dialect.Resource(kind)
	if err != nil {
		return nil, err
	}
	return c.dyn.Resource(gvr), nil
}

// resourceClient is the part of a dynamic client a repair uses.
type resourceClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error)
}

// DeleteRevisionExactly deletes the revision as it was read: its UID and
// resourceVersion are preconditions. The package manager writes a
// revision's status at any time, which moves its resourceVersion: a
// conflict is read again and the deletion sent again while the revision
// is the one read with the spec read (its generation), else it is a
// ChangedError.
func (c *Cluster) DeleteRevisionExactly(ctx context.Context, r *installed.Revision, dryRun bool) error {
	rc, err := c.revisionClient(r.Kind)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%s %s", r.Kind, r.Name)
	return deleteExactly(ctx, rc, r.Object, what, dryRun, func(now *unstructured.Unstructured, readErr, _ error) error {
		switch {
		case readErr != nil && !apierrors.IsNotFound(readErr):
			return fmt.Errorf("read %s again after a conflict: %w", what, readErr)
		case now == nil || now.GetUID() != r.Object.GetUID():
			return &ChangedError{Package: what, Replaced: true}
		case now.GetGeneration() != r.Object.GetGeneration():
			return &ChangedError{Package: what, Generations: [2]int64{r.Object.GetGeneration(), now.GetGeneration()}}
		}
		return nil
	})
}

// RemoveLockEntry removes the Lock's entry for the revision called name
// with source src, from the Lock with UID uid: a JSON patch whose tests
// are the Lock's UID and the entry, found again in the Lock as it is
// now (other entries come and go as revisions change). An entry no
// longer there, or a Lock made again, is a ChangedError.
func (c *Cluster) RemoveLockEntry(ctx context.Context, uid, name, src string, dryRun bool) error {
	gvr, lockName, ok := c.dialect.LockResource()
	if !ok {
		return errors.New("this cluster's package API has no Lock")
	}
	rc := c.dyn.Resource(gvr)
	return retryOnConflict(ctx, patchRetry, func() error {
		u, err := c.LockObject(ctx)
		if err != nil {
			return err
		}
		if u == nil || string(u.GetUID()) != uid {
			return &ChangedError{Package: "lock/" + lockName, Replaced: true}
		}
		i := lockEntryIndex(u, name, src)
		if i < 0 {
			return &ChangedError{Package: "lock/" + lockName, What: "its entry " + name + " is gone", Action: "repair"}
		}
		at := fmt.Sprintf("/packages/%d", i)
		patch, err := json.Marshal([]map[string]any{
			{"op": "test", "path": "/metadata/uid", "value": uid},
			{"op": "test", "path": at + "/name", "value": name},
			{"op": "test", "path": at + "/source", "value": src},
			{"op": "remove", "path": at},
		})
		if err != nil {
			return err
		}
		_, err = rc.Patch(ctx, lockName, types.JSONPatchType, patch, patchOptions(dryRun))
		if apierrors.IsInvalid(err) {
			// A test failed: the entry moved between the read and the
			// patch. Read again and try once more, as on a conflict.
			return apierrors.NewConflict(schema.GroupResource{Group: gvr.Group, Resource: gvr.Resource}, lockName, err)
		}
		return unanswered(err, "removal of the Lock's entry "+name, "lock/"+lockName)
	})
}

func lockEntryIndex(u *unstructured.Unstructured, name, src string) int {
	raw, _, _ := unstructured.NestedSlice(u.Object, "packages")
	for i, r := range raw {
		m, _ := r.(map[string]any)
		if m["name"] == name && m["source"] == src {
			return i
		}
	}
	return -1
}

// RemoveOwnerReference removes from the definition (resource is
// ResourceCRDs or ResourceMRDs) the owner reference to ownerUID: a JSON
// patch whose tests are the definition's UID and the reference at its
// index, found again in the definition as it is now.
func (c *Cluster) RemoveOwnerReference(ctx context.Context, resource, name, uid, ownerUID string, dryRun bool) error {
	gvr, err := DefinitionGVR(resource)
	if err != nil {
		return err
	}
	rc := c.dyn.Resource(gvr)
	what := gvr.Resource + "/" + name
	return retryOnConflict(ctx, patchRetry, func() error {
		u, err := rc.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return &ChangedError{Package: what, Replaced: true}
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", what, err)
		}
		if string(u.GetUID()) != uid {
			return &ChangedError{Package: what, Replaced: true}
		}
		i := -1
		for j, ref := range u.GetOwnerReferences() {
			if string(ref.UID) == ownerUID {
				i = j
			}
		}
		if i < 0 {
			return &ChangedError{Package: what, What: "its owner reference " + ownerUID + " is gone", Action: "repair"}
		}
		at := fmt.Sprintf("/metadata/ownerReferences/%d", i)
		patch, err := json.Marshal([]map[string]any{
			{"op": "test", "path": "/metadata/uid", "value": uid},
			{"op": "test", "path": at + "/uid", "value": ownerUID},
			{"op": "remove", "path": at},
		})
		if err != nil {
			return err
		}
		_, err = rc.Patch(ctx, name, types.JSONPatchType, patch, patchOptions(dryRun))
		if apierrors.IsInvalid(err) {
			return apierrors.NewConflict(gvr.GroupResource(), name, err)
		}
		return unanswered(err, "removal of an owner reference of "+what, what)
	})
}

// DefinitionObject reads a CRD or MRD (resource is ResourceCRDs or
// ResourceMRDs) as it is stored, nil when it is gone.
func (c *Cluster) DefinitionObject(ctx context.Context, resource, name string) (*unstructured.Unstructured, error) {
	gvr, err := DefinitionGVR(resource)
	if err != nil {
		return nil, err
	}
	u, err := c.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", gvr.Resource, name, err)
	}
	return u, nil
}

func patchOptions(dryRun bool) metav1.PatchOptions {
	o := metav1.PatchOptions{FieldManager: FieldManager}
	if dryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	return o
}

// DefinitionGVR is where definitions of resource (ResourceCRDs or
// ResourceMRDs) are served.
func DefinitionGVR(resource string) (schema.GroupVersionResource, error) {
	switch resource {
	case ResourceCRDs:
		return crdResource, nil
	case ResourceMRDs:
		return mrdGVR, nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("%s is no definition resource", resource)
}
