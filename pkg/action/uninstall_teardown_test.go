package action

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/teardown"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
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

// TestUninstallWithResourcesRefusesAnotherPackagesComposites: a Widget of
// provider-stored is composed by XNet net-1, whose XRD configuration
// cfg-net made (its owner references, as the package manager sets them). Tearing down the provider alone would
// delete cfg-net's composite resource: a blocking finding naming it and
// the way out. Uninstalling both, the composite is part of the teardown.
func TestUninstallWithResourcesRefusesAnotherPackagesComposites(t *testing.T) {
	xnets := schema.GroupVersionResource{Group: "example.org", Version: "v1", Resource: "xnets"}
	xrds := schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1", Resource: "compositeresourcedefinitions"}
	mrd := map[string]any{"apiVersion": "apiextensions.crossplane.io/v1alpha1", "kind": "ManagedResourceDefinition", "name": "widgets.stored.example.org"}
	xrdRef := map[string]any{"apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositeResourceDefinition", "name": "xnets.example.org"}
	composed := obj("stored.example.org/v1beta1", "Widget", "w-composed", map[string]any{"spec": map[string]any{"forProvider": map[string]any{}}})
	yes := true
	composed.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "example.org/v1", Kind: "XNet", Name: "net-1", UID: "uid-net", Controller: &yes}})
	xrd := obj("apiextensions.crossplane.io/v1", "CompositeResourceDefinition", "xnets.example.org", map[string]any{"spec": map[string]any{"group": "example.org"}})
	no := false
	xrd.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "pkg.crossplane.io/v1", Kind: "ConfigurationRevision", Name: "cfg-net-aaa", UID: "uid-rev", Controller: &yes},
		{APIVersion: "pkg.crossplane.io/v1", Kind: "Configuration", Name: "cfg-net", UID: "uid-cfg", Controller: &no}})
	cfgRev := revision("cfg-net", "cfg-net-aaa", cfgRepo+":v1.0.0", 1, "Active", xrdRef)
	cfgRev.SetKind("ConfigurationRevision")
	f := fakecluster.NewWithLists(map[schema.GroupVersionResource]string{xnets: "XNetList", xrds: "CompositeResourceDefinitionList"},
		madeBy(installed.PackageManagerFieldManager, provider("provider-stored", provRepo+":v1.1.0", "provider-stored-bbb")),
		revision("provider-stored", "provider-stored-bbb", provRepo+":v1.1.0", 2, "Active", mrd),
		obj("pkg.crossplane.io/v1", "Configuration", "cfg-net", map[string]any{"spec": map[string]any{"package": cfgRepo + ":v1.0.0"}, "status": map[string]any{"currentRevision": "cfg-net-aaa"}}),
		cfgRev, xrd,
		lock(map[string]any{"name": "provider-stored-bbb", "source": provRepo, "version": "v1.1.0"}, map[string]any{"name": "cfg-net-aaa", "source": cfgRepo, "version": "v1.0.0", "type": "Configuration"}),
		widgetsCRD(), withUID(composed, "uid-composed"),
		withUID(obj("example.org/v1", "XNet", "net-1", map[string]any{"spec": map[string]any{"crossplane": map[string]any{}}}), "uid-net"))
	mapper := func() (meta.RESTMapper, error) {
		groups, err := restmapper.GetAPIGroupResources(f.Discovery)
		return restmapper.NewDiscoveryRESTMapper(groups), err
	}
	u := &Uninstall{Cluster: f.Cluster(), WithResources: teardown.ModeDelete, mapper: mapper}
	up, err := u.Plan(context.Background(), []string{"provider-stored"})
	if err != nil {
		t.Fatal(err)
	}
	refusal := "the teardown of provider/provider-stored would delete 1 composites of kind XNet.example.org, which configuration/cfg-net defines (they compose its managed resources, or claim what does): uninstall configuration/cfg-net --with-resources=delete first, or --force to delete them too"
	if fs := planFindings(up.Plan, findings.RuleLiveObjects); !slices.ContainsFunc(fs, func(f findings.Finding) bool { return f.Severity == findings.Blocking && f.Message == refusal }) {
		t.Errorf("no refusal %q in %+v", refusal, fs)
	}
	if lines := strings.Join(up.Teardown[0].Lines(), "\n"); !strings.Contains(lines, "XNet.example.org (1, composites, a kind configuration/cfg-net defines):") {
		t.Errorf("the plan does not say whose kind XNet is:\n%s", lines)
	}

	up, err = u.Plan(context.Background(), []string{"provider-stored", "configuration/cfg-net"})
	if err != nil {
		t.Fatal(err)
	}
	if fs := planFindings(up.Plan, findings.RuleLiveObjects); slices.ContainsFunc(fs, func(f findings.Finding) bool { return f.Severity == findings.Blocking }) {
		t.Errorf("uninstalling cfg-net too, still refused: %+v", fs)
	}
}
