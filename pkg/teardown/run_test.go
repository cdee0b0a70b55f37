package teardown

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
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

var nopResources = schema.GroupVersionResource{Group: "nop.crossplane.io", Version: "v1alpha1", Resource: "nopresources"}

// orphanPlan is the plan of --with-resources=orphan for the NopResources
// named, each with the policies the CRD defaults (they delete what they
// manage), on a fake cluster whose requests of verb on nopresources fail
// the failAt-th time (0: none fails).
func orphanPlan(t *testing.T, verb string, failAt int, names ...string) (*Runner, *Plan, *fakecluster.Fake) {
	t.Helper()
	return orphanPlanFailing(t, verb, func(n int, _ *fakecluster.Fake, _ clienttesting.Action) error {
		if n == failAt {
			return context.Canceled
		}
		return nil
	}, names...)
}

// orphanPlanFailing is orphanPlan whose n-th request of verb fails with
// what fail returns (nil: it is made).
func orphanPlanFailing(t *testing.T, verb string, fail func(n int, f *fakecluster.Fake, a clienttesting.Action) error, names ...string) (*Runner, *Plan, *fakecluster.Fake) {
	t.Helper()
	g := Group{Kind: "NopResource.nop.crossplane.io", Stage: StageManaged, gvr: nopResources}
	var objs []*unstructured.Unstructured
	for _, n := range names {
		u := managed("", map[string]any{"deletionPolicy": "Delete", "managementPolicies": []any{"*"}, "forProvider": map[string]any{}})
		u.SetName(n)
		u.SetUID(types.UID("uid-" + n))
		u.SetResourceVersion("1")
		objs = append(objs, u)
		g.Objects = append(g.Objects, Object{Name: n, Fate: FateKept, gvr: nopResources, u: u.DeepCopy()})
	}
	f := fakecluster.NewWithLists(map[schema.GroupVersionResource]string{nopResources: "NopResourceList"}, objs...)
	n := 0
	f.Dynamic.PrependReactor(verb, "nopresources", func(a clienttesting.Action) (bool, runtime.Object, error) {
		n++
		if err := fail(n, f, a); err != nil {
			return true, nil, err
		}
		return false, nil, nil
	})
	r := &Runner{Cluster: f.Cluster(), Wait: time.Second, Interval: 10 * time.Millisecond}
	return r, &Plan{Mode: ModeOrphan, Package: "provider/nop", Groups: []Group{g}}, f
}

// policiesOf reads each object's deletionPolicy and managementPolicies.
func policiesOf(t *testing.T, f *fakecluster.Fake, names ...string) string {
	t.Helper()
	var out []string
	for _, n := range names {
		u, err := f.Dynamic.Resource(nopResources).Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dp, _, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy")
		mp, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "managementPolicies")
		out = append(out, n+" "+dp+" "+strings.Join(mp, ","))
	}
	return strings.Join(out, "; ")
}

// TestOrphanStoppedBeforeDeletingPutsBack: --with-resources=orphan
// stopped before its first deletion puts back the policies it set,
// whether it stopped at that deletion or while it set them.
func TestOrphanStoppedBeforeDeletingPutsBack(t *testing.T) {
	names := []string{"a", "b", "c"}
	const asWere = "a Delete *; b Delete *; c Delete *"
	for _, tc := range []struct {
		name, verb string
		failAt     int
		putBack    int
	}{
		{"the first deletion fails", "delete", 1, 3},
		{"setting the second object's policies fails", "patch", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, p, f := orphanPlan(t, tc.verb, tc.failAt, names...)
			err := r.Run(context.Background(), p)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run: %v, want it stopped (context canceled)", err)
			}
			want := "the teardown stopped before deleting anything: the policies of " + string(rune('0'+tc.putBack)) + " managed resource(s) were put back"
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Run: %v\nwant it to say %q", err, want)
			}
			if got := policiesOf(t, f, names...); got != asWere {
				t.Errorf("policies after the teardown stopped: %s, want %s", got, asWere)
			}
		})
	}
}

// TestOrphanStoppedAfterDeletingKeeps: once a deletion is sent, the
// policies set to keep stay set.
func TestOrphanStoppedAfterDeletingKeeps(t *testing.T) {
	names := []string{"a", "b"}
	r, p, f := orphanPlan(t, "delete", 2, names...)
	err := r.Run(context.Background(), p)
	if err == nil || strings.Contains(err.Error(), "put back") {
		t.Fatalf("Run: %v, want it stopped, nothing put back", err)
	}
	if got, want := policiesOf(t, f, "b"), "b Orphan *"; got != want {
		t.Errorf("policies of the object not deleted: %s, want %s", got, want)
	}
}

// TestOrphanStoppedPutsBackAChangeThatLanded: the second object's
// policies are set but the answer is lost to the interruption: the
// teardown reads it and puts it back too.
func TestOrphanStoppedPutsBackAChangeThatLanded(t *testing.T) {
	names := []string{"a", "b", "c"}
	r, p, f := orphanPlanFailing(t, "patch", func(n int, f *fakecluster.Fake, a clienttesting.Action) error {
		if n != 2 {
			return nil
		}
		// The tracker, not the client: a reactor runs under the fake's lock.
		o, err := f.Dynamic.Tracker().Get(nopResources, "", a.(clienttesting.PatchAction).GetName())
		if err != nil {
			return err
		}
		u := o.(*unstructured.Unstructured)
		_ = unstructured.SetNestedField(u.Object, "Orphan", "spec", "deletionPolicy")
		if err := f.Dynamic.Tracker().Update(nopResources, u, ""); err != nil {
			return err
		}
		return context.Canceled
	}, names...)
	err := r.Run(context.Background(), p)
	if want := "the policies of 2 managed resource(s) were put back"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run: %v\nwant it to say %q", err, want)
	}
	if got, want := policiesOf(t, f, names...), "a Delete *; b Delete *; c Delete *"; got != want {
		t.Errorf("policies after the teardown stopped: %s, want %s", got, want)
	}
}
