package fakecluster

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
)

// TestConnectsAsAServer: the plugin's clients over the fake discover the
// package API and read through the dynamic fake, whose requests read as
// an API server's log; -n overrides the context's namespace.
func TestConnectsAsAServer(t *testing.T) {
	f := New(Object("pkg.crossplane.io/v1", "Provider", "nop", map[string]any{"spec": map[string]any{"package": "r.example.org/nop:v1"}}))
	clients := cluster.NewClients(f)
	c, err := cluster.Connect(clients, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pkgs, err := c.List(ctx, "Provider", "")
	if err != nil || len(pkgs) != 1 || pkgs[0].Name != "nop" {
		t.Fatalf("List = %v, %v", pkgs, err)
	}
	if cfg, err := clients.RESTConfig(); cfg != nil || err != nil {
		t.Errorf("RESTConfig = %v, %v: want none", cfg, err)
	}
	if ns, explicit, _ := clients.Namespace(); ns != "default" || explicit {
		t.Errorf("namespace %q (explicit %v)", ns, explicit)
	}
	flag := "team"
	f.NamespaceFlag = &flag
	if ns, explicit, _ := clients.Namespace(); ns != "team" || !explicit {
		t.Errorf("-n team: namespace %q (explicit %v)", ns, explicit)
	}

	f.ClearRequests()
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	_, _ = f.Dynamic.Resource(secrets).Namespace("ns").Create(ctx, Object("v1", "Secret", "s", nil), metav1.CreateOptions{})
	_, _ = f.Dynamic.Resource(secrets).Namespace("ns").Get(ctx, "s", metav1.GetOptions{})
	_, _ = f.Dynamic.Resource(secrets).Namespace("ns").List(ctx, metav1.ListOptions{})
	_ = f.Dynamic.Resource(secrets).Namespace("ns").Delete(ctx, "s", metav1.DeleteOptions{})
	want := []string{"POST /api/v1/namespaces/ns/secrets", "GET /api/v1/namespaces/ns/secrets/s",
		"GET /api/v1/namespaces/ns/secrets", "DELETE /api/v1/namespaces/ns/secrets/s"}
	if got := f.Requests(); !slices.Equal(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
}
