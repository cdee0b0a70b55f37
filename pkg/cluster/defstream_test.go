package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
)

// testCRD is a CRD named plural.group with a schema of about size bytes
// (what the stream must skip), stored at v1alpha1 and v1beta1.
func testCRD(i, size int) map[string]any {
	plural := fmt.Sprintf("kind%04ds", i)
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + ".big.example.org", "resourceVersion": strconv.Itoa(100 + i)},
		"spec": map[string]any{"group": "big.example.org", "scope": "Namespaced",
			"names": map[string]any{"plural": plural, "kind": fmt.Sprintf("Kind%04d", i)},
			"versions": []any{
				map[string]any{"name": "v1alpha1", "served": true, "storage": false, "schema": map[string]any{"openAPIV3Schema": map[string]any{"description": strings.Repeat("x", size)}}},
				map[string]any{"name": "v1beta1", "served": true, "storage": true},
			}},
		"status": map[string]any{"storedVersions": []any{"v1alpha1", "v1beta1"},
			"conditions": []any{map[string]any{"type": "Established", "status": "True", "reason": "InitialNamesAccepted"}}},
	}
}

// crdServer serves a paged list of n CRDs as an API server does, and
// logs each request as "METHOD path?query". Before the first list page
// it answers 429 once, and the first continued page once with 410 Gone
// (the snapshot expired): the list must start again, not fail.
type crdServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

func newCRDServer(t *testing.T, n int) *crdServer {
	s := &crdServer{}
	throttled, expired := false, false
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		s.mu.Unlock()
		if r.URL.Path != "/apis/apiextensions.k8s.io/v1/customresourcedefinitions" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if !throttled {
			throttled = true
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`)
			return
		}
		from, _ := strconv.Atoi(q.Get("continue"))
		if from > 0 && !expired {
			expired = true
			w.WriteHeader(http.StatusGone)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","message":"continue expired","code":410}`)
			return
		}
		limit, _ := strconv.Atoi(q.Get("limit"))
		to := min(from+limit, n)
		var items []any
		for i := from; i < to; i++ {
			items = append(items, testCRD(i, 2000))
		}
		meta := map[string]any{"resourceVersion": "999"}
		if to < n {
			meta["continue"] = strconv.Itoa(to)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "CustomResourceDefinitionList", "apiVersion": "apiextensions.k8s.io/v1", "metadata": meta, "items": items})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *crdServer) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

// TestCRDsListOnceAsAStream: 1,200 CRDs asked for are read with one list
// of three pages of 500 (and the pages the server's throttling and an
// expired snapshot cost), never a GET per CRD, and every field a plan
// needs comes through without the schemas.
func TestCRDsListOnceAsAStream(t *testing.T) {
	const n = 1200
	srv := newCRDServer(t, n)
	c := &Cluster{rest: &rest.Config{Host: srv.URL}}
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("kind%04ds.big.example.org", i))
	}
	names = append(names, "absent.big.example.org")
	crds, err := c.CRDs(context.Background(), names)
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != n {
		t.Fatalf("read %d CRDs, want %d", len(crds), n)
	}
	got := crds["kind0777s.big.example.org"]
	want := &CRD{Name: "kind0777s.big.example.org", Group: "big.example.org", Plural: "kind0777s", Kind: "Kind0777", Namespaced: true,
		Served: []string{"v1alpha1", "v1beta1"}, Storage: "v1beta1", Stored: []string{"v1alpha1", "v1beta1"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CRD read as %+v, want %+v", got, want)
	}
	reqs := srv.take()
	wantReqs := []string{
		"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions?limit=500", // 429
		"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions?limit=500",
		"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions?continue=500&limit=500", // 410
		"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions?limit=500",
		"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions?continue=500&limit=500",
		"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions?continue=1000&limit=500",
	}
	if !slices.Equal(reqs, wantReqs) {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(reqs, "\n"), strings.Join(wantReqs, "\n"))
	}
}

// TestCRDsReadAFewOneByOne: up to fewCRDs names are read with a GET each
// (a list of every CRD in the cluster costs more than a few GETs).
func TestCRDsReadAFewOneByOne(t *testing.T) {
	var objs []runtime.Object
	for i := range 3 {
		objs = append(objs, &unstructured.Unstructured{Object: testCRD(i, 10)})
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{crdResource: "CustomResourceDefinitionList"}, objs...)
	c := NewCluster(dyn, StaticDialect(), "")
	crds, err := c.CRDs(context.Background(), []string{"kind0000s.big.example.org", "kind0002s.big.example.org", "absent.big.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 2 || crds["kind0002s.big.example.org"].Storage != "v1beta1" {
		t.Fatalf("read %v", crds)
	}
	if got := verbs(dyn.Actions()); !slices.Equal(got, []string{"get customresourcedefinitions", "get customresourcedefinitions", "get customresourcedefinitions"}) {
		t.Errorf("requests %v, want three GETs", got)
	}
	// More than fewCRDs: one list, whatever the number.
	dyn.ClearActions()
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("kind%04ds.big.example.org", i))
	}
	if crds, err = c.CRDs(context.Background(), many); err != nil || len(crds) != 3 {
		t.Fatalf("read %d CRDs (%v), want 3", len(crds), err)
	}
	if got := verbs(dyn.Actions()); !slices.Equal(got, []string{"list customresourcedefinitions"}) {
		t.Errorf("requests %v, want one list", got)
	}
}

