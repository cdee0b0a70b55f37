package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// The managed-resource finalizer and external-name annotation of
// crossplane-runtime.
const (
	mrFinalizer  = "finalizer.managedresource.crossplane.io"
	externalName = "crossplane.io/external-name"
)

// standInProvider does what a provider's managed-resource controller does
// to the objects of one kind, against a fake external system it owns, since
// the test cluster runs no provider pods. While running it looks at every
// object of the kind every standInPeriod:
//
//   - an object not being deleted gets the managed-resource finalizer and,
//     if it has none, the external-name annotation set to its name; then its
//     external resource is observed and, if absent (and the management
//     policies allow Create), created;
//   - an object being deleted that still has the finalizer has its external
//     resource deleted or orphaned as crossplane-runtime's legacy
//     management-policies resolver decides (cluster-scoped managed
//     resources), then loses that finalizer alone.
//
// The external system outlives stop: a stand-in started again sees what
// the first run made, as a provider installed again would.
type standInProvider struct {
	t   *testing.T
	dyn dynamic.Interface
	gvr schema.GroupVersionResource

	mu       sync.Mutex
	external map[string]*externalResource
	// run is the running loop; nil when stopped.
	run *standInRun
	// lastLog is the last line logged, not repeated every pass.
	lastLog string
	// configs are the ProviderConfig kinds it serves too; nil: none.
	configs *standInConfigs
}

// externalResource is one resource of the fake external system, by
// external name.
type externalResource struct {
	Created, Deleted int
	Present          bool
}

type standInRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

const standInPeriod = 300 * time.Millisecond

func newStandInProvider(t *testing.T, c cluster, gvr schema.GroupVersionResource) *standInProvider {
	return &standInProvider{t: t, dyn: c.dyn, gvr: gvr, external: map[string]*externalResource{}}
}

// start runs the controller loop until stop (or the test's end).
func (p *standInProvider) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := &standInRun{cancel: cancel, done: make(chan struct{})}
	p.run = run
	go func() {
		defer close(run.done)
		tick := time.NewTicker(standInPeriod)
		defer tick.Stop()
		for {
			p.reconcileAll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	p.t.Cleanup(p.stop)
}

// stop ends the loop and waits for it; a stopped stand-in does nothing.
func (p *standInProvider) stop() {
	p.mu.Lock()
	run := p.run
	p.run = nil
	p.mu.Unlock()
	if run == nil {
		return
	}
	run.cancel()
	<-run.done
}

// snapshot copies the fake external system: external name → its record.
func (p *standInProvider) snapshot() map[string]externalResource {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]externalResource, len(p.external))
	for k, v := range p.external {
		out[k] = *v
	}
	return out
}

// reconcileAll is one pass over every object of the kind. Errors (a
// conflict, the kind not served while its CRD is being made again) are
// logged and retried on the next pass, as a controller's requeue would.
func (p *standInProvider) reconcileAll(ctx context.Context) {
	list, err := p.dyn.Resource(p.gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil && !apierrors.IsNotFound(err) {
			p.logf("list %s: %v", p.gvr.Resource, err)
		}
		return
	}
	for i := range list.Items {
		if ctx.Err() != nil {
			return
		}
		if err := p.reconcile(ctx, &list.Items[i]); err != nil && ctx.Err() == nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			p.logf("reconcile %s %s: %v", p.gvr.Resource, list.Items[i].GetName(), err)
		}
	}
	p.reconcileConfigs(ctx, list.Items)
}

func (p *standInProvider) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	p.mu.Lock()
	repeated := line == p.lastLog
	p.lastLog = line
	p.mu.Unlock()
	if !repeated {
		p.t.Logf("stand-in provider: %s", line)
	}
}

