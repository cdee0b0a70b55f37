package e2e

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestUninstallWithResourcesOrder(t *testing.T) {
	env, reg, c, x := start(t)
	const nop = "e2e-teardown-order-provider-nop"
	ref := pushFixNop(t, reg, "e2e/teardown-order/provider-nop", "v0.4.0")
	p := newStandInProvider(t, c, nopGVR)
	t.Cleanup(func() {
		p.stop()
		cleanUpFix(t, env, c, nop)
	})
	x.Run("install", ref, "--wait=5m").Succeeds(t)
	if !c.awaitCRD(nopCRD, 2*time.Minute, func(u *unstructured.Unstructured) bool { return u != nil && established(u) }) {
		t.Fatalf("CRD %s is not established", nopCRD)
	}
	p.start()
	composed := managed{name: "ord-composed", external: "ord-composed"}
	user := managed{name: "ord-user", external: "ord-user"}
	used := managed{name: "ord-used", external: "ord-used"}
	c.createManaged(p, []managed{composed, user, used})

	xnet := setUpXNet(t, c, "ord-net")
	c.controlledBy(t, composed.name, xnet)
	c.clusterUsage(t, "ord-usage", user.name, used.name)
	xrdBefore := c.lookUp(xrdGVR, xnetCRD)
	if xrdBefore == nil {
		t.Fatalf("the XRD %s is not there", xnetCRD)
	}

	r := x.Run("uninstall", "provider/"+nop, "--with-resources=delete", "--dry-run")
	t.Logf("transcript:\n$ kubectl xpkg uninstall provider/%s --with-resources=delete --dry-run\n%s%s", nop, r.Stdout, r.Stderr)
	r.Succeeds(t)
	what := "uninstall --with-resources=delete --dry-run"
	contains(t, what, r.Stdout, "1 composites, then 3 managed resources", "XNet.e2e.example.org (1, composites):", nopKind+" (3, managed resources):")
	var netLine, usedLine string
	for _, l := range strings.Split(r.Stdout, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "ord-net"):
			netLine = l
		case strings.HasPrefix(strings.TrimSpace(l), "ord-used "):
			usedLine = l
		}
	}
	if !strings.Contains(netLine, ": deleted") {
		t.Errorf("%s: the XNet's line %q, want it deleted", what, netLine)
	}
	if !strings.Contains(usedLine, "after its users (NopResource ord-user)") {
		t.Errorf("%s: the line of ord-used %q, want it after its users (NopResource ord-user)", what, usedLine)
	}
	if l := planLine(t, what, r.Stdout, user); strings.Contains(l, "after its users") {
		t.Errorf("%s: ord-user waits for users it has not: %q", what, l)
	}

	rec := c.recordDeletions(t, nopGVR, xnetGVR)
	start := time.Now()
	r = x.Run("uninstall", "provider/"+nop, "--with-resources=delete", "--yes", "--wait=3m")
	t.Logf("transcript (%s):\n$ kubectl xpkg uninstall provider/%s --with-resources=delete --yes --wait=3m\n%s%s",
		time.Since(start).Round(time.Second), nop, r.Stdout, r.Stderr)
	r.Succeeds(t)
	contains(t, "uninstall --with-resources=delete", r.Stdout, "1 of the composites deleted (XNet 1)", "provider/"+nop+" deleted")

	keys := []string{"xnets/ord-net", "nopresources/ord-composed", "nopresources/ord-user", "nopresources/ord-used"}
	if err := rec.await(30*time.Second, keys...); err != nil {
		t.Error(err)
	}
	for _, k := range keys {
		d, _ := rec.get(k)
		t.Logf("%s: deletion started at revision %d (+%s), gone at %d (+%s)", k, d.startRV, d.start.Sub(start).Round(time.Millisecond), d.goneRV, d.gone.Sub(start).Round(time.Millisecond))
	}
	net, _ := rec.get("xnets/ord-net")
	comp, _ := rec.get("nopresources/ord-composed")
	usr, _ := rec.get("nopresources/ord-user")
	usd, _ := rec.get("nopresources/ord-used")
	if net.startRV == 0 || comp.startRV == 0 || net.startRV >= comp.startRV {
		t.Errorf("the XNet's deletion (revision %d) did not come before ord-composed's (revision %d)", net.startRV, comp.startRV)
	}
	if usr.goneRV == 0 || usd.startRV == 0 || usr.goneRV >= usd.startRV {
		t.Errorf("ord-user was not gone (revision %d) before ord-used's deletion started (revision %d)", usr.goneRV, usd.startRV)
	}

	if live := c.nopResources(); len(live) != 0 {
		t.Errorf("NopResources left after the teardown: %v", versions(live))
	}
	if u := c.lookUp(xnetGVR, "ord-net"); u != nil {
		t.Errorf("XNet ord-net is still there after the teardown (deleting since %v, finalizers %v)", u.GetDeletionTimestamp(), u.GetFinalizers())
	}
	c.gone("providers", nop)
	if crd := c.crd(); crd != nil {
		t.Errorf("CRD %s is still there when the teardown says it is done", nopCRD)
	}
	xrd := c.lookUp(xrdGVR, xnetCRD)
	switch {
	case xrd == nil:
		t.Errorf("the teardown deleted the XRD %s, which is not the provider's", xnetCRD)
	case xrd.GetDeletionTimestamp() != nil || xrd.GetUID() != xrdBefore.GetUID():
		t.Errorf("the XRD %s after the teardown: being deleted since %v, UID %s (was %s)", xnetCRD, xrd.GetDeletionTimestamp(), xrd.GetUID(), xrdBefore.GetUID())
	}
	if crd := c.lookUp(crdsGVR, xnetCRD); crd == nil || crd.GetDeletionTimestamp() != nil {
		t.Errorf("the XRD's CRD %s is gone or being deleted after the teardown", xnetCRD)
	}
	ext := p.snapshot()
	for _, m := range []managed{composed, user, used} {
		if e := ext[m.external]; e.Present || e.Deleted != 1 {
			t.Errorf("external resource %s after the teardown: %+v, want deleted once", m.external, e)
		}
	}
}

