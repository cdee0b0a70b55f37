package pkgmanager

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// TestGateHoldsTheAnswerBack: a package whose Behaviour has a Gate is
// answered once the gate is closed, and not before.
func TestGateHoldsTheAnswerBack(t *testing.T) {
	lists := map[schema.GroupVersionResource]string{lockGVR: "LockList"}
	for _, kind := range []string{"Provider", "Configuration", "Function"} {
		lists[resource(kind)] = kind + "List"
		lists[resource(kind+"Revision")] = kind + "RevisionList"
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists)
	m, err := Start(dyn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	gate := make(chan struct{})
	m.Manage("p", Behaviour{Gate: gate})
	const image = "xpkg.example.org/org/provider-p:v1.0.0"
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Provider",
		"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"package": image}}}
	if _, err := dyn.Resource(resource("Provider")).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	current := func() string {
		got, err := dyn.Resource(resource("Provider")).Get(ctx, "p", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s, _, _ := unstructured.NestedString(got.Object, "status", "currentIdentifier")
		return s
	}
	// Held: nothing answered yet. (An answer that came despite the gate
	// could still be on its way: this can only pass falsely.)
	time.Sleep(100 * time.Millisecond)
	if s := current(); s != "" {
		t.Fatalf("answered (%s) before the gate opened", s)
	}
	close(gate)
	for deadline := time.Now().Add(time.Minute); current() != image; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not answered once the gate opened")
		}
	}
}
