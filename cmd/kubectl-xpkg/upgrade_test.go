package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

// TestUpgradeWaitsForTheNewRevision: the package manager answers the new
// version late, so the old Healthy=True is still on the package right after
// the change; --wait must not take it for success.
func TestUpgradeWaitsForTheNewRevision(t *testing.T) {
	l := newLifecycle(t)
	old, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
	newer, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "upgrade-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", old, name, "--wait=60s").Succeeds(t)

	// The package manager answers only once the wait has seen the package
	// at the new version, the old Healthy=True still on it (not after 2 s,
	// which a loaded machine may spend before the wait starts: it would
	// then find the answer there already).
	gate := make(chan struct{})
	l.mgr.Manage(name, pkgmanager.Behaviour{Gate: gate})
	run := x.Start("upgrade", name, "--wait=60s") // no VERSION: the newest stable above v0.2.1
	eventually(t, "the wait sees the package at the new version", func() bool {
		return strings.Contains(run.Stderr(), "provider/"+name+": revision "+pkgmanager.RevisionName(name, old)+" (Active) for "+old)
	})
	close(gate)
	r := run.Wait().Succeeds(t)
	contains(t, "upgrade", r.Stdout, "provider/"+name+" upgraded from v0.2.1 to v0.4.0")
	newRev := pkgmanager.RevisionName(name, newer)
	contains(t, "upgrade progress", r.Stderr, "revision "+newRev+" (Active) created")
	u, err := l.dyn.Resource(providersGVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur, _, _ := unstructured.NestedString(u.Object, "status", "currentIdentifier"); cur != newer {
		t.Errorf("--wait returned while the package manager still reported %s", cur)
	}
	states := l.desiredStates(t, "providerrevisions", name)
	if states[newRev] != "Active" || states[pkgmanager.RevisionName(name, old)] != "Inactive" {
		t.Errorf("revisions after upgrade: %v", states)
	}

	r = x.Run("upgrade", name, "v0.4.0").Succeeds(t)
	contains(t, "same version", r.Stderr, "is already at v0.4.0: nothing to do")
	r = x.Run("upgrade", name, ">=0.1 <0.3", "--dry-run").Fails(t, 3)
	contains(t, "downgrade plan", r.Stdout, "BLOCKING v0.2.1 is older than the running v0.4.0: use kubectl xpkg rollback to go back, or --force [downgrade]")
	r = x.Run("upgrade", name, ">=0.1 <0.3", "--dry-run=server", "--force").Succeeds(t)
	contains(t, "constraint", r.Stdout, "would be upgraded from v0.4.0 to v0.2.1 (server dry run: nothing changed)")
	r = x.Run("upgrade", name).Fails(t, 1)
	contains(t, "nothing newer", r.Stderr, "is newer than v0.4.0")
}

func TestUpgradeManualActivation(t *testing.T) {
	l := newLifecycle(t)
	old, _ := pushSample(t, l.env, "function-patch-and-transform", "v0.9.0")
	pushSample(t, l.env, "function-patch-and-transform", "v0.10.8")
	const name = "manual-fn"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", old, name, "--manual-activation").Succeeds(t)
	// --wait without --activate could only time out: refused before
	// anything changes.
	r := x.Run("upgrade", "function/"+name, "v0.10.8", "--wait=1m").Fails(t, 1)
	contains(t, "wait without activate", r.Stderr, "function/"+name+" activates revisions by hand: with --wait, pass --activate too")
	fn, err := l.dyn.Resource(schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "functions"}).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if src, _, _ := unstructured.NestedString(fn.Object, "spec", "package"); src != old {
		t.Errorf("the refused upgrade changed spec.package to %s", src)
	}
	r = x.Run("upgrade", "function/"+name, "v0.10.8").Succeeds(t)
	contains(t, "manual", r.Stderr, "INFO     function/"+name+" activates revisions by hand: the new revision waits until activated (pass --activate); from Crossplane v2.4 any edit of its spec does the same, not only a new package reference [manual-activation]")
	r = x.Run("upgrade", name, "v0.9.0", "--activate").Succeeds(t) // back to the first, inactive since
	oldRev := pkgmanager.RevisionName(name, old)
	contains(t, "activate", r.Stdout, "revision "+oldRev+" activated")
	// The result line says "from" what the plan's header says (the image
	// of the revision it plans from, v0.9.0's), not spec.package's
	// v0.10.8, which never ran.
	header := regexp.MustCompile(`Plan: upgrade function/` + name + ` from \S+:(v[0-9.]+) to `).FindStringSubmatch(r.Stderr)
	result := regexp.MustCompile(`function/` + name + ` upgraded from (\S+) to v0.9.0`).FindStringSubmatch(r.Stdout)
	if header == nil || result == nil || header[1] != result[1] {
		t.Errorf("the plan's header and the result line disagree on from:\n%s%s", r.Stderr, r.Stdout)
	}
	if s := l.desiredStates(t, "functionrevisions", name); s[oldRev] != "Active" {
		t.Errorf("revisions: %v", s)
	}
}

