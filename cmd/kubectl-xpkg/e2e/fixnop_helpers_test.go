package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// pushFixNop pushes provider-nop v0.4.0 without its
// ValidatingWebhookConfiguration as repo:tag (repo under the registry's
// host) and returns the reference. The webhook is served by the
// provider's pod, which the test cluster does not run: with it, the API
// server refuses every NopResource. v0.4.0's CRD is needed for
// spec.managementPolicies, which v0.2.1's lacks. extra are more CRDs
// (paths under hack/testdata/e2e/provider-nop) the package makes.
func pushFixNop(t *testing.T, reg *testenv.Registry, repo, tag string, extra ...string) string {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "hack", "testdata", "e2e", "provider-nop", "v0.4.0")
	meta, err := os.ReadFile(filepath.Join(dir, "crossplane.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd, err := os.ReadFile(filepath.Join(dir, "crds", "nop.crossplane.io_nopresources.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := "---\n" + string(meta) + "\n---\n" + string(crd)
	for _, e := range extra {
		b, err := os.ReadFile(filepath.Join(dir, "..", e))
		if err != nil {
			t.Fatal(err)
		}
		docs += "\n---\n" + string(b)
	}
	img, err := fixture.Image([]byte(docs))
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/" + repo + ":" + tag
	if err := fixture.Push(ref, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
	return ref
}

// managed is what the tests create of one NopResource and what they
// expect to find again after a repair.
type managed struct {
	name     string
	external string // the external name the stand-in sees it under
	labels   map[string]string
	extName  string         // set at creation; "" lets the stand-in set its name
	spec     map[string]any // besides an empty spec.forProvider
}

// fixObjects are the three NopResources of the repair tests: one plain,
// one with an external name of its own and labels, one that orphans its
// external resource and may not delete it.
func fixObjects(prefix string) []managed {
	return []managed{
		{name: prefix + "-plain", external: prefix + "-plain"},
		{name: prefix + "-custom", external: "custom-ext-1", extName: "custom-ext-1",
			labels: map[string]string{"team": "storage", "example.org/tier": "gold"}},
		{name: prefix + "-orphan", external: prefix + "-orphan", spec: map[string]any{
			"deletionPolicy":     "Orphan",
			"managementPolicies": []any{"Observe", "Create", "Update", "LateInitialize"},
		}},
	}
}

func (m managed) object() *unstructured.Unstructured {
	spec := map[string]any{"forProvider": map[string]any{}}
	maps.Copy(spec, m.spec)
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nop.crossplane.io/v1alpha1", "kind": "NopResource",
		"metadata": map[string]any{"name": m.name}, "spec": spec}}
	if m.extName != "" {
		u.SetAnnotations(map[string]string{externalName: m.extName})
	}
	if m.labels != nil {
		u.SetLabels(m.labels)
	}
	return u
}

// nopResources reads every NopResource by name; nil when the kind is not
// served.
func (c cluster) nopResources() map[string]*unstructured.Unstructured {
	c.t.Helper()
	l, err := c.dyn.Resource(nopGVR).List(context.Background(), metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range l.Items {
		out[l.Items[i].GetName()] = &l.Items[i]
	}
	return out
}

// createManaged creates the objects with the stand-in running and waits
// until it manages each: finalizer and external name on the object, the
// external resource made, the object Ready.
func (c cluster) createManaged(p *standInProvider, objs []managed) {
	c.t.Helper()
	for _, m := range objs {
		if _, err := c.dyn.Resource(nopGVR).Create(context.Background(), m.object(), metav1.CreateOptions{}); err != nil {
			c.t.Fatalf("create NopResource %s: %v", m.name, err)
		}
	}
	var why error
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if why = managedBy(c.nopResources(), p.snapshot(), objs); why == nil {
			return
		}
	}
	c.t.Fatalf("the stand-in provider does not manage the NopResources after 1m: %v", why)
}