func verbs(actions []clienttesting.Action) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = a.GetVerb() + " " + a.GetResource().Resource
	}
	slices.Sort(out)
	return out
}

// TestDecodeListRefusesWhatIsNoList: a body that is no list object fails
// the read with an error, not a partial result passed for whole.
func TestDecodeListRefusesWhatIsNoList(t *testing.T) {
	for _, body := range []string{``, `[]`, `{"items": {}}`, `{"items": [{"metadata": {"name": "a"}}`, `{"items": [1]}`} {
		n := 0
		if _, err := decodeList(strings.NewReader(body), func(*definitionDoc) { n++ }); err == nil {
			t.Errorf("%q: no error (%d items)", body, n)
		}
	}
	meta, err := decodeList(strings.NewReader(`{"kind":"L","metadata":{"resourceVersion":"7","continue":"c"},"items":null}`), func(*definitionDoc) {})
	if err != nil || meta.ResourceVersion != "7" || meta.Continue != "c" {
		t.Errorf("read %+v, %v", meta, err)
	}
}

// TestWatchStreamFollowsEvents: the watch decoder hands on additions,
// changes and deletions, skips bookmarks, and turns an ERROR event into
// the API error it carries (a 410 makes the tracker list again).
func TestWatchStreamFollowsEvents(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "1" || r.URL.Query().Get("resourceVersion") != "42" {
			http.Error(w, "want a watch from 42", http.StatusBadRequest)
			return
		}
		enc := json.NewEncoder(w)
		_ = enc.Encode(map[string]any{"type": "ADDED", "object": testCRD(1, 100)})
		_ = enc.Encode(map[string]any{"type": "BOOKMARK", "object": map[string]any{"metadata": map[string]any{"resourceVersion": "50"}}})
		_ = enc.Encode(map[string]any{"type": "DELETED", "object": testCRD(1, 100)})
		_ = enc.Encode(map[string]any{"type": "ERROR", "object": map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410, "message": "too old resource version"}})
	}))
	defer srv.Close()
	h := &httpDefinitions{hc: srv.Client(), host: srv.URL}
	var seen []string
	err := h.watch(context.Background(), crdResource, "42", func(typ watch.EventType, d *definitionDoc) { seen = append(seen, string(typ)+" "+d.Metadata.Name) })
	if want := []string{"ADDED kind0001s.big.example.org", "DELETED kind0001s.big.example.org"}; !slices.Equal(seen, want) {
		t.Errorf("events %v, want %v", seen, want)
	}
	if err == nil || !strings.Contains(err.Error(), "too old resource version") {
		t.Errorf("watch ended with %v, want the 410", err)
	}
}

// TestTrackerListsAgainWhenTheWatchEnds: the tracker's state follows a
// watch, and after the watch ends, a fresh list.
func TestTrackerListsAgainWhenTheWatchEnds(t *testing.T) {
	src := &scriptedSource{lists: [][]*definitionDoc{{doc("a", "False")}, {doc("a", "True"), doc("b", "True")}}}
	tr := newDefTracker(src)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer func() { cancel(); tr.wait() }()
	tr.follow(ctx, crdResource)
	for {
		a, _ := tr.get(crdResource, "a")
		b, _ := tr.get(crdResource, "b")
		if a != nil && b != nil && a.Status.Conditions[0].Status == "True" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the tracker never saw the second list")
		case <-tr.changed:
		}
	}
}

func doc(name, established string) *definitionDoc {
	d := &definitionDoc{}
	d.Metadata.Name = name
	d.Status.Conditions = []conditionField{{Type: "Established", Status: established}}
	return d
}

// scriptedSource lists what it is given, one list after another, and
// ends each watch at once.
type scriptedSource struct {
	mu    sync.Mutex
	lists [][]*definitionDoc
}

func (s *scriptedSource) list(_ context.Context, _ schema.GroupVersionResource, each func(*definitionDoc)) (string, error) {
	s.mu.Lock()
	l := s.lists[0]
	if len(s.lists) > 1 {
		s.lists = s.lists[1:]
	}
	s.mu.Unlock()
	for _, d := range l {
		each(d)
	}
	return "1", nil
}

func (s *scriptedSource) watch(ctx context.Context, _ schema.GroupVersionResource, _ string, _ func(watch.EventType, *definitionDoc)) error {
	return nil
}

// TestCRDsWithoutListPermission: an identity that may get CRDs but not
// list them (RBAC naming the package's CRDs) reads them one by one.
func TestCRDsWithoutListPermission(t *testing.T) {
	var objs []runtime.Object
	var names []string
	for i := range 20 {
		objs = append(objs, &unstructured.Unstructured{Object: testCRD(i, 10)})
		names = append(names, fmt.Sprintf("kind%04ds.big.example.org", i))
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{crdResource: "CustomResourceDefinitionList"}, objs...)
	dyn.PrependReactor("list", "customresourcedefinitions", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(crdResource.GroupResource(), "", errors.New("cannot list"))
	})
	c := NewCluster(dyn, StaticDialect(), "")
	crds, err := c.CRDs(context.Background(), names)
	if err != nil || len(crds) != 20 {
		t.Fatalf("read %d CRDs (%v), want 20", len(crds), err)
	}
}
