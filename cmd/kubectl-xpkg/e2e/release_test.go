package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// fromV24 reports whether the package manager the tests run is Crossplane
// v2.4 or later, whose revision names hash the digest with the package's
// generation, which makes a revision for every spec edit, and whose
// revisions carry RuntimeActive.
func fromV24(t *testing.T, env *testenv.Env) bool {
	t.Helper()
	v, err := semver.NewVersion(crossplane.Get(t, env).Version)
	if err != nil {
		t.Fatal(err)
	}
	return !v.LessThan(semver.MustParse("v2.4.0"))
}

// headDigest is the digest a reference names in the test registry.
func headDigest(t *testing.T, reg *testenv.Registry, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password}))
	if err != nil {
		t.Fatal(err)
	}
	return d.Digest.String()
}

// wideRow is the fields of get -o wide's row for a package, by column.
func wideRow(t *testing.T, table, pkg string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(table), "\n")
	header := strings.Fields(lines[0])
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) == len(header) && f[0] == pkg {
			row := map[string]string{}
			for i, h := range header {
				row[h] = f[i]
			}
			return row
		}
	}
	t.Fatalf("get -o wide has no row for %s:\n%s", pkg, table)
	return nil
}

// revisionFields is a package's revisions as name → number and state.
func (c cluster) revisionFields(resource, pkg string) map[string]string {
	c.t.Helper()
	l, err := c.dyn.Resource(gvr(resource)).List(context.Background(), metav1.ListOptions{LabelSelector: "pkg.crossplane.io/package=" + pkg})
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range l.Items {
		n, _, _ := unstructured.NestedInt64(r.Object, "spec", "revision")
		s, _, _ := unstructured.NestedString(r.Object, "spec", "desiredState")
		out[r.GetName()] = fmt.Sprintf("%d %s", n, s)
	}
	return out
}

