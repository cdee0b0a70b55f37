package cluster

import (
	"context"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestListObjectsAsTheDynamicClient: the single-decode list of a real API
// server gives exactly the objects the dynamic client gives (integers as
// int64, managed fields kept), with and without a label selector.
func TestListObjectsAsTheDynamicClient(t *testing.T) {
	env := testenv.Get(t)
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &env.Kubeconfig
	cache := t.TempDir()
	flags.CacheDir = &cache
	c, err := Connect(NewClients(flags), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.rest == nil {
		t.Fatal("no REST configuration: the single-decode path is not taken")
	}
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}
	rc := c.dyn.Resource(gvr)
	for _, name := range []string{"list-objects-a", "list-objects-b"} {
		p := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"list-objects": name}},
			"spec":     map[string]any{"package": "xpkg.example.org/p:v1", "revisionHistoryLimit": int64(3)}}}
		if _, err := rc.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rc.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	for _, selector := range []string{"list-objects", "list-objects=list-objects-b"} {
		got, err := c.listObjects(ctx, "Provider", selector)
		if err != nil {
			t.Fatal(err)
		}
		want, err := rc.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || len(got) != len(want.Items) {
			t.Fatalf("selector %q: %d objects, the dynamic client %d", selector, len(got), len(want.Items))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i].Object, want.Items[i].Object) {
				t.Errorf("selector %q: object %d\n got %v\nwant %v", selector, i, got[i].Object, want.Items[i].Object)
			}
		}
		if n, _, _ := unstructured.NestedInt64(got[0].Object, "spec", "revisionHistoryLimit"); n != 3 {
			t.Errorf("revisionHistoryLimit = %d, want the int64 3", n)
		}
		if len(got[0].GetManagedFields()) == 0 {
			t.Error("managed fields lost")
		}
	}
}
