package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// The composite resource of the order test: a v2 XRD of a cluster-scoped
// XNet (a cluster-scoped managed resource may only be controlled by a
// cluster-scoped owner), and the ClusterUsage that orders two
// NopResources.
var (
	xrdGVR          = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v2", Resource: "compositeresourcedefinitions"}
	xnetGVR         = schema.GroupVersionResource{Group: "e2e.example.org", Version: "v1alpha1", Resource: "xnets"}
	clusterUsageGVR = schema.GroupVersionResource{Group: "protection.crossplane.io", Version: "v1beta1", Resource: "clusterusages"}
)

const xnetCRD = "xnets.e2e.example.org"

// deletion is what a watch saw of one object's deletion: the
// resourceVersion (and the time it was seen) of the first event showing
// it being deleted (deletionTimestamp set, or gone at once), and of the
// event saying it is gone.
type deletion struct {
	startRV, goneRV int64
	start, gone     time.Time
}

// deletionRecorder watches some kinds and records each object's deletion.
// Events of different kinds come on different streams, so their order is
// read from their resourceVersions: one etcd holds every kind here, and a
// resourceVersion is the etcd revision of the write, increasing over
// every object. (Opaque to clients in general; a test of one API server
// may rely on it.)
type deletionRecorder struct {
	mu   sync.Mutex
	seen map[string]*deletion // by "resource/name"
	stop context.CancelFunc
	wg   sync.WaitGroup
}

func (c cluster) recordDeletions(t *testing.T, gvrs ...schema.GroupVersionResource) *deletionRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &deletionRecorder{seen: map[string]*deletion{}, stop: cancel}
	for _, gvr := range gvrs {
		l, err := c.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			cancel()
			t.Fatalf("list %s: %v", gvr.Resource, err)
		}
		rv := l.GetResourceVersion()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for ctx.Err() == nil {
				w, err := c.dyn.Resource(gvr).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
				if err != nil {
					time.Sleep(200 * time.Millisecond)
					continue
				}
				for ev := range w.ResultChan() {
					u, ok := ev.Object.(*unstructured.Unstructured)
					if !ok {
						continue
					}
					rv = u.GetResourceVersion()
					if ev.Type != watch.Bookmark {
						r.saw(gvr.Resource+"/"+u.GetName(), ev.Type, u)
					}
				}
				w.Stop()
			}
		}()
	}
	t.Cleanup(r.close)
	return r
}

func (r *deletionRecorder) saw(key string, typ watch.EventType, u *unstructured.Unstructured) {
	rv, _ := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.seen[key]
	if u.GetDeletionTimestamp() == nil && typ != watch.Deleted {
		return
	}
	if d == nil {
		d = &deletion{startRV: rv, start: time.Now()}
		r.seen[key] = d
	}
	if typ == watch.Deleted && d.goneRV == 0 {
		d.goneRV, d.gone = rv, time.Now()
	}
}

func (r *deletionRecorder) close() {
	r.stop()
	r.wg.Wait()
}

// get is what was seen of key's deletion; ok false if nothing yet.
func (r *deletionRecorder) get(key string) (deletion, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.seen[key]
	if d == nil {
		return deletion{}, false
	}
	return *d, true
}

// await waits until every key was seen gone.
func (r *deletionRecorder) await(within time.Duration, keys ...string) error {
	return waitFor(within, func() error {
		for _, k := range keys {
			if d, ok := r.get(k); !ok || d.goneRV == 0 {
				return fmt.Errorf("the watch has not seen %s gone", k)
			}
		}
		return nil
	})
}

