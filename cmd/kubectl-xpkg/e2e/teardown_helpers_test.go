package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// nopKind is how the teardown names the kind provider-nop serves.
const nopKind = "NopResource.nop.crossplane.io"

// seed puts an external resource in the stand-in's external system, as
// one made outside Crossplane that an object only observes.
func (p *standInProvider) seed(ext string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.external[ext] = &externalResource{Present: true}
}

// crd reads provider-nop's CRD once; nil when it is gone.
func (c cluster) crd() *unstructured.Unstructured {
	c.t.Helper()
	u, err := c.dyn.Resource(crdsGVR).Get(context.Background(), nopCRD, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	return u
}

// teardownObjects are the three NopResources of the teardown tests: one
// plain (deletionPolicy Delete, managementPolicies [*]: its external
// resource goes with it), one that orphans its external resource, and one
// that only observes an external resource made outside Crossplane (seeded
// in the stand-in's external system before the object is created).
func teardownObjects(prefix string) (plain, orphan, observe managed) {
	return managed{name: prefix + "-plain", external: prefix + "-plain"},
		managed{name: prefix + "-orphan", external: prefix + "-orphan", spec: map[string]any{"deletionPolicy": "Orphan"}},
		managed{name: prefix + "-observe", external: prefix + "-observe", extName: prefix + "-observe",
			spec: map[string]any{"managementPolicies": []any{"Observe"}}}
}

// teardown is one test's provider-nop, installed from a repository of its
// own, with the stand-in running and the three objects managed by it.
type teardown struct {
	env  *testenv.Env
	c    cluster
	x    *clitest.Test
	p    *standInProvider
	nop  string // the provider's name
	objs []managed
	// external is the external system once the objects are set up.
	external map[string]externalResource
}

// setUpTeardown installs provider-nop (pushed to e2e/<name>/provider-nop),
// starts the stand-in, seeds the observed resource, creates the three
// objects and waits until the stand-in manages them. Its clean-up stops
// the stand-in, orphans and deletes what objects are left, uninstalls the
// provider with --force if it is still there and waits for the CRD to go.
func setUpTeardown(t *testing.T, name, prefix string) *teardown {
	t.Helper()
	env, reg, c, x := start(t)
	nop := "e2e-" + name + "-provider-nop"
	ref := pushFixNop(t, reg, "e2e/"+name+"/provider-nop", "v0.4.0")
	p := newStandInProvider(t, c, nopGVR)
	t.Cleanup(func() {
		p.stop()
		cleanUpFix(t, env, c, nop)
	})

	x.Run("install", ref, "--wait=5m").Succeeds(t)
	if !c.awaitCRD(nopCRD, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && established(u) }) {
		t.Fatalf("CRD %s is not established", nopCRD)
	}
	plain, orphan, observe := teardownObjects(prefix)
	objs := []managed{plain, orphan, observe}
	p.seed(observe.external)
	p.start()
	c.createManaged(p, objs)

	td := &teardown{env: env, c: c, x: x, p: p, nop: nop, objs: objs, external: p.snapshot()}
	want := map[string]externalResource{
		plain.external:   {Created: 1, Present: true},
		orphan.external:  {Created: 1, Present: true},
		observe.external: {Present: true},
	}
	if !maps.Equal(td.external, want) {
		t.Fatalf("the external system once the objects are set up: %+v, want %+v", td.external, want)
	}
	return td
}

// refusedWithoutTheFlag: a plain uninstall still refuses to delete the
// live objects, and changes nothing.
func (td *teardown) refusedWithoutTheFlag(t *testing.T) {
	t.Helper()
	before := versions(td.c.nopResources())
	r := td.x.Run("uninstall", "provider/"+td.nop, "--yes").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg uninstall provider/%s --yes\n%s%s", td.nop, r.Stdout, r.Stderr)
	contains(t, "uninstall without --with-resources", r.Stdout+r.Stderr, "[live-objects]", "3 objects of kind NopResource")
	td.unchanged(t, "uninstall without --with-resources", before)
}

// unchanged: every object as it was (resourceVersion and finalizers), not
// being deleted, the provider and the CRD still there and not being
// deleted, the external system as it was set up.
func (td *teardown) unchanged(t *testing.T, what string, before map[string]string) {
	t.Helper()
	live := td.c.nopResources()
	if got := versions(live); !maps.Equal(got, before) {
		t.Errorf("%s changed the NopResources: %v, were %v", what, got, before)
	}
	for _, m := range td.objs {
		if u := live[m.name]; u != nil && u.GetDeletionTimestamp() != nil {
			t.Errorf("%s: NopResource %s is being deleted", what, m.name)
		}
	}
	if p := td.c.get("providers", td.nop); p == nil || p.GetDeletionTimestamp() != nil {
		t.Errorf("%s: provider/%s is gone or being deleted: %v", what, td.nop, p)
	}
	if crd := td.c.crd(); crd == nil || crd.GetDeletionTimestamp() != nil {
		t.Errorf("%s: CRD %s is gone or being deleted", what, nopCRD)
	}
	if got := td.p.snapshot(); !maps.Equal(got, td.external) {
		t.Errorf("%s: the external system is %+v, was %+v", what, got, td.external)
	}
}

