package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRD is what a plan needs of a CustomResourceDefinition in the cluster.
type CRD struct {
	Name       string
	Group      string
	Plural     string
	Kind       string
	Namespaced bool
	// Served are the versions the API server serves; Storage the one it
	// writes; Stored every version objects may still be stored at
	// (status.storedVersions).
	Served  []string
	Storage string
	Stored  []string
}

// CRDs reads the named CRDs, all at once; CRDs that do not exist are
// left out.
func (c *Cluster) CRDs(ctx context.Context, names []string) (map[string]*CRD, error) {
	out := map[string]*CRD{}
	var mu sync.Mutex
	err := forEach(len(names), func(i int) error {
		u, err := c.dyn.Resource(crdResource).Get(ctx, names[i], metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("read CustomResourceDefinition %s: %w", names[i], err)
		}
		crd := readCRD(u)
		mu.Lock()
		out[crd.Name] = crd
		mu.Unlock()
		return nil
	})
	return out, err
}

func readCRD(u *unstructured.Unstructured) *CRD {
	crd := &CRD{Name: u.GetName()}
	crd.Group, _, _ = unstructured.NestedString(u.Object, "spec", "group")
	crd.Plural, _, _ = unstructured.NestedString(u.Object, "spec", "names", "plural")
	crd.Kind, _, _ = unstructured.NestedString(u.Object, "spec", "names", "kind")
	scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
	crd.Namespaced = scope == "Namespaced"
	crd.Stored, _, _ = unstructured.NestedStringSlice(u.Object, "status", "storedVersions")
	vs, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	for _, v := range vs {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); served {
			crd.Served = append(crd.Served, name)
		}
		if storage, _ := m["storage"].(bool); storage {
			crd.Storage = name
		}
	}
	return crd
}

// ObjectCount is how many objects of a kind exist.
type ObjectCount struct {
	N int64
	// AtLeast is set when the API server gave no total, only that there
	// are more than N.
	AtLeast bool
}

// CountObjects counts the objects of a CRD's kind in every namespace with
// one LIST of at most one object: the API server reports how many remain.
func (c *Cluster) CountObjects(ctx context.Context, crd *CRD) (ObjectCount, error) {
	if len(crd.Served) == 0 {
		return ObjectCount{}, nil // nothing can be read, nor written
	}
	version := crd.Storage
	if !slices.Contains(crd.Served, version) {
		version = crd.Served[0]
	}
	gvr := schema.GroupVersionResource{Group: crd.Group, Version: version, Resource: crd.Plural}
	l, err := c.dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsNotFound(err) {
		return ObjectCount{}, nil
	}
	if err != nil {
		return ObjectCount{}, fmt.Errorf("count %s: %w", crd.Name, err)
	}
	n := ObjectCount{N: int64(len(l.Items))}
	if rest := l.GetRemainingItemCount(); rest != nil {
		n.N += *rest
	} else if l.GetContinue() != "" {
		n.AtLeast = true
	}
	return n, nil
}

// forEach runs f for 0..n-1, eight at a time, and returns the first error.
func forEach(n int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

var deploymentResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// CrossplaneVersion finds the running Crossplane's version the way an
// operator would: the Deployment "crossplane" in its namespace, by its
// app.kubernetes.io/version label (Crossplane's Helm chart sets it), else
// by its image's tag. "" when there is no such Deployment or it cannot be
// read.
func (c *Cluster) CrossplaneVersion(ctx context.Context, namespace string) string {
	u, err := c.dyn.Resource(deploymentResource).Namespace(namespace).Get(ctx, "crossplane", metav1.GetOptions{})
	if err != nil {
		return ""
	}
	if v := u.GetLabels()["app.kubernetes.io/version"]; v != "" {
		return v
	}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	for _, ct := range containers {
		m, _ := ct.(map[string]any)
		if image, _ := m["image"].(string); image != "" {
			return RefVersion(image)
		}
	}
	return ""
}