// TestUpgradeWaitFailsWhenAnotherWriterMovesThePackage: while --wait
// waits (the package manager answers late), another writer points the
// package at a third version, which the package manager installs healthy:
// that is not this upgrade's success. The wait fails with exit status 4
// naming both references, and --atomic does not undo the other writer's
// change.
func TestUpgradeWaitFailsWhenAnotherWriterMovesThePackage(t *testing.T) {
	l := newLifecycle(t)
	first, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
	newer, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "moved-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", first, name, "--wait=60s").Succeeds(t)

	for _, atomic := range []bool{false, true} {
		// The package manager answers only once the other writer has come
		// in (an answer merely late, 3 s, could come first on a loaded
		// machine, and the upgrade would succeed).
		gate := make(chan struct{})
		l.mgr.Manage(name, pkgmanager.Behaviour{Gate: gate})
		// Each round starts from first: the other writer puts it back.
		target, other := newer, first
		args := []string{"upgrade", name, target[strings.LastIndex(target, ":")+1:], "--wait=60s", "--force"}
		if atomic {
			args = append(args, "--atomic")
		}
		run := x.Start(args...)
		// Once the upgrade waits on its reference, another writer sets
		// theirs.
		eventually(t, "the upgrade's wait sees the package at its reference", func() bool {
			return strings.Contains(run.Stderr(), "provider/"+name+": revision "+pkgmanager.RevisionName(name, first)+" (Active) for "+first)
		})
		u, err := l.dyn.Resource(providersGVR).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(u.Object, other, "spec", "package")
		if _, err := l.dyn.Resource(providersGVR).Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		close(gate)
		r := run.Wait().Fails(t, 4)
		contains(t, "moved", r.Stderr, "provider/"+name+" now points at "+other+", not at "+target+": someone else changed it while waiting")
		if src := l.packageSource(t, name); src != other {
			t.Errorf("atomic=%v: the other writer's %s was replaced by %s", atomic, other, src)
		}
	}
}

// TestAtomicUpgradeRollsBackWhenInterrupted: Ctrl-C during an --atomic
// upgrade's wait undoes it: the package points back at what it ran, the
// rollback is waited for, and the message says so (exit 130).
func TestAtomicUpgradeRollsBackWhenInterrupted(t *testing.T) {
	l := newLifecycle(t)
	first, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
	newer, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "atomic-int-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", first, name, "--wait=60s").Succeeds(t)

	// newer never gets healthy; what it rolls back to installs healthy.
	l.mgr.Manage(name, pkgmanager.Behaviour{Unhealthy: true, Image: newer})
	run := x.Start("upgrade", name, "v0.4.0", "--atomic", "--wait=2m")
	eventually(t, "the upgrade sets its reference", func() bool { return l.packageSource(t, name) == newer })
	eventually(t, "the upgrade's wait sees the new revision not healthy", func() bool {
		return strings.Contains(run.Stderr(), "provider/"+name+": Healthy=False")
	})
	if err := run.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := run.Wait().Fails(t, 130)
	contains(t, "interrupted atomic upgrade", r.Stderr,
		"provider/"+name+": "+newer+" was interrupted", "rolling back to "+first,
		"error: interrupted by SIGINT: upgrade provider/"+name+": "+newer+" failed (context canceled); rolled back to "+first+", which is installed and healthy")
	if src := l.packageSource(t, name); src != first {
		t.Errorf("after the interrupted --atomic upgrade the package points at %s", src)
	}
}

// TestForceNeverGoesAheadWithoutAPlan: a target the plan cannot read
// (here a tag its registry does not have) stops the upgrade with nothing
// changed, --force or not: --force overrides findings, not a missing
// plan. --no-plan makes the change without one, saying so.
func TestForceNeverGoesAheadWithoutAPlan(t *testing.T) {
	l := newLifecycle(t)
	old, _ := pushSample(t, l.env, "provider-nop", "v0.2.1")
	const name = "unplanned-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", old, name, "--wait=60s").Succeeds(t)
	r := x.Run("upgrade", name, "v9.9.9", "--force").Fails(t, 1)
	contains(t, "forced upgrade without a plan", r.Stderr, "error: nothing changed, the upgrade could not be planned (--no-plan makes it without a plan): plan the upgrade of provider/"+name+": ", "MANIFEST_UNKNOWN")
	if src := l.packageSource(t, name); src != old {
		t.Fatalf("an upgrade whose plan could not be made changed the package to %s", src)
	}
	x.Run("upgrade", name, "v9.9.9", "--no-plan", "--force").Fails(t, 1)
	r = x.Run("upgrade", name, "v9.9.9", "--no-plan").Succeeds(t)
	contains(t, "upgrade --no-plan", r.Stderr, "Warning: going ahead without a plan (--no-plan): nothing checked what the upgrade does")
	if src := l.packageSource(t, name); !strings.HasSuffix(src, ":v9.9.9") {
		t.Errorf("upgrade --no-plan left the package at %s", src)
	}
}