// planLine is the one line of out that names the object and its external
// name, as the teardown section does; "" (and a test error) if none.
func planLine(t *testing.T, what, out string, m managed) string {
	t.Helper()
	key := m.name + " (external name " + m.external + ")"
	var found []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, key) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Errorf("%s has %d lines naming %q, want 1:\n%s", what, len(found), key, out)
		return ""
	}
	return found[0]
}

// checkTeardownText checks the teardown section of a plan: its heading,
// the kind with its count, and each object's fate.
func (td *teardown) checkTeardownText(t *testing.T, what, mode, out string, fates map[string][]string) {
	t.Helper()
	contains(t, what, out, "Teardown (--with-resources="+mode+"): 3 managed resource", ", then provider/"+td.nop, nopKind+" (3")
	for _, m := range td.objs {
		l := planLine(t, what, out, m)
		if l == "" {
			continue
		}
		for _, w := range fates[m.name] {
			if !strings.Contains(l, w) {
				t.Errorf("%s: the line of %s lacks %q: %q", what, m.name, w, l)
			}
		}
	}
}

// teardownFates reads the -o json plan: its teardown's mode and, by
// object name, each object's externalName and fate. The objects are
// found wherever they sit under the teardown (by kind), by their three
// keys.
func teardownFates(t *testing.T, out string) (mode string, fates map[string][2]string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("uninstall -o json is not one JSON document: %v\n%s", err, out)
	}
	// One teardown per package uninstalled: an object, or a list of them
	// (uninstall takes several packages); the tests uninstall one.
	var td map[string]any
	switch v := doc["teardown"].(type) {
	case map[string]any:
		td = v
	case []any:
		if len(v) == 1 {
			td, _ = v[0].(map[string]any)
		}
	}
	if td == nil {
		t.Fatalf("uninstall -o json has no teardown of one package:\n%s", out)
	}
	mode, _ = td["mode"].(string)
	fates = map[string][2]string{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			name, okN := v["name"].(string)
			ext, okE := v["externalName"].(string)
			fate, okF := v["fate"].(string)
			if okN && okE && okF {
				fates[name] = [2]string{ext, fate}
				return
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(td)
	return mode, fates
}

// liveObjectsNotBlocking: the plan's live-objects finding is there and no
// longer blocking.
func liveObjectsNotBlocking(t *testing.T, out string) {
	t.Helper()
	found := false
	for _, f := range parsePlan(t, out).Findings {
		if f.Rule != "live-objects" {
			continue
		}
		found = true
		if f.Severity == "blocking" {
			t.Errorf("with --with-resources the live-objects finding is still blocking: %q", f.Message)
		}
	}
	if !found {
		t.Errorf("the plan has no live-objects finding:\n%s", out)
	}
}

// gone: no NopResource left, the provider gone, its CRD gone: the
// teardown waits for each before it says it is done.
func (td *teardown) gone(t *testing.T) {
	t.Helper()
	if live := td.c.nopResources(); len(live) != 0 {
		t.Errorf("NopResources left after the teardown: %v", versions(live))
	}
	td.c.gone("providers", td.nop)
	if crd := td.c.crd(); crd != nil {
		t.Errorf("CRD %s is still there when the teardown says it is done (being deleted since %v, finalizers %v)",
			nopCRD, crd.GetDeletionTimestamp(), crd.GetFinalizers())
	}
}

// deletedLines: the teardown says what it deleted, the provider last.
func (td *teardown) deletedLines(t *testing.T, what, out string) {
	t.Helper()
	contains(t, what, out, "provider/"+td.nop+" deleted")
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "deleted") {
			n++
		}
	}
	if n < 2 {
		t.Errorf("%s prints %d lines saying deleted, want one per stage (the objects, then the provider):\n%s", what, n, out)
	}
}

// TestUninstallWithResourcesDelete: provider-nop with three NopResources
// the stand-in provider manages: a plain one, one with deletionPolicy
// Orphan, one that only observes a resource made outside Crossplane.
// Without --with-resources the uninstall is refused (live-objects).
// --with-resources=delete --dry-run plans the teardown, each object's
// fate as the policies decide, in text and in -o json, and changes
// nothing. Carried out, it deletes the objects (the stand-in deletes the
// plain one's external resource and keeps the other two), then the
// provider and its CRD, and waits for each.

// release removes the finalizers of every (cluster-scoped) object of res
// and deletes it.
func (c cluster) release(t *testing.T, res schema.GroupVersionResource) { c.releaseIn(t, res, "") }

// releaseIn removes the finalizers of every object of res in ns (""
// for a cluster-scoped res) and deletes it.
func (c cluster) releaseIn(t *testing.T, res schema.GroupVersionResource, ns string) {
	ctx := context.Background()
	rc := c.dyn.Resource(res).Namespace(ns)
	l, err := rc.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, u := range l.Items {
		unhold := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := rc.Patch(ctx, u.GetName(), types.MergePatchType, unhold, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("remove the finalizers of %s %s/%s: %v", res.Resource, ns, u.GetName(), err)
		}
		if err := rc.Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete %s %s/%s: %v", res.Resource, ns, u.GetName(), err)
		}
	}
}
