package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The legacy claims of the stages tests: a v1 XRD (Crossplane v2 serves
// it as a LegacyCluster one) of cluster-scoped XLegacyNets with claims,
// namespaced LegacyNets.
var (
	xrdV1GVR   = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1", Resource: "compositeresourcedefinitions"}
	xlegacyGVR = schema.GroupVersionResource{Group: "e2e.example.org", Version: "v1alpha1", Resource: "xlegacynets"}
	claimGVR   = schema.GroupVersionResource{Group: "e2e.example.org", Version: "v1alpha1", Resource: "legacynets"}
)

const (
	xlegacyCRD = "xlegacynets.e2e.example.org"
	claimCRD   = "legacynets.e2e.example.org"
	claimNS    = "default"
)

// setUpLegacyClaim applies the v1 XRD, waits for its two CRDs, creates
// the LegacyNet name in the default namespace and waits until
// Crossplane's claim controller has made its XLegacyNet and bound the two
// (the claim's spec.resourceRef names the composite, whose spec.claimRef
// names the claim). No Composition: the composite never becomes Ready.
// Its clean-up (run before the provider's) deletes what is left of both,
// and the XRD, and waits for the CRDs to go.
func setUpLegacyClaim(t *testing.T, c cluster, name string) (claim, xr *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	xrd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositeResourceDefinition",
		"metadata": map[string]any{"name": xlegacyCRD},
		"spec": map[string]any{
			"group":      "e2e.example.org",
			"names":      map[string]any{"kind": "XLegacyNet", "plural": "xlegacynets"},
			"claimNames": map[string]any{"kind": "LegacyNet", "plural": "legacynets"},
			"versions":   sizeVersions(),
		},
	}}
	if _, err := c.dyn.Resource(xrdV1GVR).Create(ctx, xrd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the XRD %s: %v", xlegacyCRD, err)
	}
	t.Cleanup(func() {
		c.releaseIn(t, claimGVR, claimNS)
		c.release(t, xlegacyGVR)
		if err := c.dyn.Resource(xrdV1GVR).Delete(context.Background(), xlegacyCRD, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("clean-up: delete the XRD %s: %v", xlegacyCRD, err)
		}
		for _, crd := range []string{claimCRD, xlegacyCRD} {
			if !c.awaitCRD(crd, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u == nil }) {
				t.Errorf("clean-up: CRD %s is still there 2m after its XRD was deleted", crd)
			}
		}
	})
	for _, crd := range []string{xlegacyCRD, claimCRD} {
		if !c.awaitCRD(crd, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && established(u) }) {
			t.Fatalf("the XRD's CRD %s is not established after 2m", crd)
		}
	}
	cl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "e2e.example.org/v1alpha1", "kind": "LegacyNet",
		"metadata": map[string]any{"name": name, "namespace": claimNS}, "spec": map[string]any{"size": "small"},
	}}
	// The kind may take a moment to be served once the CRD is established.
	if err := waitFor(time.Minute, func() error {
		_, err := c.dyn.Resource(claimGVR).Namespace(claimNS).Create(ctx, cl, metav1.CreateOptions{})
		return err
	}); err != nil {
		t.Fatalf("create LegacyNet %s: %v", name, err)
	}
	if err := waitFor(2*time.Minute, func() error {
		var err error
		if claim, err = c.dyn.Resource(claimGVR).Namespace(claimNS).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		ref, _, _ := unstructured.NestedString(claim.Object, "spec", "resourceRef", "name")
		if ref == "" {
			return errors.New("the claim has no spec.resourceRef")
		}
		if xr, err = c.dyn.Resource(xlegacyGVR).Get(ctx, ref, metav1.GetOptions{}); err != nil {
			return err
		}
		if cr, _, _ := unstructured.NestedStringMap(xr.Object, "spec", "claimRef"); cr["name"] != name || cr["namespace"] != claimNS {
			return fmt.Errorf("the composite %s has spec.claimRef %v", ref, cr)
		}
		return nil
	}); err != nil {
		t.Fatalf("LegacyNet %s is not bound to its composite after 2m: %v", name, err)
	}
	return claim, xr
}
