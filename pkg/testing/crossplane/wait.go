package crossplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// The package kinds of pkg.crossplane.io/v1 and their revisions.
var (
	ProviderGVR              = pkgGVR("providers")
	ConfigurationGVR         = pkgGVR("configurations")
	FunctionGVR              = pkgGVR("functions")
	ProviderRevisionGVR      = pkgGVR("providerrevisions")
	ConfigurationRevisionGVR = pkgGVR("configurationrevisions")
	FunctionRevisionGVR      = pkgGVR("functionrevisions")
)

// LockGVR is where the Lock (a singleton named "lock") lists the active
// revision of every package and its dependencies.
var LockGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}

func pkgGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: resource}
}

// LabelPackage links a revision to the package it belongs to.
const LabelPackage = "pkg.crossplane.io/package"

// How often Eventually looks again, and how long one look may take.
const (
	pollInterval = 250 * time.Millisecond
	callTimeout  = 10 * time.Second
)

// Condition is the condition of type typ in an object's status, or nil.
func Condition(u *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// PackageReady says why a package is not Installed and Healthy for its
// current spec, or returns nil. Conditions written for an older generation,
// or a current revision of another image, do not count: right after a
// change they still report the old revision's health.
func PackageReady(u *unstructured.Unstructured) error {
	spec, _, _ := unstructured.NestedString(u.Object, "spec", "package")
	cur, _, _ := unstructured.NestedString(u.Object, "status", "currentIdentifier")
	if cur != spec {
		return fmt.Errorf("%s: current identifier %q, want %q", u.GetName(), cur, spec)
	}
	for _, typ := range []string{"Installed", "Healthy"} {
		c := Condition(u, typ)
		if c == nil {
			return fmt.Errorf("%s: no %s condition yet", u.GetName(), typ)
		}
		gen, _, _ := unstructured.NestedInt64(c, "observedGeneration")
		if c["status"] != "True" || gen != u.GetGeneration() {
			return fmt.Errorf("%s: %s=%v (generation %d of %d) %v: %v",
				u.GetName(), typ, c["status"], gen, u.GetGeneration(), c["reason"], c["message"])
		}
	}
	return nil
}

// WaitFor polls the named object until check returns nil, and returns the
// object; after timeout the error is check's last word. A missing object
// is passed to check as nil.
func WaitFor(ctx context.Context, ri dynamic.ResourceInterface, name string, timeout time.Duration,
	check func(*unstructured.Unstructured) error) (*unstructured.Unstructured, error) {
	var got *unstructured.Unstructured
	err := Eventually(ctx, timeout, func(ctx context.Context) error {
		u, err := ri.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			u = nil
		case err != nil:
			return err
		}
		got = u
		return check(u)
	})
	if err != nil {
		return got, fmt.Errorf("%s: %w", name, err)
	}
	return got, nil
}

// Eventually calls check until it returns nil; after timeout the error is
// check's last word. Each call gets callTimeout of its own, so that the
// last word is about the object, not about the deadline cutting a request.
func Eventually(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		err := check(cctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still, after %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %w", ctx.Err(), err)
		case <-time.After(pollInterval):
		}
	}
}

// Exists is a check for WaitFor that wants the object to exist.
func Exists(u *unstructured.Unstructured) error {
	if u == nil {
		return errors.New("not found")
	}
	return nil
}

// Gone is a check for WaitFor that wants the object deleted.
func Gone(u *unstructured.Unstructured) error {
	if u != nil {
		return fmt.Errorf("%s still exists (deletion requested: %v, finalizers %v)",
			u.GetName(), u.GetDeletionTimestamp() != nil, u.GetFinalizers())
	}
	return nil
}

// Ready is PackageReady as a check for WaitFor.
func Ready(u *unstructured.Unstructured) error {
	if u == nil {
		return errors.New("not found")
	}
	return PackageReady(u)
}

// runtimeKinds are what Crossplane makes in Namespace for a provider or
// function revision.
var runtimeKinds = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "secrets"},
}

// OwnedObjects lists the objects in Namespace that Crossplane made for a
// provider or function and that name one of owners (packages or revisions)
// in an ownerReference: what the garbage collector still has to delete
// once those are gone.
func OwnedObjects(ctx context.Context, dc dynamic.Interface, owners ...string) ([]string, error) {
	var out []string
	for _, gvr := range runtimeKinds {
		list, err := dc.Resource(gvr).Namespace(Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, o := range list.Items {
			for _, ref := range o.GetOwnerReferences() {
				if slices.Contains(owners, ref.Name) {
					out = append(out, gvr.Resource+"/"+o.GetName())
					break
				}
			}
		}
	}
	return out, nil
}
