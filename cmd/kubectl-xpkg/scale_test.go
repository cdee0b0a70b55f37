package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

// The scale scenario on the test environment: provider-scale defines
// scaleCRDs kinds; v2.0.0 drops kind scaleDropped (one object of it
// lives in the cluster) and version v1alpha1 of scaleStored (objects are
// stored at it).
const (
	scaleCRDs    = 40
	scaleDropped = 23
	scaleStored  = 5
)

func scaleCRDName(i int) string { return fmt.Sprintf("kind%03ds.scale.example.org", i) }

func scaleCRD(i int, v2 bool) string {
	s := fmt.Sprintf("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s\nspec:\n  group: scale.example.org\n  scope: Cluster\n  names: {kind: Kind%03d, listKind: Kind%03dList, plural: kind%03ds, singular: kind%03d}\n  versions:\n", scaleCRDName(i), i, i, i, i)
	if !v2 || i != scaleStored {
		s += "  - {name: v1alpha1, served: true, storage: false, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}\n"
	}
	return s + "  - {name: v1beta1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}\n"
}

// pushScale pushes provider-scale v1.0.0 and v2.0.0 and returns v1's
// reference.
func pushScale(t *testing.T, l *lifecycle) string {
	t.Helper()
	reg := l.env.RequireRegistry(t)
	var ref string
	for _, v2 := range []bool{false, true} {
		docs := []string{"apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-scale\n"}
		for i := range scaleCRDs {
			if !v2 || i != scaleDropped {
				docs = append(docs, scaleCRD(i, v2))
			}
		}
		img, err := fixture.Image([]byte(strings.Join(docs, "---\n")))
		if err != nil {
			t.Fatal(err)
		}
		ref = reg.Host + "/scale/provider-scale:" + map[bool]string{false: "v1.0.0", true: "v2.0.0"}[v2]
		if err := fixture.Push(ref, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
			t.Fatal(err)
		}
	}
	return strings.TrimSuffix(ref, "v2.0.0") + "v1.0.0"
}

// installScaleCRDs plays the package manager's part: v1's CRDs in the
// cluster, stored at both versions, listed in the revision's objectRefs,
// and one object of scaleDropped.
func installScaleCRDs(t *testing.T, l *lifecycle, revision string) {
	t.Helper()
	ctx := context.Background()
	var refs []any
	for i := range scaleCRDs {
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(scaleCRD(i, false)), &crd.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := l.dyn.Resource(crdsGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.dyn.Resource(crdsGVR).Delete(ctx, crd.GetName(), metav1.DeleteOptions{}) })
		refs = append(refs, map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": crd.GetName()})
	}
	setStored(t, l, scaleCRDName(scaleStored), "v1alpha1", "v1beta1")
	gvr := schema.GroupVersionResource{Group: "scale.example.org", Version: "v1beta1", Resource: fmt.Sprintf("kind%03ds", scaleDropped)}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scale.example.org/v1beta1", "kind": fmt.Sprintf("Kind%03d", scaleDropped), "metadata": map[string]any{"name": "the-one"}}}
	deadline := time.Now().Add(waitBound)
	for _, err := l.dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{}); err != nil; _, err = l.dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{}) {
		if time.Now().After(deadline) {
			t.Fatalf("create an object of %s: %v", gvr.Resource, err)
		}
		time.Sleep(200 * time.Millisecond) // until the API server serves the new kind
	}
	l.editStatus(t, revisionsGVR, revision, func(r *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(r.Object, refs, "status", "objectRefs")
	})
}

func setStored(t *testing.T, l *lifecycle, crd string, versions ...string) {
	t.Helper()
	l.editStatus(t, crdsGVR, crd, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedStringSlice(u.Object, versions, "status", "storedVersions")
	})
}

