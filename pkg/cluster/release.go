package cluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ListCRDs reads the CRDs whose names keep accepts with one paged list of
// the cluster's CRDs, decoded a CRD at a time and without their schemas:
// its requests do not grow with the CRDs a cluster has, nor with how many
// are kept (CRDs reads a few by name instead).
func (c *Cluster) ListCRDs(ctx context.Context, keep func(name string) bool) (map[string]*CRD, error) {
	src, err := c.definitions()
	if err != nil {
		return nil, err
	}
	out := map[string]*CRD{}
	_, err = src.list(ctx, crdResource, func(d *definitionDoc) {
		if keep(d.Metadata.Name) {
			out[d.Metadata.Name] = crdOf(d)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list CustomResourceDefinitions: %w", err)
	}
	return out, nil
}

// RuntimeConfig is what doctor needs of a DeploymentRuntimeConfig.
type RuntimeConfig struct {
	Name string
	// ServiceAccount is spec.serviceAccountTemplate.metadata.name: the
	// ServiceAccount every revision that uses the config shares ("" when
	// each revision gets its own).
	ServiceAccount string
}

// runtimeConfigResource is where DeploymentRuntimeConfigs live in every
// Crossplane release that has them (v1.14 on).
var runtimeConfigResource = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "deploymentruntimeconfigs"}

// RuntimeConfigs reads the cluster's DeploymentRuntimeConfigs with one
// list; a cluster that serves none has none.
func (c *Cluster) RuntimeConfigs(ctx context.Context) ([]RuntimeConfig, error) {
	list, err := c.dyn.Resource(runtimeConfigResource).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("list DeploymentRuntimeConfigs: %w", err)
	}
	out := make([]RuntimeConfig, 0, len(list.Items))
	for i := range list.Items {
		u := &list.Items[i]
		sa, _, _ := unstructured.NestedString(u.Object, "spec", "serviceAccountTemplate", "metadata", "name")
		out = append(out, RuntimeConfig{Name: u.GetName(), ServiceAccount: sa})
	}
	return out, nil
}
