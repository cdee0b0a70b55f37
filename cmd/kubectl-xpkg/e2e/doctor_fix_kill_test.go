package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDoctorFixInterruptedResumes: the prune of
// TestDoctorFixRestoresAfterAPrune, the provider installed again. Its
// doctor --fix is interrupted (SIGINT) once it has removed the
// finalizers and the package manager has made the CRD again, while a
// webhook holds its first recreation: it exits 130, says what it did and
// what is left (every object to make again, none of them made) and names
// its backup, which holds every object whole. doctor then finds the
// repair cut short (unfinished-operation, blocking, naming the backup);
// doctor --fix, run without --backup, makes every object again from the
// backup the record names, under its external name, and removes the
// record: the external system sees no deletion and no
// second creation, and doctor finds nothing.
func TestDoctorFixInterruptedResumes(t *testing.T) {
	env, reg, c, x := start(t)
	const nop = "e2e-fix-kill-provider-nop"
	ref := pushFixNop(t, reg, "e2e/fix-kill/provider-nop", "v0.4.0")
	t.Cleanup(func() { cleanUpFix(t, env, c, nop) })
	objs := fixObjects("kill")

	p, before, oldUID := c.installManaged(x, ref, objs)
	// Registered while the kind is served (the API server refuses any
	// creation, the probe's too, while its CRD is being deleted): the
	// first NopResource created from here on is the repair's first
	// recreation.
	probe := managed{name: "kill-probe"}.object()
	h := c.holdAt(t, nopGVR, "CREATE", 1, func() error {
		_, err := c.dyn.Resource(nopGVR).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})

	c.prune(x, nop, objs)
	x.Run("install", ref, "--force").Succeeds(t)
	c.awaitActiveRevision(nop, 3*time.Minute)
	if err := c.awaitHealthy("providers", nop, 3*time.Minute); err != nil {
		t.Fatal(err)
	}

	backup := filepath.Join(t.TempDir(), "backup.yaml")
	r := interruptWhen(t, x, "while the webhook held the first recreation", held(h),
		"doctor", "--fix", "--yes", "--backup", backup, "--wait", "3m")
	h.remove()
	r.Fails(t, 130)
	checkCutShort(t, r.Stdout, r.Stderr, backup, objs)
	checkBackup(t, backup, objs)
	if live := c.nopResources(); len(live) != 0 {
		t.Errorf("NopResources after the interruption: %v, want none (the held creation never lands)", versions(live))
	}

	r = x.Run("doctor").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s%s", r.Stdout, r.Stderr)
	contains(t, "doctor after the interruption", r.Stdout, "BLOCKING", "[unfinished-operation]", backup)

	r = x.Run("doctor", "--fix", "--yes", "--wait", "3m")
	t.Logf("transcript:\n$ kubectl xpkg doctor --fix --yes --wait 3m\n%s%s", r.Stdout, r.Stderr)
	r.Succeeds(t)
	contains(t, "doctor --fix resumed", r.Stdout, "record of the repair cut short removed")
	for _, m := range objs {
		contains(t, "doctor --fix resumed", r.Stdout, nopCRD+"/"+m.name+" recreated with external name "+m.external)
	}
	checkRepaired(t, x, c, p, repaired{backup: backup, oldUID: oldUID, before: before, objs: objs})
}

// checkCutShort: the interrupted repair says, on stderr, that SIGINT
// stopped it, what it did (each finalizer removed, the CRD made again)
// and what is left (each object to make again), and names its backup;
// it says of no object that it was made again.
func checkCutShort(t *testing.T, stdout, stderr, backup string, objs []managed) {
	t.Helper()
	const what = "doctor --fix interrupted"
	contains(t, what, stderr, "interrupted by SIGINT", "the backup "+backup, "kubectl xpkg doctor --fix")
	done, left, ok := strings.Cut(stderr, "; left: ")
	if !ok {
		t.Fatalf("%s does not say what is left:\n%s", what, stderr)
	}
	contains(t, what+" (done)", done, "done: ", "await-definition customresourcedefinition/"+nopCRD)
	contains(t, what+" (stdout)", stdout, "customresourcedefinition/"+nopCRD+" gone and made again by the package manager")
	for _, m := range objs {
		contains(t, what+" (done)", done, "remove-finalizer "+nopCRD+"/"+m.name)
		contains(t, what+" (left)", left, "recreate "+nopCRD+"/"+m.name)
		contains(t, what+" (stdout)", stdout, nopCRD+"/"+m.name+": "+mrFinalizer+" removed")
		if s := "recreate " + nopCRD + "/" + m.name; strings.Contains(done, s) {
			t.Errorf("%s says it did %q, which it did not:\n%s", what, s, stderr)
		}
		if s := nopCRD + "/" + m.name + " recreated"; strings.Contains(stdout, s) {
			t.Errorf("%s says %q, which it did not do:\n%s", what, s, stdout)
		}
	}
}
