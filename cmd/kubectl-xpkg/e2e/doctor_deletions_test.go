package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

var (
	crdsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	nopGVR  = schema.GroupVersionResource{Group: "nop.crossplane.io", Version: "v1alpha1", Resource: "nopresources"}
)

const nopCRD = "nopresources.nop.crossplane.io"

// awaitCRD waits until the CRD called name satisfies ok (nil: it is gone).
func (c cluster) awaitCRD(name string, within time.Duration, ok func(*unstructured.Unstructured) bool) bool {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(time.Second) {
		u, err := c.dyn.Resource(crdsGVR).Get(context.Background(), name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if ok(nil) {
				return true
			}
		case err == nil:
			if ok(u) {
				return true
			}
		}
	}
	return false
}

func established(u *unstructured.Unstructured) bool { return conditionTrue(u, "Established") }

// conditionTrue: u's status condition of type typ is True.
func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}

// TestDoctorFindsTheTerminatingDefinition is crossplane#6268 on the real
// package manager and garbage collector: provider-nop deleted (as a prune
// would) while a NopResource carrying the managed-resource finalizer
// exists. The revision goes, the garbage collector deletes the CRD it
// owned, and the CRD stays Terminating, since no controller removes the
// finalizer (the stand-in Deployment runs no provider). doctor blocks
// (exit 3), naming the CRD, the object and its finalizer, and the
// provider as not installed. The test then removes the finalizer itself
// and waits for the CRD to go.
func TestDoctorFindsTheTerminatingDefinition(t *testing.T) {
	env, reg, c, x := start(t)
	const nop, held = "e2e-crossplane-contrib-provider-nop", "doctor-held"
	ctx := context.Background()
	unhold := []byte(`{"metadata":{"finalizers":null}}`)
	t.Cleanup(func() {
		_, _ = c.dyn.Resource(nopGVR).Patch(ctx, held, types.MergePatchType, unhold, metav1.PatchOptions{})
		_ = c.dyn.Resource(nopGVR).Delete(ctx, held, metav1.DeleteOptions{})
		clitest.New(t).WithEnv(env).Run("uninstall", "provider/"+nop, "--force", "--yes", "--wait=2m")
		if !c.awaitCRD(nopCRD, 3*time.Minute, func(u *unstructured.Unstructured) bool { return u == nil }) {
			t.Errorf("CRD %s is still there after the clean-up", nopCRD)
		}
	})

	x.Run("install", reg.Host+"/e2e/crossplane-contrib/provider-nop:v0.2.1", "--wait=5m").Succeeds(t)
	if !c.awaitCRD(nopCRD, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && established(u) }) {
		t.Fatalf("CRD %s is not established", nopCRD)
	}
	mr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nop.crossplane.io/v1alpha1", "kind": "NopResource",
		"metadata": map[string]any{"name": held, "finalizers": []any{"finalizer.managedresource.crossplane.io"}},
		"spec":     map[string]any{"forProvider": map[string]any{}}}}
	if _, err := c.dyn.Resource(nopGVR).Create(ctx, mr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	x.Kubectl("delete", "provider.pkg.crossplane.io", nop, "--wait=false").Succeeds(t)
	if !c.awaitCRD(nopCRD, 3*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && u.GetDeletionTimestamp() != nil }) {
		t.Fatalf("CRD %s is not being deleted 3m after its provider was", nopCRD)
	}

	r := x.Run("doctor").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s%s", r.Stdout, r.Stderr)
	contains(t, "doctor", r.Stdout, "BLOCKING CRD "+nopCRD+" has been deleting for ",
		"1 NopResource object(s) remain and hold it: "+held+" (finalizers: finalizer.managedresource.crossplane.io)",
		"kubectl xpkg doctor --fix --orphan-external-resources", "[definition-terminating]")
	// The garbage collector drops the gone revision's reference from the
	// CRD when it sees the MRD still standing; whether it does before the
	// MRD goes is a race. Either way the provider is said not to be
	// installed: by name while the reference stays, by the kind after.
	if strings.Contains(r.Stdout, "The MRD it was made from is gone") {
		contains(t, "doctor", r.Stdout, "the provider that served NopResource.nop.crossplane.io is not installed",
			"Install the provider that serves NopResource.nop.crossplane.io again")
	} else {
		contains(t, "doctor", r.Stdout, "Only the controller of provider/"+nop+" removes finalizer.managedresource.crossplane.io, and provider/"+nop+" is not installed",
			"Install provider/"+nop+" again")
	}

	// Orphaning, the second way out doctor names, lets the deletion end.
	if _, err := c.dyn.Resource(nopGVR).Patch(ctx, held, types.MergePatchType, unhold, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if !c.awaitCRD(nopCRD, 3*time.Minute, func(u *unstructured.Unstructured) bool { return u == nil }) {
		t.Fatalf("CRD %s is still there once its last object let go", nopCRD)
	}
	x.Run("doctor").Succeeds(t)
}