// interrupt starts the command, waits until it says a stage waits, sends
// it SIGINT and returns what it did.
func TestUninstallWithResourcesInterrupted(t *testing.T) {
	td := setUpTeardown(t, "teardown-interrupt", "intr")
	plain, orphan, observe := td.objs[0], td.objs[1], td.objs[2]
	td.p.stop()

	args := []string{"uninstall", "provider/" + td.nop, "--with-resources=delete", "--yes", "--wait=3m"}
	r := interrupt(t, td.x, args...)
	td.interrupted(t, "uninstall --with-resources=delete, interrupted", r)
	if got := td.p.snapshot(); !maps.Equal(got, td.external) {
		t.Errorf("the external system changed while the stand-in was stopped: %+v, was %+v", got, td.external)
	}

	td.resume(t, args...)
	want := map[string]externalResource{
		plain.external:   {Created: 1, Deleted: 1},
		orphan.external:  {Created: 1, Present: true},
		observe.external: {Present: true},
	}
	if got := td.p.snapshot(); !maps.Equal(got, want) {
		t.Errorf("the external system after the teardown: %+v, want %+v", got, want)
	}
}

// TestUninstallWithResourcesOrphanInterrupted: as
// TestUninstallWithResourcesInterrupted with --with-resources=orphan.
// Interrupted once the deletions are sent, the policies set to keep stay
// set (the plain object's deletionPolicy Orphan, the others as they
// were: they keep theirs already), and nothing says they were put back;
// run again with the stand-in started, it finishes and the external
// system has lost nothing.
func TestUninstallWithResourcesOrphanInterrupted(t *testing.T) {
	td := setUpTeardown(t, "teardown-orphan-interrupt", "ointr")
	plain, orphan, observe := td.objs[0], td.objs[1], td.objs[2]
	td.p.stop()

	args := []string{"uninstall", "provider/" + td.nop, "--with-resources=orphan", "--yes", "--wait=3m"}
	r := interrupt(t, td.x, args...)
	what := "uninstall --with-resources=orphan, interrupted"
	td.interrupted(t, what, r)
	if strings.Contains(r.Stderr, "put back") {
		t.Errorf("%s says policies were put back after deletions were sent:\n%s", what, r.Stderr)
	}
	live := td.c.nopResources()
	for _, m := range td.objs {
		u := live[m.name]
		if u == nil {
			continue
		}
		if shouldDelete(u) {
			t.Errorf("%s: NopResource %s would delete its external resource: spec %v", what, m.name, u.Object["spec"])
		}
	}
	if u := live[plain.name]; u != nil {
		if dp, _, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy"); dp != "Orphan" {
			t.Errorf("%s: NopResource %s has deletionPolicy %q, want Orphan", what, plain.name, dp)
		}
	}
	if u := live[observe.name]; u != nil {
		if ps := policies(u); !slices.Equal(ps, []string{"Observe"}) {
			t.Errorf("%s: NopResource %s has managementPolicies %v, want [Observe] as it was", what, observe.name, ps)
		}
	}

	td.resume(t, args...)
	want := map[string]externalResource{
		plain.external:   {Created: 1, Present: true},
		orphan.external:  {Created: 1, Present: true},
		observe.external: {Present: true},
	}
	if got := td.p.snapshot(); !maps.Equal(got, want) {
		t.Errorf("the external system after the teardown: %+v, want %+v", got, want)
	}
}

// lookUp reads one cluster-scoped object of res; nil when there is none.
