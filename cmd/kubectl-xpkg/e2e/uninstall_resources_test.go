package e2e

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestUninstallWithResourcesDelete(t *testing.T) {
	td := setUpTeardown(t, "teardown-delete", "del")
	plain, orphan, observe := td.objs[0], td.objs[1], td.objs[2]
	before := versions(td.c.nopResources())
	x := td.x

	td.refusedWithoutTheFlag(t)

	r := x.Run("uninstall", "provider/"+td.nop, "--with-resources=delete", "--dry-run")
	t.Logf("transcript:\n$ kubectl xpkg uninstall provider/%s --with-resources=delete --dry-run\n%s%s", td.nop, r.Stdout, r.Stderr)
	r.Succeeds(t)
	td.checkTeardownText(t, "uninstall --with-resources=delete --dry-run", "delete", r.Stdout, map[string][]string{
		plain.name:   {"deleted with it", "deletionPolicy Delete"},
		orphan.name:  {"kept", "deletionPolicy Orphan"},
		observe.name: {"kept", "[Observe]", "has no Delete"},
	})
	td.unchanged(t, "uninstall --with-resources=delete --dry-run", before)

	r = x.Run("uninstall", "provider/"+td.nop, "--with-resources=delete", "--dry-run", "-o", "json").Succeeds(t)
	liveObjectsNotBlocking(t, r.Stdout)
	mode, fates := teardownFates(t, r.Stdout)
	if mode != "delete" {
		t.Errorf("the teardown's mode is %q, want delete", mode)
	}
	want := map[string][2]string{
		plain.name:   {plain.external, "deleted"},
		orphan.name:  {orphan.external, "kept"},
		observe.name: {observe.external, "kept"},
	}
	if !maps.Equal(fates, want) {
		t.Errorf("the teardown's objects (name: externalName, fate): %v, want %v\n%s", fates, want, r.Stdout)
	}
	td.unchanged(t, "uninstall --with-resources=delete --dry-run -o json", before)

	start := time.Now()
	r = x.Run("uninstall", "provider/"+td.nop, "--with-resources=delete", "--yes", "--wait=3m")
	t.Logf("transcript (%s):\n$ kubectl xpkg uninstall provider/%s --with-resources=delete --yes --wait=3m\n%s%s",
		time.Since(start).Round(time.Second), td.nop, r.Stdout, r.Stderr)
	r.Succeeds(t)
	td.deletedLines(t, "uninstall --with-resources=delete", r.Stdout)
	td.gone(t)
	wantExt := map[string]externalResource{
		plain.external:   {Created: 1, Deleted: 1},
		orphan.external:  {Created: 1, Present: true},
		observe.external: {Present: true},
	}
	if got := td.p.snapshot(); !maps.Equal(got, wantExt) {
		t.Errorf("the external system after the teardown: %+v, want %+v", got, wantExt)
	}
}

// TestUninstallWithResourcesOrphan: the objects of
// TestUninstallWithResourcesDelete. --with-resources=orphan plans every
// object kept; carried out, it first sets each object's policies to keep
// its external resource, then deletes the objects, the provider and its
// CRD: the external system deletes nothing.
func TestUninstallWithResourcesOrphan(t *testing.T) {
	td := setUpTeardown(t, "teardown-orphan", "orph")
	before := versions(td.c.nopResources())
	x := td.x

	r := x.Run("uninstall", "provider/"+td.nop, "--with-resources=orphan", "--dry-run")
	t.Logf("transcript:\n$ kubectl xpkg uninstall provider/%s --with-resources=orphan --dry-run\n%s%s", td.nop, r.Stdout, r.Stderr)
	r.Succeeds(t)
	kept := map[string][]string{}
	for _, m := range td.objs {
		kept[m.name] = []string{"kept"}
	}
	td.checkTeardownText(t, "uninstall --with-resources=orphan --dry-run", "orphan", r.Stdout, kept)
	for _, m := range td.objs {
		if l := planLine(t, "uninstall --with-resources=orphan --dry-run", r.Stdout, m); strings.Contains(l, "deleted with it") {
			t.Errorf("--with-resources=orphan plans the external resource of %s deleted: %q", m.name, l)
		}
	}
	td.unchanged(t, "uninstall --with-resources=orphan --dry-run", before)

	r = x.Run("uninstall", "provider/"+td.nop, "--with-resources=orphan", "--dry-run", "-o", "json").Succeeds(t)
	mode, fates := teardownFates(t, r.Stdout)
	if mode != "orphan" {
		t.Errorf("the teardown's mode is %q, want orphan", mode)
	}
	want := map[string][2]string{}
	for _, m := range td.objs {
		want[m.name] = [2]string{m.external, "kept"}
	}
	if !maps.Equal(fates, want) {
		t.Errorf("the teardown's objects (name: externalName, fate): %v, want %v\n%s", fates, want, r.Stdout)
	}
	td.unchanged(t, "uninstall --with-resources=orphan --dry-run -o json", before)

	start := time.Now()
	r = x.Run("uninstall", "provider/"+td.nop, "--with-resources=orphan", "--yes", "--wait=3m")
	t.Logf("transcript (%s):\n$ kubectl xpkg uninstall provider/%s --with-resources=orphan --yes --wait=3m\n%s%s",
		time.Since(start).Round(time.Second), td.nop, r.Stdout, r.Stderr)
	r.Succeeds(t)
	td.deletedLines(t, "uninstall --with-resources=orphan", r.Stdout)
	td.gone(t)
	got := td.p.snapshot()
	for _, m := range td.objs {
		if e := got[m.external]; e.Deleted != 0 || !e.Present {
			t.Errorf("external resource %s of %s: %+v, want kept", m.external, m.name, e)
		}
	}
	if len(got) != len(td.objs) {
		t.Errorf("the external system holds %+v, want one resource per NopResource", got)
	}
}

