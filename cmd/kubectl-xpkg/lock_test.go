package main

import (
	"context"
	"strings"
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
// holds back every package: a wait for a package that cannot become
// healthy because of it names the Lock and ends once the failure is one
// no retry gets past, instead of timing out blaming the package. (That
// get, describe and tree say so: plugin's TestStalledLockWarns, over a
// fake cluster.)
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
}

var configurationsGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "configurations"}

// TestUninstallWithDependenciesSaysWhatItLeft: the configuration does not
// go (a finalizer holds it): the wait for it ends at --wait, naming the
// finalizer, and the error names the dependency it left installed.
func TestUninstallWithDependenciesSaysWhatItLeft(t *testing.T) {
	l := newLifecycle(t)
	provRef, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	cfgRef, _ := pushSample(t, l.env, "configuration-aws-network", "v0.23.0")
	dep := pkgmanager.Dependency{Package: provRef[:strings.LastIndex(provRef, ":")], Constraints: ">=v0.2.0", Type: "Provider", Install: provRef, As: "left-nop"}
	l.mgr.Manage("left-nop", pkgmanager.Behaviour{})
	l.mgr.Manage("held-network", pkgmanager.Behaviour{DependsOn: []pkgmanager.Dependency{dep}})
	x := clitest.New(t).WithEnv(l.env)
	ctx := context.Background()
	setFinalizers := func(f []string) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			u, err := l.dyn.Resource(configurationsGVR).Get(ctx, "held-network", metav1.GetOptions{})
			if err != nil {
				return err
			}
			u.SetFinalizers(f)
			_, err = l.dyn.Resource(configurationsGVR).Update(ctx, u, metav1.UpdateOptions{})
			return err
		})
	}
	t.Cleanup(func() {
		_ = setFinalizers(nil)
		x.Run("uninstall", "configuration/held-network")
		x.Run("uninstall", "provider/left-nop")
	})
	x.Run("install", "configuration", cfgRef, "held-network", "--wait=60s").Succeeds(t)
	awaitHealthy(t, l.dyn, providersGVR, "left-nop")
	if err := setFinalizers([]string{"example.org/hold"}); err != nil {
		t.Fatal(err)
	}
	r := x.Run("uninstall", "configuration/held-network", "--with-dependencies", "--yes", "--wait=3s").Fails(t, 124)
	contains(t, "uninstall held by a finalizer", r.Stderr, "Waiting up to 3s for the packages to go before removing their dependencies",
		"configuration/held-network still exists (deleted ", "held by its finalizers example.org/hold)",
		"; the dependencies were left installed: provider/left-nop (uninstall them by name once the packages are gone)")
	if !l.providerExists(t, "left-nop") {
		t.Error("the dependency went though its dependent did not")
	}
}
