package cluster

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The writes of uninstall --with-resources: objects of any kind deleted
// exactly as read, and a managed resource's policies set so that what it
// manages is kept.

// ListResource reads every object of gvr whole, in every namespace, with
// one paged list; none, with no error, where the API server does not
// serve it.
func (c *Cluster) ListResource(ctx context.Context, gvr schema.GroupVersionResource) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts := metav1.ListOptions{Limit: listPage}
	for {
		l, err := c.dyn.Resource(gvr).List(ctx, opts)
		switch {
		case apierrors.IsNotFound(err):
			return out, nil
		case err != nil:
			return nil, fmt.Errorf("list %s: %w", gvr.GroupResource(), err)
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// DeleteObject deletes the object of gvr called ns/name if it is still the
// one with UID uid (a precondition): gone already is no error; another
// object under its name is a ChangedError.
func (c *Cluster) DeleteObject(ctx context.Context, gvr schema.GroupVersionResource, ns, name, uid string, dryRun bool) error {
	u := types.UID(uid)
	o := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &u}}
	if dryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	err := c.dyn.Resource(gvr).Namespace(ns).Delete(ctx, name, o)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return &ChangedError{Package: gvr.Resource + "/" + name, Replaced: true}
	}
	return unanswered(err, "deletion of "+gvr.Resource+"/"+name, gvr.Resource+"/"+name)
}

// SetPolicies sets a managed resource's spec.deletionPolicy (when
// deletion is not "") and spec.managementPolicies (when management is not
// nil) on the object read (u): a JSON patch whose tests are its UID and
// resourceVersion. A conflict (its controller wrote its status since) is
// read again and sent again while the object is the one read with the
// policies read; else a ChangedError.
func (c *Cluster) SetPolicies(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, deletion string, management []string, dryRun bool) (*unstructured.Unstructured, error) {
	rc := c.dyn.Resource(gvr).Namespace(u.GetNamespace())
	what := gvr.Resource + "/" + u.GetName()
	wantDel, _, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy")
	wantMgmt, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "managementPolicies")
	now := u
	var patched *unstructured.Unstructured
	err := retryOnConflict(ctx, patchRetry, func() error {
		if now == nil {
			fresh, err := rc.Get(ctx, u.GetName(), metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("read %s: %w", what, err)
			}
			del, _, _ := unstructured.NestedString(fresh.Object, "spec", "deletionPolicy")
			mgmt, _, _ := unstructured.NestedStringSlice(fresh.Object, "spec", "managementPolicies")
			if fresh.GetUID() != u.GetUID() || del != wantDel || fmt.Sprint(mgmt) != fmt.Sprint(wantMgmt) {
				return &ChangedError{Package: what, What: "its policies or identity changed since it was read", Action: "uninstall"}
			}
			now = fresh
		}
		ops := []map[string]any{
			{"op": "test", "path": "/metadata/uid", "value": string(now.GetUID())},
			{"op": "test", "path": "/metadata/resourceVersion", "value": now.GetResourceVersion()},
		}
		if deletion != "" {
			ops = append(ops, map[string]any{"op": "add", "path": "/spec/deletionPolicy", "value": deletion})
		}
		if management != nil {
			ops = append(ops, map[string]any{"op": "add", "path": "/spec/managementPolicies", "value": management})
		}
		patch, err := json.Marshal(ops)
		if err != nil {
			return err
		}
		patched, err = rc.Patch(ctx, u.GetName(), types.JSONPatchType, patch, patchOptions(dryRun))
		if apierrors.IsInvalid(err) || apierrors.IsConflict(err) {
			now = nil // read again
			return apierrors.NewConflict(gvr.GroupResource(), u.GetName(), err)
		}
		return unanswered(err, "change of the policies of "+what, what)
	})
	return patched, err
}

// GetResource reads the object of gvr called ns/name; nil when there is
// none.
func (c *Cluster) GetResource(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	u, err := c.dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}
