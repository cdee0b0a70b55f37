package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// packageState is every kind of object whose whole set a verb reads: the
// packages, their revisions, the Lock, and the ImageConfigs that decide
// where packages are read from.
var packageState = []schema.GroupVersionResource{
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"},
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "configurations"},
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "functions"},
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "providerrevisions"},
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "configurationrevisions"},
	{Group: "pkg.crossplane.io", Version: "v1", Resource: "functionrevisions"},
	{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"},
	{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "imageconfigs"},
}

// quietTimeout bounds the wait for the removals: generous, since it only
// runs out when something keeps an object alive.
const quietTimeout = 2 * time.Minute

// Quiet is the set-up of a test that reads cluster-wide package state
// (every package, the whole Lock, every ImageConfig): it removes what
// earlier tests of the same binary left (finalizers included, since no
// package manager is there to honour them) and waits until none of it is
// left, so the test sees only what it makes. The tests of one binary run
// one after another against its own environment (see Main), so nothing
// else writes while it runs. Not for an environment the real Crossplane
// reconciles: it would put objects back.
func (e *Env) Quiet(t testing.TB) {
	t.Helper()
	dyn, err := e.DynamicClient(ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), quietTimeout)
	defer cancel()
	if err := quiet(ctx, dyn); err != nil {
		t.Fatalf("testenv: the cluster did not become quiet for this test, which reads every package: %v", err)
	}
}

func quiet(ctx context.Context, dyn dynamic.Interface) error {
	unfinalize := types.MergePatchType
	for _, gvr := range packageState {
		rc := dyn.Resource(gvr)
		list, err := rc.List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue // a release that does not serve this kind
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", gvr.Resource, err)
		}
		for _, o := range list.Items {
			if len(o.GetFinalizers()) > 0 {
				_, err := rc.Patch(ctx, o.GetName(), unfinalize, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("remove the finalizers of %s %s: %w", gvr.Resource, o.GetName(), err)
				}
			}
			if err := rc.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete %s %s: %w", gvr.Resource, o.GetName(), err)
			}
		}
	}
	for tick := time.NewTicker(100 * time.Millisecond); ; {
		left, err := remaining(ctx, dyn)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			tick.Stop()
			return nil
		}
		select {
		case <-ctx.Done():
			tick.Stop()
			return fmt.Errorf("still there after %s: %s", quietTimeout, strings.Join(left, ", "))
		case <-tick.C:
		}
	}
}

// remaining names the package state still in the cluster.
func remaining(ctx context.Context, dyn dynamic.Interface) ([]string, error) {
	var left []string
	for _, gvr := range packageState {
		list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", gvr.Resource, err)
		}
		for _, o := range list.Items {
			left = append(left, gvr.Resource+"/"+o.GetName())
		}
	}
	return left, nil
}
