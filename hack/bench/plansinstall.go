package main

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// The package objects of the plans benchmark, written as Crossplane's
// package manager leaves them.

// Names and versions of the plans benchmark's packages: the package
// names are those Crossplane gives the repositories.
const (
	planProviderName = "bench-provider-plans"
	planProviderRepo = "bench/provider-plans"
	planConfigName   = "bench-configuration-plans"
	planConfigRepo   = "bench/configuration-plans"
	// planConstraint is the configuration's dependency on the provider:
	// it excludes v2.0.0.
	planConstraint = ">=v1.0.0 <v2.0.0"
)

var planVersions = [2]string{"v1.0.0", "v2.0.0"}

func ownerOf(u *unstructured.Unstructured, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Name: u.GetName(), UID: u.GetUID(), Controller: &controller}
}

// revisionName is the package manager's: the package name (cut at 50)
// and the image digest's first 12 hex digits.
func revisionName(pkg, digestHex string) string {
	return pkg[:min(len(pkg), 50)] + "-" + digestHex[:12]
}

func createPackage(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, kind, name, ref string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"package": ref},
	}}
	return dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{})
}

// setPackageRef points a package at another reference, as an upgrade does.
func setPackageRef(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, name, ref string) error {
	return editObject(ctx, dyn.Resource(gvr), name, false, func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedField(u.Object, ref, "spec", "package")
	})
}

// packageStatus says the package runs ref as revision rev, installed and
// healthy, for its present generation.
func packageStatus(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, name, ref, rev string) error {
	rc := dyn.Resource(gvr)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := rc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		gen := u.GetGeneration()
		u.Object["status"] = map[string]any{
			"currentRevision": rev, "currentIdentifier": ref,
			"conditions": []any{pkgCondition("Installed", "ActivePackageRevision", gen), pkgCondition("Healthy", "HealthyPackageRevision", gen)},
		}
		_, err = rc.UpdateStatus(ctx, u, metav1.UpdateOptions{})
		return err
	})
}

func pkgCondition(t, reason string, gen int64) map[string]any {
	return map[string]any{"type": t, "status": "True", "reason": reason, "observedGeneration": gen,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
}

// createRevision creates the revision number n of a package, active.
func createRevision(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, pkg *unstructured.Unstructured, name, image string, n int64) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": pkg.GetKind() + "Revision",
		"metadata": map[string]any{"name": name, "labels": map[string]any{packageLabel: pkg.GetName()}},
		"spec":     map[string]any{"image": image, "revision": n, "desiredState": "Active"},
	}}
	u.SetOwnerReferences([]metav1.OwnerReference{ownerOf(pkg, true)})
	return dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{})
}

// deactivate makes a revision inactive, as a newer one becomes active.
func deactivate(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, name string) error {
	rc := dyn.Resource(gvr)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := rc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(u.Object, "Inactive", "spec", "desiredState"); err != nil {
			return err
		}
		_, err = rc.Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
}

// revisionStatus lists the objects the revision installed and says it is
// healthy.
func revisionStatus(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, name string, refs []any) error {
	rc := dyn.Resource(gvr)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := rc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		u.Object["status"] = map[string]any{
			"objectRefs": refs,
			"conditions": []any{pkgCondition("Healthy", "HealthyPackageRevision", u.GetGeneration())},
		}
		_, err = rc.UpdateStatus(ctx, u, metav1.UpdateOptions{})
		return err
	})
}

func lockEntry(rev, source, version, kind string, deps ...any) map[string]any {
	return map[string]any{"name": rev, "source": source, "version": version, "type": kind, "dependencies": append([]any{}, deps...)}
}

// putLock records a revision in the Lock, replacing its package's earlier
// entry, creating the Lock if there is none.
func putLock(ctx context.Context, dyn dynamic.Interface, entry map[string]any) error {
	rc := dyn.Resource(locksGVR)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := rc.Get(ctx, "lock", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			u = &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "Lock",
				"metadata": map[string]any{"name": "lock"}, "packages": []any{entry},
			}}
			_, err = rc.Create(ctx, u, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		pkgs, _, _ := unstructured.NestedSlice(u.Object, "packages")
		out := []any{entry}
		for _, p := range pkgs {
			if m, _ := p.(map[string]any); m["source"] != entry["source"] {
				out = append(out, p)
			}
		}
		u.Object["packages"] = out
		_, err = rc.Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
}
