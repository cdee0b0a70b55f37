package cluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestListObjectsAsTheDynamicClient: the single-decode list and get of a
// real API server give exactly the objects the dynamic client gives
// (integers as int64, managed fields kept), a list with and without a
// label selector; a get of nothing is NotFound.
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
	got, err := c.getObject(ctx, gvr, "list-objects-b")
	if err != nil {
		t.Fatal(err)
	}
	want, err := rc.Get(ctx, "list-objects-b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Object, want.Object) {
		t.Errorf("get\n got %v\nwant %v", got.Object, want.Object)
	}
	if _, err := c.getObject(ctx, gvr, "list-objects-none"); !apierrors.IsNotFound(err) {
		t.Errorf("get of nothing: %v, want NotFound", err)
	}
}

// warnings records the warnings a client hands to its handler.
type warnings []string

func (w *warnings) HandleWarningHeader(code int, agent, text string) { *w = append(*w, text) }

// TestListObjectsHandsOnWarnings: the server's warnings reach the
// configuration's warning handler, as they do through client-go's REST
// client.
func TestListObjectsHandsOnWarnings(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", `299 - "pkg.crossplane.io/v1 Provider is going away"`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"ProviderList","apiVersion":"pkg.crossplane.io/v1","items":[{"kind":"Provider","metadata":{"name":"p"}}]}`))
	}))
	defer srv.Close()
	var got warnings
	c := &Cluster{dialect: StaticDialect(), rest: &rest.Config{Host: srv.URL, WarningHandler: &got}}
	items, err := c.listObjects(context.Background(), "Provider", "")
	if err != nil || len(items) != 1 || items[0].GetName() != "p" {
		t.Fatalf("listObjects = %v, %v", items, err)
	}
	if len(got) != 1 || got[0] != "pkg.crossplane.io/v1 Provider is going away" {
		t.Errorf("warnings handed on: %q", got)
	}
}
