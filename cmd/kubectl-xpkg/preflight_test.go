package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

var crdsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// widgetsCRD is the CRD of provider-widgets: versions is "name:served:storage ...".
func widgetsCRD(versions ...[3]any) string {
	s := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.preflight.example.org
spec:
  group: preflight.example.org
  scope: Cluster
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  versions:
`
	for _, v := range versions {
		s += fmt.Sprintf("  - {name: %s, served: %v, storage: %v, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}\n", v[0], v[1], v[2])
	}
	return s
}

// pushWidgets pushes provider-widgets at tag with the CRD given.
func pushWidgets(t *testing.T, l *lifecycle, tag, crd string) string {
	t.Helper()
	reg := l.env.RequireRegistry(t)
	stream := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-widgets\n---\n" + crd
	img, err := fixture.Image([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/preflight/provider-widgets:" + tag
	if err := fixture.Push(ref, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestUpgradePreflightRefusesDroppingAStoredVersion: the cluster's CRD
// stores objects at v1alpha1 and v1beta1; the candidate drops v1alpha1.
func TestUpgradePreflightRefusesDroppingAStoredVersion(t *testing.T) {
	l := newLifecycle(t)
	v1 := widgetsCRD([3]any{"v1alpha1", true, false}, [3]any{"v1beta1", true, true})
	oldRef := pushWidgets(t, l, "v1.0.0", v1)
	newRef := pushWidgets(t, l, "v2.0.0", widgetsCRD([3]any{"v1beta1", true, true}, [3]any{"v1", true, false}))

	// The package manager's part: install the CRD the package holds, and
	// have objects stored at both versions (storage moved from v1alpha1).
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(v1), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := l.dyn.Resource(crdsGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.dyn.Resource(crdsGVR).Delete(ctx, crd.GetName(), metav1.DeleteOptions{}) })
	setStored(t, l, crd.GetName(), "v1alpha1", "v1beta1")

	const name = "preflight-widgets"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", oldRef, name, "--wait=60s").Succeeds(t)

	r := x.Run("upgrade", name, "v2.0.0").Fails(t, 3)
	contains(t, "refusal", r.Stderr,
		"BLOCKING CRD widgets.preflight.example.org stores objects at v1alpha1, which "+newRef+" no longer defines: migrate them to v1beta1 and remove v1alpha1 from the CRD's status.storedVersions",
		"[stored-version-dropped]",
		"error: upgrade of provider/"+name+" refused: CRD widgets.preflight.example.org stores objects at v1alpha1, which "+newRef+" no longer defines",
		"--force")
	if src := l.packageSource(t, name); src != oldRef {
		t.Fatalf("refused upgrade changed spec.package to %s", src)
	}

	r = x.Run("upgrade", name, "v2.0.0", "--dry-run").Fails(t, 3)
	contains(t, "dry-run plan", r.Stdout, "Plan: upgrade provider/"+name+" from "+oldRef+" to "+newRef, "1 blocking, 1 warning",
		"[stored-version-dropped]", "CustomResourceDefinition widgets.preflight.example.org: v1alpha1: version removed", "[breaking-change]")
	if src := l.packageSource(t, name); src != oldRef {
		t.Fatalf("--dry-run changed spec.package to %s", src)
	}

	// diff --installed reads the current revision's image; NEW may be a
	// bare version of the same repository.
	r = x.Run("diff", "--installed", "provider/"+name, "v2.0.0").Fails(t, 3)
	contains(t, "diff --installed", r.Stderr, "Reading registry "+oldRef, "Reading registry "+newRef)
	contains(t, "diff --installed", r.Stdout, "v1alpha1: version removed")
	x.Run("diff", "--installed", name, newRef, "--stat").Fails(t, 3)
	r = x.Run("diff", "--installed", "no-such-package", "v2.0.0").Fails(t, 2)
	contains(t, "missing package", r.Stderr, "no-such-package")

	r = x.Run("upgrade", name, "v2.0.0", "--skip-preflight").Succeeds(t)
	contains(t, "skip", r.Stdout, "provider/"+name+" upgraded from v1.0.0 to v2.0.0")
	if src := l.packageSource(t, name); src != newRef {
		t.Fatalf("spec.package after --skip-preflight: %s", src)
	}
}

// TestUpgradePreflightPassesWhatIsStillServed: with only v1beta1 stored,
// the same candidate is fine; its breaking change is a warning.
func TestUpgradePreflightPassesWhatIsStillServed(t *testing.T) {
	l := newLifecycle(t)
	oldRef := pushWidgets(t, l, "v1.1.0", widgetsCRD([3]any{"v1alpha1", true, false}, [3]any{"v1beta1", true, true}))
	pushWidgets(t, l, "v2.1.0", widgetsCRD([3]any{"v1beta1", true, true}, [3]any{"v1", true, false}))
	const name = "preflight-served"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", oldRef, name).Succeeds(t)
	// No CRD in the cluster: nothing is stored, nothing refused.
	r := x.Run("upgrade", name, "v2.1.0").Succeeds(t)
	contains(t, "plan", r.Stderr, "Plan: upgrade provider/"+name, "0 blocking, 1 warning",
		"WARNING  CustomResourceDefinition widgets.preflight.example.org: v1alpha1: version removed")
}

func (l *lifecycle) packageSource(t *testing.T, name string) string {
	t.Helper()
	u, err := l.dyn.Resource(providersGVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := unstructured.NestedString(u.Object, "spec", "package")
	return s
}
