package e2e

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// TestReinstallOverADefinitionBeingDeleted is issue 43's route on the real
// package manager: provider-nop deleted while a NopResource exists, whose
// finalizer only the gone provider would remove. The garbage collector
// deletes the CRD, which stays Terminating. Installing the provider again
// is refused by its plan (exit 3, naming the CRD); with --force, --wait
// does not call the definition established: it fails (exit 124) saying
// the CRD is being deleted and that one NopResource holds it; get and
// describe show it Terminating. The test then lets the deletion finish
// and uninstalls, leaving the cluster as found.
func TestReinstallOverADefinitionBeingDeleted(t *testing.T) {
	env, reg, c, x := start(t)
	const (
		nop  = "e2e-crossplane-contrib-provider-nop"
		held = "held-by-its-finalizer"
	)
	ref := reg.Host + "/e2e/crossplane-contrib/provider-nop:v0.2.1"
	ctx := context.Background()
	t.Cleanup(func() {
		// The finalizer removed, the deletion finishes; then the package
		// goes, and its CRD with it.
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := c.dyn.Resource(nopGVR).Patch(ctx, held, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("remove the finalizer of %s: %v", held, err)
		}
		if !c.awaitCRD(nopCRD, 3*time.Minute, func(u *unstructured.Unstructured) bool { return u == nil || u.GetDeletionTimestamp() == nil }) {
			t.Errorf("CRD %s is still being deleted once its last object let go", nopCRD)
		}
		clitest.New(t).WithEnv(env).Run("uninstall", "provider/"+nop, "--force", "--yes", "--wait=2m")
		if !c.awaitCRD(nopCRD, 3*time.Minute, func(u *unstructured.Unstructured) bool { return u == nil }) {
			t.Errorf("CRD %s is still there after the clean-up", nopCRD)
		}
	})

	x.Run("install", ref, "--wait=5m").Succeeds(t)
	if !c.awaitCRD(nopCRD, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && established(u) }) {
		t.Fatalf("CRD %s is not established", nopCRD)
	}
	nr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nop.crossplane.io/v1alpha1", "kind": "NopResource",
		"metadata": map[string]any{"name": held, "finalizers": []any{"finalizer.managedresource.crossplane.io"}},
		"spec":     map[string]any{"forProvider": map[string]any{}}}}
	if _, err := c.dyn.Resource(nopGVR).Create(ctx, nr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The garbage collector deletes what the provider's revision owned.
	x.Kubectl("delete", "provider.pkg.crossplane.io", nop, "--timeout=3m").Succeeds(t)
	if !c.awaitCRD(nopCRD, 3*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && u.GetDeletionTimestamp() != nil }) {
		t.Fatalf("CRD %s is not being deleted 3m after its provider was", nopCRD)
	}

	r := x.Run("install", ref).Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg install %s\n%s%s", ref, r.Stderr, r.Stdout)
	contains(t, "install", r.Stderr, "BLOCKING CRD "+nopCRD+", which "+ref+" defines, is being deleted (since ", "[definition-deleting]",
		"the API server refuses every object of kind NopResource meanwhile; let the deletion finish first")
	c.gone("providers", nop)

	r = x.Run("install", ref, "--force", "--wait=1m").Fails(t, 124)
	t.Logf("transcript:\n$ kubectl xpkg install %s --force --wait=1m\n%s%s", ref, r.Stderr, r.Stdout)
	contains(t, "install --force --wait", r.Stderr, " is being deleted (since ",
		"1 object of kind NopResource still exists, held by its finalizers; kubectl xpkg doctor says what holds it")

	get := x.Run("get", "provider", nop).Succeeds(t)
	desc := x.Run("describe", "provider/"+nop).Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg get provider %s\n%s$ kubectl xpkg describe provider/%s\n%s", nop, get.Stdout, nop, desc.Stdout)
	if row := wideRow(t, get.Stdout, nop); row["HEALTHY"] != "Terminating" {
		t.Errorf("get shows HEALTHY %q, want Terminating", row["HEALTHY"])
	}
	contains(t, "describe", desc.Stdout, "State:              not healthy: its CRD "+nopCRD+" is being deleted (since ")
}