// TestRevisionNamesAndDigests: what get -o wide, describe and rollback say
// of revisions and digests is true under the running release's naming.
// Crossplane v2.4 names revision <package>-<12 hex of
// sha256("<digest hex>|<generation>")>, which is no digest: nothing may
// print it as one. A digest is shown when one at hand (the pin) is
// verified against the name; a rollback makes a new revision on v2.4 and
// reuses the old one on v2.3; --to-revision works on both.
func TestRevisionNamesAndDigests(t *testing.T) {
	env, reg, c, x := start(t)
	v24 := fromV24(t, env)
	e2e := reg.Host + "/e2e/crossplane-contrib/"
	const pkg = "names-nop"
	t.Cleanup(func() { clitest.New(t).WithEnv(env).Run("uninstall", "provider/"+pkg, "--force", "--yes", "--wait=2m") })
	old, newer := e2e+"provider-nop:v0.2.1", e2e+"provider-nop:v0.4.0"
	oldDigest, newDigest := headDigest(t, reg, old), headDigest(t, reg, newer)

	x.Run("install", old, pkg, "--wait=5m").Succeeds(t)
	u := c.get("providers", pkg)
	rev1, _, _ := unstructured.NestedString(u.Object, "status", "currentRevision")
	hex := strings.TrimPrefix(oldDigest, "sha256:")
	want := pkg + "-" + hex[:12]
	if v24 {
		want = pkg + "-" + reference.RevisionIDAt(hex, u.GetGeneration())
	}
	if rev1 != want {
		t.Fatalf("the package manager named the revision %s; this release's naming gives %s", rev1, want)
	}
	// Unpinned, no digest at hand verifies the name: unknown, never the
	// name's identifier dressed as a digest.
	r := x.Run("get", "provider", pkg, "-o", "wide").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg get provider %s -o wide\n%s", pkg, r.Stdout)
	if d := wideRow(t, r.Stdout, pkg)["DIGEST"]; d != "<unknown>" {
		t.Errorf("get -o wide of an unpinned package shows DIGEST %s, want <unknown>", d)
	}
	r = x.Run("describe", "provider/"+pkg).Succeeds(t)
	contains(t, "describe", r.Stdout, "Digest:             <unknown>\n")

	// Pinned, the pin is verified against the revision's name.
	x.Run("upgrade", pkg, "v0.4.0", "--pin", "--wait=5m").Succeeds(t)
	r = x.Run("get", "provider", pkg, "-o", "wide").Succeeds(t)
	if d := wideRow(t, r.Stdout, pkg)["DIGEST"]; d != newDigest {
		t.Errorf("get -o wide of a pinned package shows DIGEST %s, want %s", d, newDigest)
	}
	r = x.Run("describe", "provider/"+pkg).Succeeds(t)
	contains(t, "describe", r.Stdout, "Digest:             "+newDigest+"\n")
	before := c.revisionFields("providerrevisions", pkg)

	// Back to v0.2.1.
	r = x.Run("rollback", pkg, "--wait=5m").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg rollback %s --wait=5m\n%s%s", pkg, r.Stderr, r.Stdout)
	u = c.get("providers", pkg)
	cur, _, _ := unstructured.NestedString(u.Object, "status", "currentRevision")
	after := c.revisionFields("providerrevisions", pkg)
	if after[cur] != "3 Active" {
		t.Errorf("after the rollback the current revision %s is %q, want the newest, 3, active (before: %v, after: %v)", cur, after[cur], before, after)
	}
	if v24 {
		if cur == rev1 || before[cur] != "" {
			t.Errorf("Crossplane v2.4 reused revision %s for the rollback; it makes a new one (before: %v, after: %v)", cur, before, after)
		}
	} else if cur != rev1 {
		t.Errorf("Crossplane v2.3 made revision %s for the rollback; it reuses %s (before: %v, after: %v)", cur, rev1, before, after)
	}
	r = x.Run("describe", "provider/"+pkg).Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg describe provider/%s\n%s", pkg, r.Stdout)
	contains(t, "describe after rollback", r.Stdout, "Digest:             <unknown>\n")

	if v24 {
		// The first revision goes past revisionHistoryLimit (1).
		if _, err := crossplane.WaitFor(context.Background(), c.dyn.Resource(gvr("providerrevisions")), rev1, time.Minute, func(u *unstructured.Unstructured) error {
			if u != nil {
				return fmt.Errorf("revision %s is still there", rev1)
			}
			return nil
		}); err != nil {
			t.Errorf("Crossplane v2.4 keeps revision %s past the history limit: %v", rev1, err)
		}
	}

	// --to-revision by number: the pinned v0.4.0 again, whose revision
	// is number 2 on both releases.
	x.Run("rollback", pkg, "--to-revision", "2", "--wait=5m").Succeeds(t)
	u = c.get("providers", pkg)
	if src, _, _ := unstructured.NestedString(u.Object, "spec", "package"); src != newer+"@"+newDigest {
		t.Errorf("rollback --to-revision 2 points the package at %s", src)
	}
	c.healthy("providers", pkg)
}

// TestManualActivationWaitEndsAtOnce: a package installed with Manual
// activation waits for its owner to activate it; install --wait says so at
// once, naming the command, instead of waiting out its time.
func TestManualActivationWaitEndsAtOnce(t *testing.T) {
	env, reg, c, x := start(t)
	const pkg = "manual-wait-pt"
	t.Cleanup(func() { clitest.New(t).WithEnv(env).Run("uninstall", "function/"+pkg, "--force", "--yes", "--wait=2m") })
	ref := reg.Host + "/crossplane-contrib/function-patch-and-transform:v0.9.0"
	r := x.Run("install", ref, pkg, "--manual-activation", "--wait=4m").Fails(t, 1)
	t.Logf("transcript:\n$ kubectl xpkg install %s %s --manual-activation --wait=4m\n%s%s", ref, pkg, r.Stderr, r.Stdout)
	contains(t, "install --manual-activation --wait", r.Stderr,
		"function/"+pkg+" activates revisions by hand (revisionActivationPolicy: Manual) and its revision ",
		"kubectl xpkg upgrade function/"+pkg+" --activate --wait activates it")
	contains(t, "install --manual-activation --wait", r.Stdout, "function.pkg.crossplane.io/"+pkg+" created")
	x.Run("upgrade", "function/"+pkg, "--activate", "--wait=5m").Succeeds(t)
	c.healthy("functions", pkg)
}

