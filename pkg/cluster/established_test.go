package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

func TestDefinitionState(t *testing.T) {
	cond := func(t, s, reason string) any { return map[string]any{"type": t, "status": s, "reason": reason} }
	def := func(kind string, spec map[string]any, conds ...any) Definition {
		t.Helper()
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec, "status": map[string]any{"conditions": conds}}}
		d, err := toDefinition(u)
		if err != nil {
			t.Fatal(err)
		}
		return definitionState(installed.ObjectRef{Kind: kind, Name: "x"}, d)
	}
	for name, c := range map[string]struct {
		got   Definition
		ready bool
		state string
	}{
		"crd established":   {def("CustomResourceDefinition", nil, cond("Established", "True", "InitialNamesAccepted")), true, "Established"},
		"crd not yet":       {def("CustomResourceDefinition", nil), false, "Established not reported yet"},
		"mrd inactive":      {def("ManagedResourceDefinition", map[string]any{"state": "Inactive"}, cond("Established", "False", "InactiveManagedResource")), true, "Inactive"},
		"mrd pending":       {def("ManagedResourceDefinition", map[string]any{"state": "Active"}, cond("Established", "False", "PendingManagedResource")), false, "Established=False (PendingManagedResource)"},
		"xrd not offered":   {def("CompositeResourceDefinition", map[string]any{"claimNames": map[string]any{"kind": "C"}}, cond("Established", "True", ""), cond("Offered", "False", "x")), false, "Offered=False (x)"},
		"xrd without claim": {def("CompositeResourceDefinition", map[string]any{}, cond("Established", "True", "")), true, "Established"},
	} {
		if c.got.Ready != c.ready || c.got.State != c.state {
			t.Errorf("%s: ready %v, %q; want %v, %q", name, c.got.Ready, c.got.State, c.ready, c.state)
		}
	}
}

func TestEstablishedSaid(t *testing.T) {
	for _, c := range []struct {
		n, inactive int
		want        string
	}{
		{0, 0, ""},
		{1, 0, "its definition is established"},
		{7, 0, "its 7 definitions are established"},
		{8, 1, "of its 8 definitions, 7 established and 1 MRD Inactive (no CRD until a ManagedResourceActivationPolicy activates it)"},
		{7, 6, "of its 7 definitions, 1 established and 6 MRDs Inactive (no CRD until a ManagedResourceActivationPolicy activates them)"},
	} {
		if got := establishedSaid(c.n, c.inactive); got != c.want {
			t.Errorf("%d definitions, %d inactive: %q, want %q", c.n, c.inactive, got, c.want)
		}
	}
}

func TestTerminalWarning(t *testing.T) {
	ev := func(msg string, count int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"message": msg, "count": count}}
	}
	for _, c := range []struct {
		e    *unstructured.Unstructured
		want bool
	}{
		{ev(`CustomResourceDefinition.apiextensions.k8s.io "w" is invalid: status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions`, 1), true},
		{ev(`cannot create object: customresourcedefinitions.apiextensions.k8s.io "x" already exists`, 1), false},
		{ev(`cannot create object: customresourcedefinitions.apiextensions.k8s.io "x" already exists`, 3), true},
		{&unstructured.Unstructured{Object: map[string]any{"message": "m", "series": map[string]any{"count": int64(4)}}}, true},
	} {
		if got := terminalWarning(c.e); got != c.want {
			t.Errorf("%v: terminal %v, want %v", c.e.Object, got, c.want)
		}
	}
}

// establishCluster is a fake cluster holding provider-big, whose current
// revision installed n CRDs, none of them established yet.
func establishCluster(t *testing.T, n int) (*Cluster, *dynamicfake.FakeDynamicClient, *installed.Package) {
	t.Helper()
	var refs []any
	objs := []runtime.Object{}
	for i := range n {
		crd := testCRD(i, 100)
		delete(crd["status"].(map[string]any), "conditions")
		objs = append(objs, &unstructured.Unstructured{Object: crd})
		refs = append(refs, map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": fmt.Sprintf("kind%04ds.big.example.org", i)})
	}
	prov := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
		"metadata": map[string]any{"name": "provider-big"}, "spec": map[string]any{"package": "r.example.org/provider-big:v1"},
		"status": map[string]any{"currentRevision": "provider-big-aaa"}}}
	rev := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "ProviderRevision",
		"metadata": map[string]any{"name": "provider-big-aaa", "labels": map[string]any{"pkg.crossplane.io/package": "provider-big"}},
		"spec":     map[string]any{"image": "r.example.org/provider-big:v1", "revision": int64(1), "desiredState": "Active"},
		"status":   map[string]any{"objectRefs": refs}}}
	objs = append(objs, prov, rev)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		crdResource: "CustomResourceDefinitionList", eventResource: "EventList",
		{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}:         "ProviderList",
		{Group: "pkg.crossplane.io", Version: "v1", Resource: "providerrevisions"}: "ProviderRevisionList",
	}, objs...)
	c := NewCluster(dyn, StaticDialect(), "")
	p, err := c.Get(context.Background(), "Provider", "provider-big")
	if err != nil {
		t.Fatal(err)
	}
	return c, dyn, p
}