func managedBy(live map[string]*unstructured.Unstructured, ext map[string]externalResource, objs []managed) error {
	for _, m := range objs {
		u := live[m.name]
		switch {
		case u == nil:
			return errors.New(m.name + " does not exist")
		case !slices.Contains(u.GetFinalizers(), mrFinalizer):
			return errors.New(m.name + " has no " + mrFinalizer)
		case u.GetAnnotations()[externalName] != m.external:
			return errors.New(m.name + " has external name " + u.GetAnnotations()[externalName] + ", want " + m.external)
		case !ext[m.external].Present:
			return errors.New("the external resource " + m.external + " was not made")
		case !ready(u):
			return errors.New(m.name + " is not Ready")
		}
	}
	return nil
}

// releaseNopResources removes every NopResource's finalizers and deletes
// it: the tests' clean-up, as an operator orphaning them would.
func (c cluster) releaseNopResources(t *testing.T) { c.release(t, nopGVR) }

// cleanUpFix is the repair tests' clean-up: the NopResources orphaned
// and deleted, each package uninstalled (one at a time: some may be gone
// already), the CRD gone.
func cleanUpFix(t *testing.T, env *testenv.Env, c cluster, pkgs ...string) {
	c.releaseNopResources(t)
	for _, p := range pkgs {
		if c.get("providers", p) != nil {
			clitest.New(t).WithEnv(env).Run("uninstall", "provider/"+p, "--force", "--yes", "--wait=2m")
		}
	}
	if !c.awaitCRD(nopCRD, 3*time.Minute, func(u *unstructured.Unstructured) bool { return u == nil }) {
		t.Errorf("CRD %s is still there after the clean-up", nopCRD)
	}
}

// awaitActiveRevision waits until the provider's current revision is
// Active and returns its name.
func (c cluster) awaitActiveRevision(pkg string, within time.Duration) string {
	c.t.Helper()
	var rev, state string
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		p := c.get("providers", pkg)
		if p == nil {
			continue
		}
		rev, _, _ = unstructured.NestedString(p.Object, "status", "currentRevision")
		if r := c.getRevision("providerrevisions", rev); r != nil {
			if state, _, _ = unstructured.NestedString(r.Object, "spec", "desiredState"); state == "Active" {
				return rev
			}
		}
	}
	c.t.Fatalf("provider/%s has no active revision after %s (current revision %q, %q)", pkg, within, rev, state)
	return ""
}

// crdUID is the CRD's UID, failing the test when it is gone.
func (c cluster) crdUID() types.UID {
	c.t.Helper()
	u, err := c.dyn.Resource(crdsGVR).Get(context.Background(), nopCRD, metav1.GetOptions{})
	if err != nil {
		c.t.Fatalf("CRD %s: %v", nopCRD, err)
	}
	return u.GetUID()
}

// awaitTerminating waits until the CRD is being deleted and held: its
// deletion cannot finish while the NopResources keep their finalizers.
func (c cluster) awaitTerminating(why string) {
	c.t.Helper()
	if !c.awaitCRD(nopCRD, 3*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && u.GetDeletionTimestamp() != nil }) {
		c.t.Fatalf("CRD %s is not being deleted 3m after %s", nopCRD, why)
	}
}

// awaitHeld waits until the CRD's deletion has deleted every NopResource,
// which their finalizer holds, and returns them.
func (c cluster) awaitHeld(objs []managed) map[string]*unstructured.Unstructured {
	c.t.Helper()
	var live map[string]*unstructured.Unstructured
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		live = c.nopResources()
		held := 0
		for _, m := range objs {
			if u := live[m.name]; u != nil && u.GetDeletionTimestamp() != nil && slices.Contains(u.GetFinalizers(), mrFinalizer) {
				held++
			}
		}
		if held == len(objs) {
			return live
		}
	}
	c.t.Fatalf("the NopResources are not all being deleted, held by %s, 1m after their CRD: %v", mrFinalizer, versions(live))
	return nil
}

// versions are each NopResource's resourceVersion and finalizers: what a
// change of any kind would change.
func versions(live map[string]*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for n, u := range live {
		out[n] = u.GetResourceVersion() + " " + strings.Join(u.GetFinalizers(), ",")
	}
	return out
}

// readBackup reads the objects of a multi-document YAML backup.
func readBackup(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the backup: %v", err)
	}
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var m map[string]any
		if err := d.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("the backup %s does not parse: %v\n%s", path, err, b)
		}
		if m != nil {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out
}