// TestUninstallWithResourcesResumes: the objects of
// TestUninstallWithResourcesDelete, the stand-in stopped once they are
// set up, so that nothing removes their finalizer. The teardown deletes
// them and gives up after --wait 20s (exit 124), naming each object still
// there and its finalizer, with the provider still installed. Planned
// again, the teardown still has the three objects; the same command run
// again, the stand-in started once it has planned, resumes and finishes.
func TestUninstallWithResourcesResumes(t *testing.T) {
	td := setUpTeardown(t, "teardown-resume", "res")
	plain, orphan, observe := td.objs[0], td.objs[1], td.objs[2]
	x := td.x
	td.p.stop()

	start := time.Now()
	r := x.Run("uninstall", "provider/"+td.nop, "--with-resources=delete", "--yes", "--wait=20s")
	t.Logf("transcript (%s):\n$ kubectl xpkg uninstall provider/%s --with-resources=delete --yes --wait=20s\n%s%s",
		time.Since(start).Round(time.Second), td.nop, r.Stdout, r.Stderr)
	r.Fails(t, 124)
	contains(t, "uninstall --with-resources=delete --wait=20s", r.Stderr, mrFinalizer)
	for _, m := range td.objs {
		contains(t, "uninstall --with-resources=delete --wait=20s", r.Stderr, m.name)
	}
	live := td.c.nopResources()
	for _, m := range td.objs {
		u := live[m.name]
		if u == nil || u.GetDeletionTimestamp() == nil || !slices.Equal(u.GetFinalizers(), []string{mrFinalizer}) {
			t.Errorf("NopResource %s after the stage gave up: %v, want being deleted, held by %s", m.name, u, mrFinalizer)
		}
	}
	if p := td.c.get("providers", td.nop); p == nil || p.GetDeletionTimestamp() != nil {
		t.Errorf("provider/%s is gone or being deleted after the objects' stage gave up: %v", td.nop, p)
	}
	if crd := td.c.crd(); crd == nil || crd.GetDeletionTimestamp() != nil {
		t.Errorf("CRD %s is gone or being deleted after the objects' stage gave up", nopCRD)
	}
	if got := td.p.snapshot(); !maps.Equal(got, td.external) {
		t.Errorf("the external system changed while the stand-in was stopped: %+v, was %+v", got, td.external)
	}

	// Planned again while nothing removes the finalizer, the teardown
	// still has the three objects, each with its fate.
	fates := map[string][]string{plain.name: {"deleted with it"}, orphan.name: {"kept"}, observe.name: {"kept"}}
	r = x.Run("uninstall", "provider/"+td.nop, "--with-resources=delete", "--dry-run")
	t.Logf("transcript:\n$ kubectl xpkg uninstall provider/%s --with-resources=delete --dry-run\n%s%s", td.nop, r.Stdout, r.Stderr)
	r.Succeeds(t)
	td.checkTeardownText(t, "uninstall --with-resources=delete --dry-run, the objects being deleted", "delete", r.Stdout, fates)

	// The same command again; the stand-in starts once it has planned,
	// the objects still there, so that it resumes rather than finds
	// nothing left to do.
	start = time.Now()
	run := x.Start("uninstall", "provider/"+td.nop, "--with-resources=delete", "--yes", "--wait=3m")
	heading := "Teardown (--with-resources=delete): 3 managed resource"
	if err := waitFor(time.Minute, func() error {
		select {
		case <-run.Exited():
			return nil
		default:
		}
		if !strings.Contains(run.Stderr(), heading) {
			return errors.New("the command has not printed its plan")
		}
		return nil
	}); err != nil {
		t.Errorf("uninstall --with-resources=delete, run again: %v after 1m:\n%s", err, run.Stderr())
	}
	td.p.start()
	r = run.Wait()
	t.Logf("transcript (%s):\n$ kubectl xpkg uninstall provider/%s --with-resources=delete --yes --wait=3m\n%s%s",
		time.Since(start).Round(time.Second), td.nop, r.Stdout, r.Stderr)
	r.Succeeds(t)
	td.checkTeardownText(t, "uninstall --with-resources=delete, run again", "delete", r.Stdout+r.Stderr, fates)
	td.deletedLines(t, "uninstall --with-resources=delete, run again", r.Stdout)
	td.gone(t)
	want := map[string]externalResource{
		plain.external:   {Created: 1, Deleted: 1},
		orphan.external:  {Created: 1, Present: true},
		observe.external: {Present: true},
	}
	if got := td.p.snapshot(); !maps.Equal(got, want) {
		t.Errorf("the external system after the teardown: %+v, want %+v", got, want)
	}
}