// TestWaitEstablishedFollowsAWatch: a revision of 90 CRDs is seen
// established by one list and one watch of CRDs, with no request per CRD,
// and only once the last of them is.
func TestWaitEstablishedFollowsAWatch(t *testing.T) {
	const n = 90 // the fake watch buffers 100 events
	c, dyn, p := establishCluster(t, n)
	crds, err := dyn.Resource(crdResource).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dyn.ClearActions()
	done := make(chan error, 1)
	var out strings.Builder
	go func() { done <- c.WaitEstablished(context.Background(), p, 30*time.Second, time.Now(), &out) }()
	// Once the watch is up, establish all but the last, then the last.
	for !slices.ContainsFunc(dyn.Actions(), func(a clienttesting.Action) bool { return a.GetVerb() == "watch" }) {
		time.Sleep(10 * time.Millisecond)
	}
	establish := func(i int) {
		u := &crds.Items[i]
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Established", "status": "True"}}, "status", "conditions")
		if _, err := dyn.Resource(crdResource).UpdateStatus(context.Background(), u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n - 1 {
		establish(i)
	}
	select {
	case err := <-done:
		t.Fatalf("the wait ended (%v) with a CRD not established", err)
	case <-time.After(1500 * time.Millisecond):
	}
	before := len(dyn.Actions())
	establish(n - 1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "provider/provider-big: its 90 definitions are established") {
		t.Errorf("progress: %q", out.String())
	}
	var crdReads []string
	for _, a := range dyn.Actions()[:before] {
		if a.GetResource() == crdResource && a.GetVerb() != "update" {
			crdReads = append(crdReads, a.GetVerb())
		}
	}
	if !slices.Equal(crdReads, []string{"list", "watch"}) {
		t.Errorf("the wait read CRDs with %v, want one list and one watch", crdReads)
	}
}

// TestWaitEstablishedFailsOnATerminalWarning: an Invalid warning on one of
// the definitions ends the wait at once with its message, read with one
// list of the kind's events.
func TestWaitEstablishedFailsOnATerminalWarning(t *testing.T) {
	c, dyn, p := establishCluster(t, 20)
	since := time.Now().Add(-time.Minute)
	ev := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": "e1", "namespace": "default"},
		"involvedObject": map[string]any{"kind": "CustomResourceDefinition", "name": "kind0007s.big.example.org"},
		"type":           "Warning", "reason": "ApplyFailed", "count": int64(1),
		"lastTimestamp": time.Now().UTC().Format(time.RFC3339),
		"message":       `CustomResourceDefinition.apiextensions.k8s.io "kind0007s.big.example.org" is invalid: status.storedVersions[0]: Invalid value: "v1alpha1"`}}
	if _, err := dyn.Resource(eventResource).Namespace("default").Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := c.WaitEstablished(context.Background(), p, 30*time.Second, since, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "CustomResourceDefinition kind0007s.big.example.org is Established not reported yet: ApplyFailed: ") {
		t.Fatalf("wait ended with %v", err)
	}
	n := 0
	for _, a := range dyn.Actions() {
		if a.GetResource() == eventResource && a.GetVerb() == "list" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d lists of events, want 1", n)
	}
}

