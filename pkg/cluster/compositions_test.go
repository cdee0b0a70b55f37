package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

// TestCompositionsReadAsAStream: the Compositions come with one list
// request, each read for what it composes; a cluster that serves none
// answers 404, which is none and no error.
func TestCompositionsReadAsAStream(t *testing.T) {
	var requests []string
	serve := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.URL.Path+"?"+r.URL.RawQuery)
		if !serve {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
			return
		}
		var items []any
		for i := range 3 {
			items = append(items, map[string]any{
				"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
				"metadata": map[string]any{"name": fmt.Sprintf("c%d", i)},
				"spec": map[string]any{"mode": "Pipeline", "pipeline": []any{map[string]any{
					"step": "pt", "functionRef": map[string]any{"name": "function-patch-and-transform"},
					"input": map[string]any{"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": []any{
						map[string]any{"name": "b", "base": map[string]any{"apiVersion": "s3.aws.example.io/v1beta1", "kind": fmt.Sprintf("Bucket%d", i)}},
					}},
				}}},
			})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "CompositionList", "apiVersion": "apiextensions.crossplane.io/v1", "metadata": map[string]any{}, "items": items})
	}))
	t.Cleanup(srv.Close)
	c := &Cluster{rest: &rest.Config{Host: srv.URL}}
	got, err := c.Compositions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].Name != "c2" || fmt.Sprint(got[2].Composes) != "[Bucket2.s3.aws.example.io]" {
		t.Errorf("read %+v, want c0 to c2, c2 composing Bucket2.s3.aws.example.io", got)
	}
	if want := "/apis/apiextensions.crossplane.io/v1/compositions?limit=500"; len(requests) != 1 || requests[0] != want {
		t.Errorf("requests %q, want one: %s", requests, want)
	}
	serve = false
	if got, err := c.Compositions(context.Background()); err != nil || got != nil {
		t.Errorf("where none are served: %v, %v; want none, no error", got, err)
	}
}
