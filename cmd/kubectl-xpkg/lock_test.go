package main

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

var locksGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}

// setLockResolved writes the Lock's Resolved condition through its status
// subresource, as Crossplane's resolver does.
func (l *lifecycle) setLockResolved(t *testing.T, status, reason, message string, since time.Time) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := l.dyn.Resource(locksGVR).Get(ctx, "lock", metav1.GetOptions{})
		if err != nil {
			return err
		}
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
			"type": "Resolved", "status": status, "reason": reason, "message": message,
			"lastTransitionTime": since.UTC().Format(time.RFC3339),
		}}, "status", "conditions")
		_, err = l.dyn.Resource(locksGVR).UpdateStatus(ctx, u, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStalledLock: the Lock's Resolved=False, caused by another package,
// holds back every package. get, describe and tree say so; a wait for a
// package that cannot become healthy because of it names the Lock and
// ends once the failure is one no retry gets past, instead of timing out
// blaming the package.
func TestStalledLock(t *testing.T) {
	l := newLifecycle(t)
	ref, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
	const name = "held-nop"
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	// Make sure the Lock exists, then break it as a twin does.
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x.Run("install", "provider", ref, name, "--wait=60s").Succeeds(t)
	x.Run("uninstall", name, "--wait=60s").Succeeds(t)
	const dag = "Error occurred during dependency resolution cannot build DAG: node xpkg.example.org/twin already exists"
	l.setLockResolved(t, "False", "DependencyResolutionFailed", dag, time.Now().Add(-time.Minute))
	t.Cleanup(func() { l.setLockResolved(t, "True", "DependencyResolutionSucceeded", "", time.Now()) })
	const warning = "the Lock is not resolved (DependencyResolutionFailed: cannot build DAG: node xpkg.example.org/twin already exists): Crossplane resolves no package's dependencies until it is"

	// As Crossplane's revisions say it while the Lock is broken.
	l.mgr.Manage(name, pkgmanager.Behaviour{Unhealthy: true, Message: `Package revision health is "False" with message: cannot resolve package dependencies: cannot initialize dependency graph from the packages in the lock: node xpkg.example.org/twin already exists`})
	r := x.Run("install", "provider", ref, name, "--wait=5m").Fails(t, 1)
	contains(t, "install --wait", r.Stderr, "error: provider/"+name+" cannot become healthy: "+warning)
	contains(t, "get", x.Run("get").Succeeds(t).Stderr, "Warning: "+warning)
	contains(t, "tree", x.Run("tree", name).Succeeds(t).Stderr, "Warning: "+warning)
	contains(t, "describe", x.Run("describe", "provider/"+name).Succeeds(t).Stdout, "Lock:               "+warning)
}