var mrapGVR = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourceactivationpolicies"}

// TestSafeStartRuntime: a safe-start provider none of whose managed
// resource definitions is active. Crossplane v2.4 scales its runtime to
// zero and says so in RuntimeActive (AwaitingActivation), a healthy state:
// install --wait ends saying so, get -o wide and describe show it, and
// Active once a policy activates an MRD. v2.3 has no such condition.
func TestSafeStartRuntime(t *testing.T) {
	env, reg, c, x := start(t)
	v24 := fromV24(t, env)
	const pkg = "safe-helm"
	mraps := c.dyn.Resource(mrapGVR)
	activate := func(patterns string) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"activate":[%s]}}`, patterns)
		if _, err := mraps.Patch(context.Background(), "default", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The environment's policy activates every MRD: none of this
	// provider's, while the test runs.
	activate(`"nothing.kubectl-xpkg.invalid"`)
	t.Cleanup(func() {
		activate(`"*"`)
		clitest.New(t).WithEnv(env).Run("uninstall", "provider/"+pkg, "--force", "--yes", "--wait=2m")
	})

	ref := reg.Host + "/crossplane-contrib/provider-helm:v1.4.0"
	r := x.Run("install", ref, pkg, "--wait=5m").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg install %s %s --wait=5m\n%s%s", ref, pkg, r.Stderr, r.Stdout)
	note := installed.AwaitingActivationNote("provider/" + pkg)
	get := x.Run("get", "provider", pkg, "-o", "wide").Succeeds(t)
	desc := x.Run("describe", "provider/"+pkg).Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg get provider %s -o wide\n%s$ kubectl xpkg describe provider/%s\n%s", pkg, get.Stdout, pkg, desc.Stdout)
	if !v24 {
		if rt := wideRow(t, get.Stdout, pkg)["RUNTIME"]; rt != "<none>" {
			t.Errorf("Crossplane v2.3 has no RuntimeActive, get -o wide shows RUNTIME %s", rt)
		}
		if strings.Contains(desc.Stdout, "Runtime:  ") || strings.Contains(r.Stderr, note) {
			t.Errorf("Crossplane v2.3 has no RuntimeActive: describe or install says otherwise")
		}
		return
	}
	contains(t, "install --wait", r.Stderr, note)
	if rt := wideRow(t, get.Stdout, pkg)["RUNTIME"]; rt != "AwaitingActivation" {
		t.Errorf("get -o wide shows RUNTIME %s, want AwaitingActivation", rt)
	}
	contains(t, "describe", desc.Stdout, "Runtime:            AwaitingActivation (scaled to zero until one of its managed resource definitions is active)\n")

	// A policy activates the MRDs: the runtime scales up.
	activate(`"*"`)
	u := c.get("providers", pkg)
	rev, _, _ := unstructured.NestedString(u.Object, "status", "currentRevision")
	if _, err := crossplane.WaitFor(context.Background(), c.dyn.Resource(gvr("providerrevisions")), rev, 2*time.Minute, func(u *unstructured.Unstructured) error {
		if ra := crossplane.Condition(u, "RuntimeActive"); ra["status"] != "True" {
			return fmt.Errorf("RuntimeActive is %v", ra)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r = x.Run("get", "provider", pkg, "-o", "wide").Succeeds(t)
	if rt := wideRow(t, r.Stdout, pkg)["RUNTIME"]; rt != "Active" {
		t.Errorf("get -o wide shows RUNTIME %s, want Active", rt)
	}
	r = x.Run("describe", "provider/"+pkg).Succeeds(t)
	contains(t, "describe", r.Stdout, "Runtime:            Active\n")
}