// TestWaitEstablishedIgnoresWarningsOfAnOlderGeneration: an MRD whose
// conditions are about an older spec (a rollback just put back what the
// failed version broke) is pending, and its warnings, about that older
// spec, end nothing; once the controller reports on the new generation,
// it is established.
func TestWaitEstablishedIgnoresWarningsOfAnOlderGeneration(t *testing.T) {
	ref := installed.ObjectRef{Kind: "ManagedResourceDefinition", Name: "widgets.example.org"}
	d := &definitionDoc{}
	d.Metadata.Name, d.Metadata.Generation = ref.Name, 3
	d.Status.Conditions = []conditionField{{Type: "Established", Status: "False", Reason: "PendingManagedResource", ObservedGeneration: 2}}
	def := definitionState(ref, d)
	if def.Ready || !def.stale || def.State != "Established not yet reported for generation 3" {
		t.Fatalf("stale MRD judged %+v", def)
	}
	c, dyn, _ := establishCluster(t, 0)
	ev := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": "e1", "namespace": "default"},
		"involvedObject": map[string]any{"kind": ref.Kind, "name": ref.Name},
		"type":           "Warning", "reason": "ApplyCustomResourceDefinition", "count": int64(1),
		"lastTimestamp": time.Now().UTC().Format(time.RFC3339),
		"message":       `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.org" is invalid: status.storedVersions[0]: Invalid value: "v1alpha1"`}}
	if _, err := dyn.Resource(eventResource).Namespace("default").Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defs := []Definition{def}
	c.addWarnings(context.Background(), defs, time.Now().Add(-time.Minute))
	if defs[0].Failure != "" {
		t.Errorf("a warning about an older generation failed the wait: %s", defs[0].Failure)
	}
	d.Status.Conditions[0] = conditionField{Type: "Established", Status: "True", ObservedGeneration: 3}
	if def := definitionState(ref, d); !def.Ready {
		t.Errorf("observed generation 3, established: %+v", def)
	}
}

// TestWaitReestablishedWaitsForTheRewrite: after a rollback, a definition
// the failed version broke still has its conditions and a fresh Invalid
// warning about the failed spec until the package manager rewrites it:
// WaitReestablished waits for that (its generation moving), where
// WaitEstablished fails at once; once rewritten and established, it ends.
func TestWaitReestablishedWaitsForTheRewrite(t *testing.T) {
	c, dyn, p := establishCluster(t, 1)
	name := "kind0000s.big.example.org"
	ev := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": "e1", "namespace": "default"},
		"involvedObject": map[string]any{"kind": "CustomResourceDefinition", "name": name},
		"type":           "Warning", "reason": "ApplyFailed", "count": int64(1),
		"lastTimestamp": time.Now().UTC().Format(time.RFC3339),
		"message":       `CustomResourceDefinition.apiextensions.k8s.io "` + name + `" is invalid: status.storedVersions[0]: Invalid value: "v1alpha1"`}}
	if _, err := dyn.Resource(eventResource).Namespace("default").Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crd, err := dyn.Resource(crdResource).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.SetGeneration(4)
	_ = unstructured.SetNestedSlice(crd.Object, []any{map[string]any{"type": "Established", "status": "False", "reason": "Invalid", "observedGeneration": int64(4)}}, "status", "conditions")
	if crd, err = dyn.Resource(crdResource).Update(context.Background(), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Second)
	if err := c.WaitEstablished(context.Background(), p, 10*time.Second, since, io.Discard); err == nil || !strings.Contains(err.Error(), "Invalid value") {
		t.Fatalf("WaitEstablished: %v, want the Invalid warning", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.WaitReestablished(context.Background(), p, 20*time.Second, since, io.Discard) }()
	select {
	case err := <-done:
		t.Fatalf("the wait ended (%v) before the definition was rewritten", err)
	case <-time.After(2500 * time.Millisecond):
	}
	crd.SetGeneration(5)
	_ = unstructured.SetNestedSlice(crd.Object, []any{map[string]any{"type": "Established", "status": "True", "observedGeneration": int64(5)}}, "status", "conditions")
	if _, err := dyn.Resource(crdResource).Update(context.Background(), crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("WaitReestablished: %v", err)
	}
}

