package cluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
)

// ImageConfigs reads the cluster's ImageConfigs (pkg.crossplane.io/v1beta1,
// Crossplane v1.18 and later), in the order the API server lists them, as
// the package manager does; a cluster that serves none has none.
func (c *Cluster) ImageConfigs(ctx context.Context) ([]imageconfig.Config, error) {
	gvr, ok := c.dialect.API().Resource("ImageConfig")
	if !ok {
		return nil, nil
	}
	list, err := c.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("list ImageConfigs (pass --no-image-config to read packages without them): %w", err)
	}
	out := make([]imageconfig.Config, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, readImageConfig(&list.Items[i]))
	}
	return out, nil
}

func readImageConfig(u *unstructured.Unstructured) imageconfig.Config {
	c := imageconfig.Config{Name: u.GetName()}
	matches, _, _ := unstructured.NestedSlice(u.Object, "spec", "matchImages")
	for _, m := range matches {
		if mm, ok := m.(map[string]any); ok {
			if p, ok := mm["prefix"].(string); ok {
				c.Prefixes = append(c.Prefixes, p)
			}
		}
	}
	if rw, ok, _ := unstructured.NestedMap(u.Object, "spec", "rewriteImage"); ok && rw != nil {
		c.Rewrite = true
		c.RewritePrefix, _ = rw["prefix"].(string)
	}
	c.PullSecret, _, _ = unstructured.NestedString(u.Object, "spec", "registry", "authentication", "pullSecretRef", "name")
	if v, ok, _ := unstructured.NestedMap(u.Object, "spec", "verification"); ok && v != nil {
		c.Verify = true
	}
	return c
}
