package action

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

var (
	widgetsGVR   = schema.GroupVersionResource{Group: "stored.example.org", Version: "v1beta1", Resource: "widgets"}
	providersGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}
	locksGVR     = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}
)

// TestUninstallPlansAgainBeforeDeleting: a live object made after the
// plan was approved (at the prompt, say) stops the uninstall before
// anything is deleted; a package deleted and made again does too.
func TestUninstallPlansAgainBeforeDeleting(t *testing.T) {
	ctx := context.Background()
	c, dyn := storedClusterDyn(t, 0)
	u := &Uninstall{Cluster: c}
	up, err := u.Plan(ctx, []string{"configuration-stored", "provider-stored"})
	if err != nil || up.Blocking() {
		t.Fatalf("plan: %v, %+v", err, up.Findings)
	}
	if _, err := dyn.Resource(widgetsGVR).Create(ctx, obj("stored.example.org/v1beta1", "Widget", "late", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = u.Apply(ctx, up, UninstallOptions{})
	var ce *cluster.ChangedError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "a new finding: 1 object of kind Widget exists") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("Run: %v", err)
	}
	if _, err := c.Lookup(ctx, "provider-stored"); err != nil {
		t.Errorf("the provider was deleted after all: %v", err)
	}

	// Made again: another UID.
	c, dyn = storedClusterDyn(t, 0)
	u = &Uninstall{Cluster: c}
	if up, err = u.Plan(ctx, []string{"provider/provider-stored"}); err != nil {
		t.Fatal(err)
	}
	p, _ := dyn.Resource(providersGVR).Get(ctx, "provider-stored", metav1.GetOptions{})
	p.SetUID("another")
	if _, err := dyn.Resource(providersGVR).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := u.Apply(ctx, up, UninstallOptions{}); !errors.As(err, &ce) || !strings.Contains(err.Error(), "provider/provider-stored was deleted and made again") {
		t.Fatalf("Run after the package was made again: %v", err)
	}
}

// TestUninstallPlansTheDependenciesAgain: after the named packages are
// gone, their dependencies are planned again: an object of a dependency's
// kind made meanwhile stops their removal, and the error says what went.
func TestUninstallPlansTheDependenciesAgain(t *testing.T) {
	ctx := context.Background()
	c, dyn := storedClusterDyn(t, 0)
	// Someone makes a widget as the configuration goes; the package
	// manager drops it from the Lock.
	dyn.PrependReactor("delete", "configurations", func(clienttesting.Action) (bool, runtime.Object, error) {
		go func() {
			_, _ = dyn.Resource(widgetsGVR).Create(ctx, obj("stored.example.org/v1beta1", "Widget", "meanwhile", nil), metav1.CreateOptions{})
			l, _ := dyn.Resource(locksGVR).Get(ctx, "lock", metav1.GetOptions{})
			pkgs, _, _ := unstructured.NestedSlice(l.Object, "packages")
			_ = unstructured.SetNestedSlice(l.Object, pkgs[1:], "packages")
			_, _ = dyn.Resource(locksGVR).Update(ctx, l, metav1.UpdateOptions{})
		}()
		return false, nil, nil // the delete goes on
	})
	u := &Uninstall{Cluster: c, WithDependencies: true}
	up, err := u.Plan(ctx, []string{"configuration-stored"})
	if err != nil || up.Blocking() {
		t.Fatalf("plan: %v, %+v", err, up.Findings)
	}
	var deleted []string
	err = u.Apply(ctx, up, UninstallOptions{Wait: 20 * time.Second, Deleted: func(p *installed.Package) { deleted = append(deleted, p.KindName()) }})
	var ce *cluster.ChangedError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "configuration/configuration-stored went; nothing more was changed") {
		t.Fatalf("Run: %v", err)
	}
	if strings.Join(deleted, ",") != "configuration/configuration-stored" {
		t.Errorf("deleted %v", deleted)
	}
	if _, err := c.Lookup(ctx, "provider-stored"); err != nil {
		t.Errorf("the dependency was deleted after all: %v", err)
	}
}
