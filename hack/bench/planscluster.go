package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// What the plans benchmark writes as Crossplane's package manager would:
// CRDs owned by a revision, the revisions with their status.objectRefs,
// the packages' status, the Lock.

var (
	crdGVR            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	configurationsGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "configurations"}
	confRevisionsGVR  = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "configurationrevisions"}
	locksGVR          = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}
)

const (
	// crdWorkers is how many CRDs are written at once: the API server
	// validates and stores each, and shares the machine's cores.
	crdWorkers     = 8
	liveObjectName = "bench-live"
	// benchSetLabel marks the CRDs of one provider, for the watch of
	// their conditions.
	benchSetLabel = "bench.kubectl-xpkg.io/set"
)

// applyCRDs creates the CRDs, or replaces the spec of those that exist,
// owned by owners, crdWorkers at a time, and returns their references for
// a revision's status.objectRefs, in order.
func applyCRDs(ctx context.Context, dyn dynamic.Interface, crds []planCRD, set string, owners []metav1.OwnerReference) ([]any, error) {
	refs := make([]any, len(crds))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(crdWorkers)
	rc := dyn.Resource(crdGVR)
	for i, c := range crds {
		g.Go(func() error {
			m, err := c.object()
			if err != nil {
				return err
			}
			u := &unstructured.Unstructured{Object: m}
			u.SetLabels(map[string]string{benchSetLabel: set})
			u.SetOwnerReferences(owners)
			got, err := rc.Create(ctx, u, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				got, err = replaceSpec(ctx, rc, u)
			}
			if err != nil {
				return fmt.Errorf("write CRD %s: %w", u.GetName(), err)
			}
			refs[i] = map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": got.GetName(), "uid": string(got.GetUID())}
			return nil
		})
	}
	return refs, g.Wait()
}

// replaceSpec updates an existing object's spec, labels and owners to u's.
func replaceSpec(ctx context.Context, rc dynamic.ResourceInterface, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := rc.Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Object["spec"] = u.Object["spec"]
		cur.SetLabels(u.GetLabels())
		cur.SetOwnerReferences(u.GetOwnerReferences())
		out, err = rc.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	return out, err
}

// setStoredVersions writes a CRD's status.storedVersions, as objects
// stored at those versions over the CRD's life leave it.
func setStoredVersions(ctx context.Context, dyn dynamic.Interface, name string, versions ...string) error {
	return editObject(ctx, dyn.Resource(crdGVR), name, true, func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedStringSlice(u.Object, versions, "status", "storedVersions")
	})
}

// editObject reads an object, edits it and writes it back (its status,
// with status), again when another writer came in between.
func editObject(ctx context.Context, rc dynamic.ResourceInterface, name string, status bool, edit func(*unstructured.Unstructured) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := rc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := edit(u); err != nil {
			return err
		}
		if status {
			_, err = rc.UpdateStatus(ctx, u, metav1.UpdateOptions{})
		} else {
			_, err = rc.Update(ctx, u, metav1.UpdateOptions{})
		}
		return err
	})
}

// createLiveObject creates one object of the CRD's kind, at its storage
// version, with its required fields at their smallest.
func createLiveObject(ctx context.Context, dyn dynamic.Interface, c planCRD) error {
	m, err := c.object()
	if err != nil {
		return err
	}
	group, _ := nested(m, "spec", "group").(string)
	plural, _ := nested(m, "spec", "names", "plural").(string)
	kind, _ := nested(m, "spec", "names", "kind").(string)
	vs, _ := nested(m, "spec", "versions").([]any)
	i := slices.IndexFunc(vs, func(v any) bool { return nested(v.(map[string]any), "storage") == true })
	if i < 0 {
		return fmt.Errorf("CRD %s: no storage version", c.Name())
	}
	version, _ := nested(vs[i].(map[string]any), "name").(string)
	spec, _ := nested(vs[i].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec").(map[string]any)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/" + version, "kind": kind,
		"metadata": map[string]any{"name": liveObjectName},
		"spec":     minimal(spec),
	}}
	nri := dyn.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: plural})
	var ri dynamic.ResourceInterface = nri
	if nested(m, "spec", "scope") == "Namespaced" {
		ri = nri.Namespace("default")
	}
	if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create a %s: %w", kind, err)
	}
	return nil
}

// minimal is the smallest value a schema accepts as far as its type,
// required fields, enum and lower bounds say.
func minimal(s map[string]any) any {
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	switch s["type"] {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			p, _ := props[r.(string)].(map[string]any)
			out[r.(string)] = minimal(p)
		}
		return out
	case "array":
		item, _ := s["items"].(map[string]any)
		out := []any{}
		for range toInt(s["minItems"]) {
			out = append(out, minimal(item))
		}
		return out
	case "integer", "number":
		return toInt(s["minimum"])
	case "boolean":
		return false
	case "string":
		return strings.Repeat("b", max(1, int(toInt(s["minLength"]))))
	}
	return map[string]any{}
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	}
	return 0
}
