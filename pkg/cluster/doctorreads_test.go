package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
)

// ownedCRD is testCRD i with a uid and owner references: its provider and,
// as controller, a revision.
func ownedCRD(i int) map[string]any {
	crd := testCRD(i, 5000)
	meta := crd["metadata"].(map[string]any)
	meta["uid"] = fmt.Sprintf("uid-%d", i)
	meta["ownerReferences"] = []any{
		map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider", "name": "p", "uid": "u-p", "controller": false},
		map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "ProviderRevision", "name": "p-1", "uid": "u-p1", "controller": true},
	}
	return crd
}

// TestAllDefinitionsOverHTTP: every CRD comes through the stream with its
// uid, owners and versions and no schema, in one paged list; a cluster that
// serves no MRDs answers 404, which is no error.
func TestAllDefinitionsOverHTTP(t *testing.T) {
	var reqs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs = append(reqs, r.URL.Path+"?"+r.URL.RawQuery)
		if r.URL.Path != "/apis/apiextensions.k8s.io/v1/customresourcedefinitions" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
			return
		}
		items := []string{}
		for i := range 3 {
			items = append(items, mustJSON(t, ownedCRD(i)))
		}
		fmt.Fprintf(w, `{"kind":"CustomResourceDefinitionList","metadata":{"resourceVersion":"9"},"items":[%s]}`, strings.Join(items, ","))
	}))
	t.Cleanup(srv.Close)
	c := &Cluster{rest: &rest.Config{Host: srv.URL}}
	defs, err := c.AllCRDs(context.Background())
	if err != nil || len(defs) != 3 {
		t.Fatalf("read %d CRDs: %v", len(defs), err)
	}
	d := defs[1]
	if d.Resource != ResourceCRDs || d.Name != "kind0001s.big.example.org" || d.UID != "uid-1" || d.ResourceVersion != "101" ||
		!slices.Equal(d.Versions, []string{"v1alpha1", "v1beta1"}) || d.Storage != "v1beta1" || !slices.Equal(d.Stored, []string{"v1alpha1", "v1beta1"}) {
		t.Errorf("CRD read as %+v", d)
	}
	if len(d.Owners) != 2 || d.Owners[1].UID != "u-p1" || d.Owners[1].Controller == nil || !*d.Owners[1].Controller || *d.Owners[0].Controller {
		t.Errorf("owners %+v", d.Owners)
	}
	mrds, err := c.AllMRDs(context.Background())
	if err != nil || mrds != nil {
		t.Errorf("MRDs not served: %v, %v", mrds, err)
	}
	want := []string{"/apis/apiextensions.k8s.io/v1/customresourcedefinitions?limit=500", "/apis/apiextensions.crossplane.io/v1alpha1/managedresourcedefinitions?limit=500"}
	if !slices.Equal(reqs, want) {
		t.Errorf("requests %q", reqs)
	}
}

// TestRuntimeConfigsRead: the pinned and the Deployment's account names,
// with one list; none where the kind is not served.
func TestRuntimeConfigsRead(t *testing.T) {
	rc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "DeploymentRuntimeConfig",
		"metadata": map[string]any{"name": "shared"},
		"spec": map[string]any{"serviceAccountTemplate": map[string]any{"metadata": map[string]any{"name": "sa"}},
			"deploymentTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"serviceAccountName": "own"}}}}}}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{runtimeConfigGVR: "DeploymentRuntimeConfigList"}, rc)
	got, err := NewCluster(dyn, StaticDialect(), "").RuntimeConfigs(context.Background())
	if err != nil || len(got) != 1 || got[0] != (RuntimeConfig{Name: "shared", ServiceAccount: "sa", DeploymentServiceAccount: "own"}) {
		t.Errorf("read %+v, %v", got, err)
	}
	if got := verbs(dyn.Actions()); !slices.Equal(got, []string{"list deploymentruntimeconfigs"}) {
		t.Errorf("requests %v", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
