package plugin

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

// TestStalledLockWarns: the Lock's Resolved=False, caused by another
// package, holds back every package: get, describe and tree say so. (That
// install --wait then ends naming the Lock: cmd/kubectl-xpkg's
// TestStalledLock, against an API server.)
func TestStalledLockWarns(t *testing.T) {
	const name, ref = "held-nop", "xpkg.example.org/cli/provider-nop:v0.2.1"
	const dag = "Error occurred during dependency resolution cannot build DAG: node xpkg.example.org/twin already exists"
	rev := pkgmanager.RevisionName(name, ref)
	const unhealthy = `Package revision health is "False" with message: cannot resolve package dependencies: cannot initialize dependency graph from the packages in the lock: node xpkg.example.org/twin already exists`
	since := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	revision := fakecluster.Object("pkg.crossplane.io/v1", "ProviderRevision", rev, map[string]any{
		"spec": map[string]any{"image": ref, "revision": int64(1), "desiredState": "Active"}})
	revision.SetLabels(map[string]string{"pkg.crossplane.io/package": name})
	x := newCLI(t,
		fakecluster.Object("pkg.crossplane.io/v1", "Provider", name, map[string]any{
			"spec": map[string]any{"package": ref},
			"status": map[string]any{"currentRevision": rev, "currentIdentifier": ref, "conditions": []any{
				map[string]any{"type": "Installed", "status": "True", "reason": "ActivePackageRevision", "lastTransitionTime": since},
				map[string]any{"type": "Healthy", "status": "False", "reason": "UnhealthyPackageRevision", "message": unhealthy, "lastTransitionTime": since},
			}}}),
		revision,
		fakecluster.Object("pkg.crossplane.io/v1beta1", "Lock", "lock", map[string]any{
			"packages": []any{map[string]any{"name": rev, "source": ref[:strings.LastIndex(ref, ":")], "version": "v0.2.1", "dependencies": []any{}}},
			"status": map[string]any{"conditions": []any{map[string]any{
				"type": "Resolved", "status": "False", "reason": "DependencyResolutionFailed", "message": dag, "lastTransitionTime": since}}}}))
	const warning = "the Lock is not resolved (DependencyResolutionFailed: cannot build DAG: node xpkg.example.org/twin already exists): Crossplane resolves no package's dependencies until it is"

	contains(t, "get", x.Run("get").Succeeds(t).Stderr, "Warning: "+warning)
	contains(t, "tree", x.Run("tree", name).Succeeds(t).Stderr, "Warning: "+warning)
	contains(t, "describe", x.Run("describe", "provider/"+name).Succeeds(t).Stdout, "Lock:               "+warning)
}