// setUpXNet applies the XRD, waits for its CRD and creates the XNet
// ord-net; its clean-up (run before the provider's) deletes the XNet and
// the XRD and waits for the CRD to go.
func setUpXNet(t *testing.T, c cluster, name string) *unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	xrd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v2", "kind": "CompositeResourceDefinition",
		"metadata": map[string]any{"name": xnetCRD},
		"spec": map[string]any{
			"group":    "e2e.example.org",
			"names":    map[string]any{"kind": "XNet", "plural": "xnets"},
			"scope":    "Cluster",
			"versions": sizeVersions(),
		},
	}}
	if _, err := c.dyn.Resource(xrdGVR).Create(ctx, xrd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the XRD %s: %v", xnetCRD, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		unhold := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := c.dyn.Resource(xnetGVR).Patch(ctx, name, types.MergePatchType, unhold, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("clean-up: remove the finalizers of XNet %s: %v", name, err)
		}
		if err := c.dyn.Resource(xnetGVR).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("clean-up: delete XNet %s: %v", name, err)
		}
		if err := c.dyn.Resource(xrdGVR).Delete(ctx, xnetCRD, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("clean-up: delete the XRD %s: %v", xnetCRD, err)
		}
		if !c.awaitCRD(xnetCRD, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u == nil }) {
			t.Errorf("clean-up: CRD %s is still there 2m after its XRD was deleted", xnetCRD)
		}
	})
	if !c.awaitCRD(xnetCRD, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && established(u) }) {
		t.Fatalf("the XRD's CRD %s is not established after 2m", xnetCRD)
	}
	xr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "e2e.example.org/v1alpha1", "kind": "XNet",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": "small"},
	}}
	var made *unstructured.Unstructured
	// The kind may take a moment to be served once the CRD is established.
	if err := waitFor(time.Minute, func() error {
		var err error
		made, err = c.dyn.Resource(xnetGVR).Create(ctx, xr, metav1.CreateOptions{})
		return err
	}); err != nil {
		t.Fatalf("create XNet %s: %v", name, err)
	}
	return made
}

// controlledBy makes owner the controller of NopResource name, as
// composition does.
func (c cluster) controlledBy(t *testing.T, name string, owner *unstructured.Unstructured) {
	t.Helper()
	ref := map[string]any{"metadata": map[string]any{"ownerReferences": []any{map[string]any{
		"apiVersion": owner.GetAPIVersion(), "kind": owner.GetKind(), "name": owner.GetName(), "uid": string(owner.GetUID()),
		"controller": true, "blockOwnerDeletion": true,
	}}}}
	patch, err := (&unstructured.Unstructured{Object: ref}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.dyn.Resource(nopGVR).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("make %s %s the controller of %s: %v", owner.GetKind(), owner.GetName(), name, err)
	}
}

// clusterUsage makes a ClusterUsage saying NopResource user uses
// NopResource used; its clean-up deletes it, with its finalizer.
func (c cluster) clusterUsage(t *testing.T, name, user, used string) {
	t.Helper()
	ctx := context.Background()
	ref := func(n string) map[string]any {
		return map[string]any{"apiVersion": "nop.crossplane.io/v1alpha1", "kind": "NopResource", "resourceRef": map[string]any{"name": n}}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "protection.crossplane.io/v1beta1", "kind": "ClusterUsage",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"of": ref(used), "by": ref(user)},
	}}
	if _, err := c.dyn.Resource(clusterUsageGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterUsage %s: %v", name, err)
	}
	t.Cleanup(func() {
		unhold := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := c.dyn.Resource(clusterUsageGVR).Patch(ctx, name, types.MergePatchType, unhold, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("clean-up: remove the finalizers of ClusterUsage %s: %v", name, err)
		}
		if err := c.dyn.Resource(clusterUsageGVR).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("clean-up: delete ClusterUsage %s: %v", name, err)
		}
	})
}

// TestUninstallWithResourcesOrder: provider-nop with the stand-in
// running; an XNet (a composite resource of a v2 XRD; no Composition, so
// it never becomes Ready) that controls NopResource ord-composed; and
// NopResource ord-user, which a ClusterUsage says uses NopResource
// ord-used. The dry run plans the XNet in the composites stage and
// ord-used after its users; carried out, the XNet's deletion comes before
// ord-composed's, and ord-user is gone before ord-used's deletion starts.
// The XRD, not the provider's, is left alone.
func interrupt(t *testing.T, x *clitest.Test, args ...string) *clitest.Result {
	t.Helper()
	return interruptWhen(t, x, "once a stage waited", func(run *clitest.Running) error {
		if !strings.Contains(run.Stderr(), "Waiting up to") {
			return fmt.Errorf("no stage waits yet")
		}
		return nil
	}, args...)
}