// checkBackup: the backup holds each object whole, as it was before the
// repair changed anything (its finalizer still on it).
func checkBackup(t *testing.T, path string, objs []managed) {
	t.Helper()
	byName := map[string]*unstructured.Unstructured{}
	for _, u := range readBackup(t, path) {
		if u.GetKind() == "NopResource" {
			byName[u.GetName()] = u
		}
	}
	if len(byName) != len(objs) {
		t.Errorf("the backup holds %d NopResources (%v), want %d", len(byName), slices.Sorted(maps.Keys(byName)), len(objs))
	}
	for _, m := range objs {
		u := byName[m.name]
		if u == nil {
			t.Errorf("the backup lacks NopResource %s", m.name)
			continue
		}
		if got := u.GetAnnotations()[externalName]; got != m.external {
			t.Errorf("the backup has %s under external name %q, want %q", m.name, got, m.external)
		}
		for k, v := range m.labels {
			if u.GetLabels()[k] != v {
				t.Errorf("the backup has %s without its label %s=%s: %v", m.name, k, v, u.GetLabels())
			}
		}
		if !slices.Contains(u.GetFinalizers(), mrFinalizer) {
			t.Errorf("the backup has %s without %s: it was not saved before the repair changed it", m.name, mrFinalizer)
		}
		if _, ok := u.Object["spec"].(map[string]any); !ok {
			t.Errorf("the backup has %s without its spec", m.name)
		}
		if _, ok := u.Object["status"].(map[string]any); !ok {
			t.Errorf("the backup has %s without its status", m.name)
		}
	}
}

// checkRestored: each object is there again, not being deleted, with what
// it had before the repair: external name, labels, policies.
func checkRestored(t *testing.T, before, after map[string]*unstructured.Unstructured, objs []managed) {
	t.Helper()
	for _, m := range objs {
		b, a := before[m.name], after[m.name]
		if a == nil {
			t.Errorf("NopResource %s is not there after the repair", m.name)
			continue
		}
		if a.GetDeletionTimestamp() != nil {
			t.Errorf("NopResource %s is being deleted after the repair", m.name)
		}
		if a.GetUID() == b.GetUID() {
			t.Errorf("NopResource %s has its old UID %s: it was not made again", m.name, a.GetUID())
		}
		if got := a.GetAnnotations()[externalName]; got != m.external {
			t.Errorf("NopResource %s came back under external name %q, want %q", m.name, got, m.external)
		}
		if !maps.Equal(a.GetLabels(), b.GetLabels()) {
			t.Errorf("NopResource %s came back with labels %v, had %v", m.name, a.GetLabels(), b.GetLabels())
		}
		for _, f := range []string{"managementPolicies", "deletionPolicy"} {
			was, _, _ := unstructured.NestedFieldNoCopy(b.Object, "spec", f)
			is, _, _ := unstructured.NestedFieldNoCopy(a.Object, "spec", f)
			if !equalJSON(was, is) {
				t.Errorf("NopResource %s came back with spec.%s %v, had %v", m.name, f, is, was)
			}
		}
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// checkExternal: every external resource was made once and never deleted,
// and is there.
func checkExternal(t *testing.T, p *standInProvider, objs []managed) {
	t.Helper()
	ext := p.snapshot()
	for _, m := range objs {
		r, ok := ext[m.external]
		if !ok || r.Created != 1 || r.Deleted != 0 || !r.Present {
			t.Errorf("external resource %s of %s: %+v, want made once, never deleted, present", m.external, m.name, r)
		}
	}
	if len(ext) != len(objs) {
		t.Errorf("the external system holds %v, want one resource per NopResource", ext)
	}
}

// rerunStandIn runs the stand-in provider again for a few seconds, as the
// provider's controller would once the objects are back, and checks that
// it took each object up under its external name.
func rerunStandIn(t *testing.T, c cluster, p *standInProvider, objs []managed) {
	t.Helper()
	p.start()
	time.Sleep(3 * time.Second)
	p.stop()
	if err := managedBy(c.nopResources(), p.snapshot(), objs); err != nil {
		t.Errorf("the stand-in provider did not take the objects up again: %v", err)
	}
}