// editStatus reads an object, edits it and writes its status back, again
// when another writer came in between.
func (l *lifecycle) editStatus(t *testing.T, gvr schema.GroupVersionResource, name string, edit func(*unstructured.Unstructured)) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := l.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(u)
		_, err = l.dyn.Resource(gvr).UpdateStatus(ctx, u, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// planRequests tallies what a plan's -v=6 log says it asked the API
// server: CRDs read one by one, lists of CRDs, and lists of a kind's
// objects (to count them).
func planRequests(stderr string) (crdGets, crdLists, counts int) {
	for _, r := range apiRequests(stderr) {
		switch {
		case strings.HasPrefix(r, "GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/"):
			crdGets++
		case r == "GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions":
			crdLists++
		case strings.HasPrefix(r, "GET /apis/scale.example.org/"):
			counts++
		}
	}
	return
}

// planRules reads the rules of a plan printed with -o json.
func planRules(t *testing.T, stdout string) map[string]int {
	t.Helper()
	var p struct {
		Findings []struct{ Rule string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, stdout)
	}
	out := map[string]int{}
	for _, f := range p.Findings {
		out[f.Rule]++
	}
	return out
}

// TestPlanRequestsDoNotGrowWithCRDs: against a real API server, the plans
// of a provider of 40 CRDs read the CRDs with one list (never a GET
// each), count objects only where the plan needs to, and find what they
// must: the stored versions dropped (scaleStored's v1alpha1, and the
// dropped kind's v1beta1, which the API server records), and the one object of one kind
// among 40.
func TestPlanRequestsDoNotGrowWithCRDs(t *testing.T) {
	l := newLifecycle(t)
	ref := pushScale(t, l)
	const name = "scale-provider"
	// Revisions an earlier run against the same environment left behind
	// name CRDs that run deleted.
	if err := l.dyn.Resource(revisionsGVR).DeleteCollection(context.Background(), metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "pkg.crossplane.io/package=" + name}); err != nil {
		t.Fatal(err)
	}
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name, "--force") })
	x.Run("install", "provider", ref, name, "--wait=60s").Succeeds(t)
	revs := l.revisions(t, name)
	if len(revs) != 1 {
		t.Fatalf("revisions %v", revs)
	}
	installScaleCRDs(t, l, revs[0])

	r := x.Run("upgrade", name, "v2.0.0", "--dry-run", "-o", "json", "-v=6").Fails(t, 3)
	if gets, lists, counts := planRequests(r.Stderr); gets != 0 || lists != 1 || counts != 2 {
		t.Errorf("upgrade plan: %d CRD GETs, %d CRD lists, %d counts; want 0, 1, 2", gets, lists, counts)
	}
	if rules := planRules(t, r.Stdout); rules["stored-version-dropped"] != 2 || rules["live-objects"] != 1 {
		t.Errorf("upgrade plan's findings: %v", rules)
	}

	r = x.Run("uninstall", name, "--dry-run", "-o", "json", "-v=6").Fails(t, 3)
	if gets, lists, counts := planRequests(r.Stderr); gets != 0 || lists != 1 || counts != scaleCRDs {
		t.Errorf("uninstall plan: %d CRD GETs, %d CRD lists, %d counts; want 0, 1, %d", gets, lists, counts, scaleCRDs)
	}
	if rules := planRules(t, r.Stdout); rules["live-objects"] != 1 {
		t.Errorf("uninstall plan's findings: %v", rules)
	}

	// Rollback plans v2.0.0 → v1.0.0: v1 loses nothing v2 defines.
	x.Run("upgrade", name, "v2.0.0", "--force", "--wait=60s").Succeeds(t)
	r = x.Run("rollback", name, "--dry-run", "-o", "json", "-v=6").Succeeds(t)
	if gets, lists, counts := planRequests(r.Stderr); gets != 0 || lists != 1 || counts != 0 {
		t.Errorf("rollback plan: %d CRD GETs, %d CRD lists, %d counts; want 0, 1, 0", gets, lists, counts)
	}
	if rules := planRules(t, r.Stdout); rules["downgrade"] != 1 {
		t.Errorf("rollback plan's findings: %v", rules)
	}
}
