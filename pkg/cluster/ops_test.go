package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestSetPackageNeverTakesACancelledPatchForSuccess: a PATCH that ends
// with the context (an interrupt, --request-timeout) is an error, also
// after conflicts; client-go's retry.RetryOnConflict returned nil for it,
// and the nil package read after it panicked.
func TestSetPackageNeverTakesACancelledPatchForSuccess(t *testing.T) {
	for name, errs := range map[string][]error{
		"cancelled":                {context.Canceled},
		"timed out":                {context.DeadlineExceeded},
		"cancelled after conflict": {apierrors.NewConflict(schema.GroupResource{Resource: "providers"}, "p", errors.New("changed")), context.Canceled},
	} {
		t.Run(name, func(t *testing.T) {
			prov := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
				"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"package": "r.example.org/p:v1"}}}
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}: "ProviderList"}, prov)
			patches := 0
			dyn.PrependReactor("patch", "providers", func(clienttesting.Action) (bool, runtime.Object, error) {
				err := errs[min(patches, len(errs)-1)]
				patches++
				return true, nil, err
			})
			c := NewCluster(dyn, StaticDialect(), "")
			p, err := c.Get(context.Background(), "Provider", "p")
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.SetPackage(context.Background(), p, "r.example.org/p:v2", false)
			if err == nil || got != nil {
				t.Fatalf("SetPackage returned %v, %v; want an error", got, err)
			}
			if last := errs[len(errs)-1]; !errors.Is(err, last) {
				t.Errorf("error %v, want %v", err, last)
			}
		})
	}
}

func TestWaitTimeoutSaysWholeSeconds(t *testing.T) {
	e := &WaitTimeoutError{What: "provider/p", After: 29999999950 * time.Nanosecond, Pending: []string{"Healthy"}}
	if got, want := e.Error(), "timed out after 30s waiting for provider/p: still pending: Healthy"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := Round(1500 * time.Microsecond); got != 2*time.Millisecond {
		t.Errorf("Round(1.5ms) = %s", got)
	}
}