func (p *standInProvider) reconcile(ctx context.Context, u *unstructured.Unstructured) error {
	res := p.dyn.Resource(p.gvr)
	if u.GetDeletionTimestamp() != nil {
		i := slices.Index(u.GetFinalizers(), mrFinalizer)
		if i < 0 {
			return nil
		}
		ext := u.GetAnnotations()[externalName]
		if ext != "" && shouldDelete(u) {
			p.mu.Lock()
			if r := p.external[ext]; r != nil && r.Present {
				r.Present = false
				r.Deleted++
			}
			p.mu.Unlock()
		}
		// Remove that finalizer alone, and only if it is still where it
		// was read.
		patch, _ := json.Marshal([]map[string]any{
			{"op": "test", "path": fmt.Sprintf("/metadata/finalizers/%d", i), "value": mrFinalizer},
			{"op": "remove", "path": fmt.Sprintf("/metadata/finalizers/%d", i)},
		})
		_, err := res.Patch(ctx, u.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		return err
	}

	// Initialize: the finalizer, then the external name.
	changed := false
	if !slices.Contains(u.GetFinalizers(), mrFinalizer) {
		u.SetFinalizers(append(u.GetFinalizers(), mrFinalizer))
		changed = true
	}
	if u.GetAnnotations()[externalName] == "" {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[externalName] = u.GetName()
		u.SetAnnotations(a)
		changed = true
	}
	if changed {
		var err error
		if u, err = res.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}

	// Observe, and create what does not exist.
	ext := u.GetAnnotations()[externalName]
	p.mu.Lock()
	r := p.external[ext]
	if r == nil {
		r = &externalResource{}
		p.external[ext] = r
	}
	if !r.Present && allows(u, "Create") {
		r.Present = true
		r.Created++
	}
	exists := r.Present
	p.mu.Unlock()

	// Report it, as the runtime does, once.
	if exists && !ready(u) {
		now := time.Now().UTC().Format(time.RFC3339)
		conds := []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": now},
			map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": now},
		}
		if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
			return err
		}
		if _, err := res.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func ready(u *unstructured.Unstructured) bool { return conditionTrue(u, "Ready") }

// policies is spec.managementPolicies; unset reads as ["*"], the default
// every managed-resource CRD gives the field.
func policies(u *unstructured.Unstructured) []string {
	ps, found, _ := unstructured.NestedStringSlice(u.Object, "spec", "managementPolicies")
	if !found {
		return []string{"*"}
	}
	return ps
}

// allows says whether the management policies allow action.
func allows(u *unstructured.Unstructured, action string) bool {
	ps := policies(u)
	return slices.Contains(ps, "*") || slices.Contains(ps, action)
}

// shouldDelete is crossplane-runtime's LegacyManagementPoliciesResolver's
// ShouldDelete with management policies enabled: delete the external
// resource if the deletion policy (default Delete) is Delete and the
// policies allow Delete, or if the policies are not the default ["*"] and
// name Delete; else orphan it.
func shouldDelete(u *unstructured.Unstructured) bool {
	dp, _, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy")
	if dp == "" {
		dp = "Delete"
	}
	ps := policies(u)
	if dp == "Delete" && (slices.Contains(ps, "Delete") || slices.Contains(ps, "*")) {
		return true
	}
	return !(len(ps) == 1 && ps[0] == "*") && slices.Contains(ps, "Delete")
}

// TestStandInShouldDelete holds shouldDelete to crossplane-runtime's
// TestLegacyShouldDelete, management policies enabled.
func TestStandInShouldDelete(t *testing.T) {
	for _, tc := range []struct {
		deletion string
		policies []any // nil: unset
		want     bool
	}{
		{"", nil, true},
		{"Delete", nil, true},
		{"Orphan", nil, false},
		{"Delete", []any{"*"}, true},
		{"Orphan", []any{"*"}, false},
		{"Delete", []any{"Delete"}, true},
		{"Orphan", []any{"Delete"}, true},
		{"Delete", []any{"Observe"}, false},
		{"Orphan", []any{"Observe", "Create", "Update", "LateInitialize"}, false},
		{"Delete", []any{"Observe", "Create", "Update", "LateInitialize"}, false},
		{"Orphan", []any{"Observe", "Create", "Delete"}, true},
	} {
		spec := map[string]any{}
		if tc.deletion != "" {
			spec["deletionPolicy"] = tc.deletion
		}
		if tc.policies != nil {
			spec["managementPolicies"] = tc.policies
		}
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		if got := shouldDelete(u); got != tc.want {
			t.Errorf("deletionPolicy %q, managementPolicies %v: shouldDelete %v, want %v", tc.deletion, tc.policies, got, tc.want)
		}
	}
}

// TestStandInProvider: the stand-in on the real API server. It manages
// what it finds, deletes or orphans each external resource as the
// policies say when its object is deleted, removes its own finalizer and
// no other, and does nothing once stopped.
func TestStandInProvider(t *testing.T) {
	env, reg, c, x := start(t)
	const nop = "e2e-fix-standin-provider-nop"
	ref := pushFixNop(t, reg, "e2e/fix-standin/provider-nop", "v0.4.0")
	t.Cleanup(func() { cleanUpFix(t, env, c, nop) })
	x.Run("install", ref, "--wait=5m").Succeeds(t)
	if !c.awaitCRD(nopCRD, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && established(u) }) {
		t.Fatalf("CRD %s is not established", nopCRD)
	}
	objs := []managed{
		{name: "si-delete", external: "si-delete"},
		{name: "si-orphan", external: "ext-orphan", extName: "ext-orphan", spec: map[string]any{"deletionPolicy": "Orphan"}},
		{name: "si-policies-delete", external: "si-policies-delete", spec: map[string]any{
			"deletionPolicy": "Orphan", "managementPolicies": []any{"Observe", "Create", "Delete"}}},
		{name: "si-kept", external: "si-kept"},
	}
	p := newStandInProvider(t, c, nopGVR)
	p.start()
	ctx := context.Background()
	kept := objs[3].object()
	kept.SetFinalizers([]string{"example.org/keep"})
	if _, err := c.dyn.Resource(nopGVR).Create(ctx, kept, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.createManaged(p, objs[:3])
	if err := waitFor(time.Minute, func() error { return managedBy(c.nopResources(), p.snapshot(), objs) }); err != nil {
		t.Fatal(err)
	}

	for _, m := range objs {
		if err := c.dyn.Resource(nopGVR).Delete(ctx, m.name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err := waitFor(time.Minute, func() error {
		live := c.nopResources()
		for _, m := range objs[:3] {
			if live[m.name] != nil {
				return fmt.Errorf("%s is still there", m.name)
			}
		}
		if k := live["si-kept"]; k == nil || !slices.Equal(k.GetFinalizers(), []string{"example.org/keep"}) {
			return fmt.Errorf("si-kept: %v, want held by example.org/keep alone", k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]externalResource{
		"si-delete":          {Created: 1, Deleted: 1},
		"ext-orphan":         {Created: 1, Present: true},
		"si-policies-delete": {Created: 1, Deleted: 1},
		"si-kept":            {Created: 1, Deleted: 1},
	}
	if got := p.snapshot(); !maps.Equal(got, want) {
		t.Errorf("the external system: %+v, want %+v", got, want)
	}

	p.stop()
	if _, err := c.dyn.Resource(nopGVR).Create(ctx, (managed{name: "si-after-stop"}).object(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * standInPeriod)
	if u := c.nopResources()["si-after-stop"]; u == nil || len(u.GetFinalizers()) != 0 || len(u.GetAnnotations()) != 0 {
		t.Errorf("a stopped stand-in changed si-after-stop: %v", u)
	}
}

// waitFor calls check until it returns nil, or returns its last error
// once within has passed.
func waitFor(within time.Duration, check func() error) error {
	var err error
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if err = check(); err == nil {
			return nil
		}
	}
	return err
}
