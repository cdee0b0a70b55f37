package testenv

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// TestQuietRemovesEveryPackageObject: packages, revisions, the Lock and
// ImageConfigs go, finalizers and all; other objects stay.
func TestQuietRemovesEveryPackageObject(t *testing.T) {
	obj := func(apiVersion, kind, name string, finalizers ...string) runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName(name)
		u.SetFinalizers(finalizers)
		return u
	}
	listKinds := map[schema.GroupVersionResource]string{}
	for _, gvr := range packageState {
		listKinds[gvr] = "List"
	}
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	listKinds[cm] = "ConfigMapList"
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds,
		obj("pkg.crossplane.io/v1", "Provider", "p", "delete.pkg.crossplane.io"),
		obj("pkg.crossplane.io/v1", "ProviderRevision", "p-abc"),
		obj("pkg.crossplane.io/v1", "Function", "f"),
		obj("pkg.crossplane.io/v1beta1", "Lock", "lock"),
		obj("pkg.crossplane.io/v1beta1", "ImageConfig", "mirror"),
		obj("v1", "ConfigMap", "kept"),
	)
	ctx := context.Background()
	left, err := remaining(ctx, dyn)
	if err != nil || len(left) != 5 {
		t.Fatalf("before: %v, %v", left, err)
	}
	if err := quiet(ctx, dyn); err != nil {
		t.Fatal(err)
	}
	if left, err := remaining(ctx, dyn); err != nil || len(left) != 0 {
		t.Errorf("after: %v, %v", left, err)
	}
	if _, err := dyn.Resource(cm).Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Errorf("a ConfigMap was touched: %v", err)
	}
}
