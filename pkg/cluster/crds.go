package cluster

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// StoredVersions reads status.storedVersions of the named CRDs, all at
// once; CRDs that do not exist are left out.
func (c *Cluster) StoredVersions(ctx context.Context, names []string) (map[string][]string, error) {
	out := map[string][]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	sem := make(chan struct{}, 8)
	for i, name := range names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			u, err := c.dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				return
			case err != nil:
				errs[i] = fmt.Errorf("read CustomResourceDefinition %s: %w", name, err)
				return
			}
			stored, _, _ := unstructured.NestedStringSlice(u.Object, "status", "storedVersions")
			mu.Lock()
			out[name] = stored
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