// TestWaitEstablishedNeverCallsADeletingDefinitionEstablished: a provider
// installed again while a CRD of its revision is being deleted (an object
// of its kind holds it): the CRD still says Established, and the MRD made
// again over it says Established too, but the wait waits on and, when
// its time is up, says which definition is being deleted since when and
// how many objects hold it. Once the deletion has finished and the CRD is
// made again, the wait ends.
func TestWaitEstablishedNeverCallsADeletingDefinitionEstablished(t *testing.T) {
	ctx := context.Background()
	since := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	deleting := func(crd map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: crd}
		ts := metav1.NewTime(since)
		u.SetDeletionTimestamp(&ts)
		u.SetFinalizers([]string{"customresourcecleanup.apiextensions.k8s.io"})
		return u
	}
	kinds := map[schema.GroupVersionResource]string{
		crdResource: "CustomResourceDefinitionList", mrdGVR: "ManagedResourceDefinitionList", eventResource: "EventList",
		{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}:         "ProviderList",
		{Group: "pkg.crossplane.io", Version: "v1", Resource: "providerrevisions"}: "ProviderRevisionList",
		{Group: "big.example.org", Version: "v1beta1", Resource: "kind0000s"}:      "Kind0000List",
		{Group: "big.example.org", Version: "v1beta1", Resource: "kind0001s"}:      "Kind0001List",
	}
	mrd := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.crossplane.io/v1alpha1", "kind": "ManagedResourceDefinition",
		"metadata": map[string]any{"name": "kind0000s.big.example.org"}, "spec": map[string]any{"state": "Active"},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Established", "status": "True"}}}}}
	holder := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "big.example.org/v1beta1", "kind": "Kind0000",
		"metadata": map[string]any{"name": "held", "namespace": "default", "finalizers": []any{"finalizer.managedresource.crossplane.io"}}}}
	prov := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
		"metadata": map[string]any{"name": "provider-big"}, "spec": map[string]any{"package": "r.example.org/provider-big:v1"},
		"status": map[string]any{"currentRevision": "provider-big-aaa"}}}
	rev := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "ProviderRevision",
		"metadata": map[string]any{"name": "provider-big-aaa", "labels": map[string]any{"pkg.crossplane.io/package": "provider-big"}},
		"spec":     map[string]any{"image": "r.example.org/provider-big:v1", "revision": int64(1), "desiredState": "Active"},
		"status": map[string]any{"objectRefs": []any{
			map[string]any{"apiVersion": "apiextensions.crossplane.io/v1alpha1", "kind": "ManagedResourceDefinition", "name": "kind0000s.big.example.org"},
			map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": "kind0001s.big.example.org"},
		}}}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds,
		deleting(testCRD(0, 10)), deleting(testCRD(1, 10)), mrd, holder, prov, rev)
	c := NewCluster(dyn, StaticDialect(), "")
	p, err := c.Get(ctx, "Provider", "provider-big")
	if err != nil {
		t.Fatal(err)
	}

	var out strings.Builder
	err = c.WaitEstablished(ctx, p, 2*time.Second, time.Now(), &out)
	var te *WaitTimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("the wait ended with %v, want a time-out", err)
	}
	want := []string{
		"ManagedResourceDefinition kind0000s.big.example.org: its CustomResourceDefinition is being deleted (since 2025-06-01T10:00:00Z): 1 object of kind Kind0000 still exists, held by its finalizers; kubectl xpkg doctor says what holds it",
		"CustomResourceDefinition kind0001s.big.example.org is being deleted (since 2025-06-01T10:00:00Z): no object of kind Kind0001 is left: the API server is finishing the deletion; kubectl xpkg doctor says what holds it",
	}
	if !slices.Equal(te.Pending, want) {
		t.Errorf("pending:\n%s\nwant:\n%s", strings.Join(te.Pending, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(out.String(), "provider/provider-big: ManagedResourceDefinition kind0000s.big.example.org: its CustomResourceDefinition is being deleted (since 2025-06-01T10:00:00Z); the API server refuses new objects of its kind until it is gone: waiting") ||
		strings.Contains(out.String(), "established") {
		t.Errorf("progress:\n%s", out.String())
	}

	// The deletions finish, and the CRDs are made again: the wait ends.
	dyn.ClearActions()
	done := make(chan error, 1)
	go func() { done <- c.WaitEstablished(ctx, p, 30*time.Second, time.Now(), io.Discard) }()
	for !slices.ContainsFunc(dyn.Actions(), func(a clienttesting.Action) bool {
		return a.GetVerb() == "watch" && a.GetResource() == crdResource
	}) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, i := range []int{0, 1} {
		name := fmt.Sprintf("kind%04ds.big.example.org", i)
		if err := dyn.Resource(crdResource).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(crdResource).Create(ctx, &unstructured.Unstructured{Object: testCRD(i, 10)}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("the wait after the deletions finished: %v", err)
	}
}