// interruptWhen starts the command, waits until ready says so (or it
// exits), sends it SIGINT and returns what it did; when names the moment
// in the transcript.
func interruptWhen(t *testing.T, x *clitest.Test, when string, ready func(*clitest.Running) error, args ...string) *clitest.Result {
	t.Helper()
	start := time.Now()
	run := x.Start(args...)
	if err := waitFor(2*time.Minute, func() error {
		select {
		case <-run.Exited():
			return nil
		default:
		}
		return ready(run)
	}); err != nil {
		t.Errorf("kubectl xpkg %s: %v after 2m:\n%s", strings.Join(args, " "), err, run.Stderr())
	}
	if err := run.Signal(os.Interrupt); err != nil {
		t.Fatalf("interrupt: %v", err)
	}
	r := run.Wait()
	t.Logf("transcript (%s, SIGINT %s):\n$ kubectl xpkg %s\n%s%s", time.Since(start).Round(time.Second), when, strings.Join(args, " "), r.Stdout, r.Stderr)
	return r
}

// interrupted: exit 130, the message names the managed-resources stage
// and every deletion sent; the objects are being deleted, held by the
// finalizer; the provider and its CRD still there.
func (td *teardown) interrupted(t *testing.T, what string, r *clitest.Result) {
	t.Helper()
	r.Fails(t, 130)
	contains(t, what, r.Stderr, "the teardown stopped in its managed resources stage", "deletions sent:")
	for _, m := range td.objs {
		contains(t, what, r.Stderr, "nopresources/"+m.name)
	}
	live := td.c.nopResources()
	for _, m := range td.objs {
		if u := live[m.name]; u == nil || u.GetDeletionTimestamp() == nil || !slices.Equal(u.GetFinalizers(), []string{mrFinalizer}) {
			t.Errorf("%s: NopResource %s: %v, want being deleted, held by %s", what, m.name, u, mrFinalizer)
		}
	}
	if p := td.c.get("providers", td.nop); p == nil || p.GetDeletionTimestamp() != nil {
		t.Errorf("%s: provider/%s is gone or being deleted: %v", what, td.nop, p)
	}
	if crd := td.c.crd(); crd == nil || crd.GetDeletionTimestamp() != nil {
		t.Errorf("%s: CRD %s is gone or being deleted", what, nopCRD)
	}
}

// TestUninstallWithResourcesInterrupted: the three objects of the
// teardown tests, the stand-in stopped so that the managed-resources
// stage waits. SIGINT while it waits: exit 130, the message names the
// stage and the deletions sent, the provider still installed. With the
// stand-in started, the same command again finishes.
func (c cluster) lookUp(res schema.GroupVersionResource, name string) *unstructured.Unstructured {
	c.t.Helper()
	u, err := c.dyn.Resource(res).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	return u
}

// resume runs the same command again and starts the stand-in once it has
// planned, the objects still there, so that it goes on from the stage it
// stopped in rather than finds nothing left; it finishes, and everything
// is gone.
func (td *teardown) resume(t *testing.T, args ...string) {
	t.Helper()
	start := time.Now()
	run := td.x.Start(args...)
	if err := waitFor(time.Minute, func() error {
		select {
		case <-run.Exited():
			return nil
		default:
		}
		if !strings.Contains(run.Stderr(), "Teardown (--with-resources=") {
			return fmt.Errorf("the command has not printed its plan")
		}
		return nil
	}); err != nil {
		t.Errorf("kubectl xpkg %s, run again: %v after 1m:\n%s", strings.Join(args, " "), err, run.Stderr())
	}
	td.p.start()
	r := run.Wait()
	t.Logf("transcript (%s):\n$ kubectl xpkg %s\n%s%s", time.Since(start).Round(time.Second), strings.Join(args, " "), r.Stdout, r.Stderr)
	r.Succeeds(t)
	contains(t, "the teardown run again", r.Stdout+r.Stderr, "3 managed resources, then provider/"+td.nop, "3 managed resources deleted (NopResource 3)")
	td.gone(t)
}

// sizeVersions are the versions of the tests' XRDs: v1alpha1 alone,
// whose spec has a size.
func sizeVersions() []any {
	return []any{map[string]any{
		"name": "v1alpha1", "served": true, "referenceable": true,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{
			"type": "object",
			"properties": map[string]any{"spec": map[string]any{
				"type": "object", "properties": map[string]any{"size": map[string]any{"type": "string"}},
			}},
		}},
	}}
}
