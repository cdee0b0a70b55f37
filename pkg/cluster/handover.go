package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// The writes that hand a package's objects from one package object to
// another (rename): each is a JSON patch whose first test is the object's
// UID, so that it lands on the object that was read and on no other made
// again under its name since.

// PausedAnnotation pauses the package manager's reconciliation of a
// package (crossplane-runtime's meta.AnnotationKeyReconciliationPaused).
const PausedAnnotation = installed.PausedAnnotation

// Deactivate sets a revision's desired state to Inactive: the package
// manager then removes it from the Lock, releases control of what it
// installed and stops its runtime.
func (c *Cluster) Deactivate(ctx context.Context, r *installed.Revision, dryRun bool) error {
	return c.setDesiredState(ctx, r, "Inactive", "deactivation", dryRun)
}

// SetPaused sets or removes a package's pause annotation: a paused
// package's revisions are neither made, activated nor deactivated by the
// package manager (the revisions themselves are reconciled). Metadata:
// the spec's generation, which names revisions from Crossplane v2.4, does
// not move.
func (c *Cluster) SetPaused(ctx context.Context, p *installed.Package, paused, dryRun bool) error {
	path := "/metadata/annotations/" + strings.ReplaceAll(PausedAnnotation, "/", "~1")
	return c.patchPackage(ctx, p, "change of the pause annotation of "+p.KindName(), dryRun, func(u *unstructured.Unstructured) []map[string]any {
		_, has := u.GetAnnotations()[PausedAnnotation]
		switch {
		case paused && u.GetAnnotations() == nil:
			return []map[string]any{{"op": "add", "path": "/metadata/annotations", "value": map[string]string{PausedAnnotation: "true"}}}
		case paused:
			return []map[string]any{{"op": "add", "path": path, "value": "true"}}
		case has:
			return []map[string]any{{"op": "remove", "path": path}}
		}
		return nil
	})
}

// SetOperation writes the record of the operation the package is in
// (installed.OperationAnnotation), or removes it when op is nil. Metadata
// only: the package manager makes no revision of it.
func (c *Cluster) SetOperation(ctx context.Context, p *installed.Package, op *installed.Operation) error {
	return c.patchPackage(ctx, p, "record of the operation on "+p.KindName(), false, recordOps(op))
}

// SetLockOperation writes the record of an operation that changes the
// Lock and what it names (doctor --fix) on the Lock, or removes it when op
// is nil; without a Lock there is nothing to record on. Metadata only: the
// package manager reads no annotation of it.
func (c *Cluster) SetLockOperation(ctx context.Context, op *installed.Operation) error {
	gvr, lockName, ok := c.dialect.LockResource()
	if !ok {
		return nil
	}
	if u, err := c.LockObject(ctx); err != nil || u == nil {
		return err // no Lock (yet): nothing to record on
	}
	return patchUID(ctx, c.dyn.Resource(gvr), gvr.GroupResource(), lockName, "", "lock/"+lockName, "record of the operation on the Lock", false, recordOps(op))
}

// recordOps are the patch operations that make an object's record of an
// operation op (none: remove it).
func recordOps(op *installed.Operation) func(*unstructured.Unstructured) []map[string]any {
	path := "/metadata/annotations/" + strings.ReplaceAll(installed.OperationAnnotation, "/", "~1")
	return func(u *unstructured.Unstructured) []map[string]any {
		now, has := u.GetAnnotations()[installed.OperationAnnotation]
		switch {
		case op == nil && has:
			return []map[string]any{{"op": "remove", "path": path}}
		case op == nil || now == op.String():
			return nil
		case u.GetAnnotations() == nil:
			return []map[string]any{{"op": "add", "path": "/metadata/annotations", "value": map[string]string{installed.OperationAnnotation: op.String()}}}
		}
		return []map[string]any{{"op": "add", "path": path, "value": op.String()}}
	}
}

// patchPackage sends the operations ops makes of the package as it is
// now (none: nothing to do), provided it is the package read.
func (c *Cluster) patchPackage(ctx context.Context, p *installed.Package, what string, dryRun bool, ops func(*unstructured.Unstructured) []map[string]any) error {
	rc, err := c.client(p.Kind)
	if err != nil {
		return err
	}
	gvr, _ := c.dialect.Resource(p.Kind)
	return patchUID(ctx, rc, gvr.GroupResource(), p.Name, string(p.Object.GetUID()), p.KindName(), what, dryRun, ops)
}

