package action

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/teardown"
)

// TestUninstallWithResourcesOrdersByUsage: provider-stored serves
// Widgets; a ClusterUsage says w-user uses w-used. The teardown plans
// both, w-used after its user, and deletes them in that order, each once
// the one before is gone, before the provider. (The fake deletes at once
// and collects nothing: the provider's revisions stay, so the wait for
// the package times out, exit status 124, after every deletion.)
func TestUninstallWithResourcesOrdersByUsage(t *testing.T) {
	mrd := map[string]any{"apiVersion": "apiextensions.crossplane.io/v1alpha1", "kind": "ManagedResourceDefinition", "name": "widgets.stored.example.org"}
	widget := func(name string) *unstructured.Unstructured {
		return obj("stored.example.org/v1beta1", "Widget", name, map[string]any{"spec": map[string]any{"forProvider": map[string]any{}}})
	}
	usage := obj("protection.crossplane.io/v1beta1", "ClusterUsage", "user-uses-used", map[string]any{"spec": map[string]any{
		"of": map[string]any{"apiVersion": "stored.example.org/v1beta1", "kind": "Widget", "resourceRef": map[string]any{"name": "w-used"}},
		"by": map[string]any{"apiVersion": "stored.example.org/v1beta1", "kind": "Widget", "resourceRef": map[string]any{"name": "w-user"}}}})
	c, dyn := fakeClusterDyn(t,
		madeBy(installed.PackageManagerFieldManager, provider("provider-stored", provRepo+":v1.1.0", "provider-stored-bbb")),
		revision("provider-stored", "provider-stored-bbb", provRepo+":v1.1.0", 2, "Active", mrd),
		lock(map[string]any{"name": "provider-stored-bbb", "source": provRepo, "version": "v1.1.0"}),
		widgetsCRD(), withUID(widget("w-used"), "uid-used"), withUID(widget("w-user"), "uid-user"), usage)
	u := &Uninstall{Cluster: c, WithResources: teardown.ModeDelete}
	ctx := context.Background()
	up, err := u.Plan(ctx, []string{"provider-stored"})
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Teardown) != 1 {
		t.Fatalf("teardowns %v", up.Teardown)
	}
	lines := strings.Join(up.Teardown[0].Lines(), "\n")
	for _, want := range []string{"Teardown (--with-resources=delete): 2 managed resources, then provider/provider-stored",
		"w-used: deleted with it (deletionPolicy Delete, managementPolicies [*]); after its users (Widget w-user)",
		"w-user: deleted with it"} {
		if !strings.Contains(lines, want) {
			t.Errorf("plan does not say %q:\n%s", want, lines)
		}
	}
	if up.Blocking() {
		t.Errorf("live objects block the teardown: %+v", up.Findings)
	}
	dyn.ClearActions()
	err = u.Apply(ctx, up, UninstallOptions{Wait: 50 * time.Millisecond})
	if exit.Code(err) != exit.WaitTimedOut {
		t.Fatalf("exit %d: %v", exit.Code(err), err)
	}
	var deleted []string
	for _, a := range dyn.Actions() {
		if d, ok := a.(clienttesting.DeleteAction); ok {
			deleted = append(deleted, d.GetName())
		}
	}
	if got := strings.Join(deleted, " "); got != "w-user w-used provider-stored" {
		t.Errorf("deleted %s, want w-user, then w-used, then the provider", got)
	}
}
