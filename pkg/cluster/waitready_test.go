package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

// TestWaitReadyReportsTheRevision: a package whose conditions say ready
// before its current revision reaches the watch is not ready yet: the
// wait ends only once it can report the revision installed.
func TestWaitReadyReportsTheRevision(t *testing.T) {
	const ref = "xpkg.example.org/acme/provider-x:v1.0.0"
	cond := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": "Ready", "observedGeneration": int64(1), "lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	p := fakecluster.Object("pkg.crossplane.io/v1", "Provider", "provider-x", map[string]any{
		"spec":   map[string]any{"package": ref},
		"status": map[string]any{"currentRevision": "provider-x-abc", "currentIdentifier": ref, "conditions": []any{cond("Installed"), cond("Healthy")}},
	})
	p.SetGeneration(1)
	lock := fakecluster.Object("pkg.crossplane.io/v1beta1", "Lock", "lock", map[string]any{
		"packages": []any{map[string]any{"name": "provider-x-abc", "type": "Provider", "source": "xpkg.example.org/acme/provider-x", "version": "v1.0.0", "dependencies": []any{}}},
	})
	f := fakecluster.New(p, lock)
	c := f.Cluster()

	var out bytes.Buffer
	err := c.WaitReady(context.Background(), "Provider", "provider-x", ref, 2*time.Second, &out)
	var te *cluster.WaitTimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "revision provider-x-abc") {
		t.Fatalf("wait without the revision: %v, want a time-out naming revision provider-x-abc\n%s", err, out.String())
	}

	rev := fakecluster.Object("pkg.crossplane.io/v1", "ProviderRevision", "provider-x-abc", map[string]any{
		"spec":   map[string]any{"image": ref, "desiredState": "Active", "revision": int64(1)},
		"status": map[string]any{"conditions": []any{cond("Healthy")}},
	})
	rev.SetLabels(map[string]string{"pkg.crossplane.io/package": "provider-x"})
	rev.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "pkg.crossplane.io/v1", Kind: "Provider", Name: "provider-x", Controller: ptr(true)}})
	gvr := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providerrevisions"}
	if _, err := f.Dynamic.Resource(gvr).Create(context.Background(), rev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := c.WaitReady(context.Background(), "Provider", "provider-x", ref, 2*time.Minute, &out); err != nil {
		t.Fatalf("wait with the revision: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "revision provider-x-abc (Active)") {
		t.Errorf("the wait did not report the revision:\n%s", out.String())
	}
}

func ptr[T any](v T) *T { return &v }

// TestWaitReadySkippingDependencies: a package whose revisions skip
// dependency resolution never enters the Lock (the package manager adds a
// revision to it only while resolving its dependencies): the wait ends
// when it is healthy, without the Lock.
func TestWaitReadySkippingDependencies(t *testing.T) {
	const ref = "xpkg.example.org/acme/configuration-x:v1.0.0"
	cond := map[string]any{"type": "Healthy", "status": "True", "reason": "HealthyPackageRevision", "observedGeneration": int64(1), "lastTransitionTime": "2026-01-01T00:00:00Z"}
	installed := map[string]any{"type": "Installed", "status": "True", "reason": "ActivePackageRevision", "observedGeneration": int64(1), "lastTransitionTime": "2026-01-01T00:00:00Z"}
	p := fakecluster.Object("pkg.crossplane.io/v1", "Configuration", "configuration-x", map[string]any{
		"spec":   map[string]any{"package": ref, "skipDependencyResolution": true},
		"status": map[string]any{"currentRevision": "configuration-x-abc", "currentIdentifier": ref, "conditions": []any{installed, cond}},
	})
	p.SetGeneration(1)
	rev := fakecluster.Object("pkg.crossplane.io/v1", "ConfigurationRevision", "configuration-x-abc", map[string]any{
		"spec":   map[string]any{"image": ref, "desiredState": "Active", "revision": int64(1), "skipDependencyResolution": true},
		"status": map[string]any{"conditions": []any{cond}},
	})
	rev.SetLabels(map[string]string{"pkg.crossplane.io/package": "configuration-x"})
	rev.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "pkg.crossplane.io/v1", Kind: "Configuration", Name: "configuration-x", Controller: ptr(true)}})
	var out bytes.Buffer
	if err := fakecluster.New(p, rev).Cluster().WaitReady(context.Background(), "Configuration", "configuration-x", ref, 2*time.Minute, &out); err != nil {
		t.Fatalf("wait: %v\n%s", err, out.String())
	}
}