// Object reads a cluster-scoped object, nil when it is gone.
func (c *Cluster) Object(ctx context.Context, gvr schema.GroupVersionResource, name string) (*unstructured.Unstructured, error) {
	u, err := c.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", gvr.Resource, name, err)
	}
	return u, nil
}

// DemoteController makes the object's owner reference to ownerUID a plain
// owner reference, as a revision the package manager deactivates does
// with what it controls: the reference, and the garbage collector's hold
// on the object, stay. Nothing is sent when it is no controller.
func (c *Cluster) DemoteController(ctx context.Context, gvr schema.GroupVersionResource, name, uid, ownerUID string) error {
	what := gvr.Resource + "/" + name
	return patchUID(ctx, c.dyn.Resource(gvr), gvr.GroupResource(), name, uid, what, "release of "+what, false, func(u *unstructured.Unstructured) []map[string]any {
		for i, ref := range u.GetOwnerReferences() {
			if string(ref.UID) == ownerUID && ref.Controller != nil && *ref.Controller {
				at := fmt.Sprintf("/metadata/ownerReferences/%d", i)
				return []map[string]any{{"op": "test", "path": at + "/uid", "value": ownerUID}, {"op": "replace", "path": at + "/controller", "value": false}}
			}
		}
		return nil
	})
}

// AddOwner adds ref to the object's owner references, unless one to its
// UID is there: an object keeps living while any of its owners does.
func (c *Cluster) AddOwner(ctx context.Context, gvr schema.GroupVersionResource, name, uid string, ref metav1.OwnerReference) error {
	what := gvr.Resource + "/" + name
	return patchUID(ctx, c.dyn.Resource(gvr), gvr.GroupResource(), name, uid, what, "new owner of "+what, false, func(u *unstructured.Unstructured) []map[string]any {
		refs := u.GetOwnerReferences()
		for _, r := range refs {
			if r.UID == ref.UID {
				return nil
			}
		}
		if len(refs) == 0 {
			return []map[string]any{{"op": "add", "path": "/metadata/ownerReferences", "value": []metav1.OwnerReference{ref}}}
		}
		return []map[string]any{{"op": "add", "path": "/metadata/ownerReferences/-", "value": ref}}
	})
}

// patchUID reads the object, and sends the operations ops makes of it
// after a test of its UID (uid), reading again on a conflict or a failed
// test; an object gone or made again is a ChangedError.
func patchUID(ctx context.Context, rc dynamic.ResourceInterface, gr schema.GroupResource, name, uid, object, what string, dryRun bool,
	ops func(*unstructured.Unstructured) []map[string]any) error {
	return retryOnConflict(ctx, patchRetry, func() error {
		u, err := rc.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || err == nil && uid != "" && string(u.GetUID()) != uid {
			return &ChangedError{Package: object, Replaced: true}
		}
		if err != nil {
			return unanswered(err, what, object)
		}
		list := ops(u)
		if len(list) == 0 {
			return nil
		}
		patch, err := json.Marshal(append([]map[string]any{{"op": "test", "path": "/metadata/uid", "value": string(u.GetUID())}}, list...))
		if err != nil {
			return err
		}
		_, err = rc.Patch(ctx, name, types.JSONPatchType, patch, patchOptions(dryRun))
		if apierrors.IsInvalid(err) {
			// A test failed: the object changed since read.
			return apierrors.NewConflict(gr, name, err)
		}
		return unanswered(err, what, object)
	})
}

// RuntimeDeployments names the Deployments in namespace that any of
// owners (UIDs) owns: a revision's runtime, which its deactivation
// deletes.
func (c *Cluster) RuntimeDeployments(ctx context.Context, namespace string, owners map[string]bool) ([]string, error) {
	l, err := c.dyn.Resource(deploymentResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list deployments in %s: %w", namespace, err)
	}
	var out []string
	for _, d := range l.Items {
		for _, ref := range d.GetOwnerReferences() {
			if owners[string(ref.UID)] {
				out = append(out, d.GetName())
				break
			}
		}
	}
	return out, nil
}
