package e2e

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// TestDoctorFixRestoresAfterAPrune is crossplane#6268 repaired: a
// provider deleted (as a prune would) while three NopResources with the
// managed-resource finalizer exist, their external resources made by the
// stand-in provider, which stops with it. The CRD stays Terminating.
// While the provider is not installed, doctor --fix changes nothing
// (exit 3) and names the two ways out. Once it is installed again (an
// active revision, the CRD still Terminating), doctor --fix saves the
// objects, removes the finalizer, waits for the package manager to make
// the CRD again and recreates each object under its external name:
// the external system sees no deletion and no second creation, and
// doctor finds nothing. The stand-in stays stopped from the prune until
// the repair is done, as the provider's runtime does when installed again
// with a DeploymentRuntimeConfig of replicas: 0, as doctor advises: a
// running controller would delete what the objects manage first.
func TestDoctorFixRestoresAfterAPrune(t *testing.T) {
	env, reg, c, x := start(t)
	const nop = "e2e-fix-prune-provider-nop"
	ref := pushFixNop(t, reg, "e2e/fix-prune/provider-nop", "v0.4.0")
	t.Cleanup(func() { cleanUpFix(t, env, c, nop) })
	objs := fixObjects("prune")

	p, before, oldUID := c.installManaged(x, ref, objs)
	held := c.prune(x, nop, objs)
	r := x.Run("doctor").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s%s", r.Stdout, r.Stderr)
	contains(t, "doctor", r.Stdout, "BLOCKING CRD "+nopCRD+" has been deleting for ", "[definition-terminating]")

	// Not installed: nothing to make the CRD again from.
	r = x.Run("doctor", "--fix", "--yes").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg doctor --fix --yes\n%s%s", r.Stdout, r.Stderr)
	contains(t, "doctor --fix (not installed)", r.Stdout+r.Stderr, "doctor --fix", "--orphan-external-resources")
	if !strings.Contains(strings.ToLower(r.Stdout+r.Stderr), "install") {
		t.Errorf("doctor --fix (not installed) does not say to install the provider again:\n%s%s", r.Stdout, r.Stderr)
	}
	if got := versions(c.nopResources()); !maps.Equal(got, versions(held)) {
		t.Errorf("doctor --fix changed NopResources while refusing: %v, were %v", got, versions(held))
	}
	if c.crdUID() != oldUID {
		t.Errorf("doctor --fix changed CRD %s while refusing", nopCRD)
	}

	// Installed again: its revision is active, the CRD still Terminating.
	r = x.Run("install", ref, "--force")
	t.Logf("transcript:\n$ kubectl xpkg install %s --force\n%s%s", ref, r.Stderr, r.Stdout)
	r.Succeeds(t)
	c.awaitActiveRevision(nop, 3*time.Minute)
	// Let the package manager settle on it before doctor reads it.
	if err := c.awaitHealthy("providers", nop, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.yaml")
	r = x.Run("doctor", "--fix", "--yes", "--backup", backup, "--wait", "3m")
	t.Logf("transcript:\n$ kubectl xpkg doctor --fix --yes --backup backup.yaml --wait 3m\n%s%s", r.Stdout, r.Stderr)
	r.Succeeds(t)
	contains(t, "doctor --fix", r.Stdout, mrFinalizer+" removed", "made again", "recreated")
	for _, m := range objs {
		contains(t, "doctor --fix", r.Stdout, m.name)
	}
	checkRepaired(t, x, c, p, repaired{backup: backup, oldUID: oldUID, before: before, objs: objs})
}

// TestDoctorFixAfterAnUpgradeDroppedTheKind is crossplane#7173's route,
// where a change of packages rather than a prune starts the definition's
// deletion. An upgrade cannot start it on Crossplane v2.3 and v2.4: every
// revision whose package carries a definition, active or not, and the
// package itself own its MRD, so an upgrade to a version without the kind
// followed by the deletion of the old revision leaves the MRD, and the
// CRD it owns, standing, owned by the package (checked on v2.4.2 while
// writing this test); so does a second package of the kind installed
// beside the first, even under Manual activation, whose inactive
// revision becomes an owner too. The route is therefore a hand-off in
// which the new revision never takes control before the old package is
// deleted: the new package made paused, as kubectl xpkg rename makes it
// (the package manager makes no revision of a paused package), and the
// old package deleted before the new one is unpaused, as a hand-off cut
// short or done out of order would. The garbage collector deletes the MRD
// and the CRD that the old package alone owned; the CRD stays
// Terminating, held by the NopResources whose provider is gone. Unpaused,
// the new package's revision serves the kind again, and doctor --fix
// restores every object under its external name, with nothing deleted or
// made twice in the external system.
func TestDoctorFixAfterAnUpgradeDroppedTheKind(t *testing.T) {
	env, reg, c, x := start(t)
	const (
		old = "e2e-fix-handoff-provider-nop"
		nu  = "fix-handoff-nop"
	)
	ref := pushFixNop(t, reg, "e2e/fix-handoff/provider-nop", "v0.4.0")
	t.Cleanup(func() { cleanUpFix(t, env, c, old, nu) })
	objs := fixObjects("handoff")

	p, before, oldUID := c.installManaged(x, ref, objs)

	// The hand-off: the new package made paused, the old one deleted.
	manifest := filepath.Join(t.TempDir(), "provider.yaml")
	paused := "apiVersion: pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: " + nu +
		"\n  annotations:\n    crossplane.io/paused: \"true\"\nspec:\n  package: " + ref + "\n"
	if err := os.WriteFile(manifest, []byte(paused), 0o600); err != nil {
		t.Fatal(err)
	}
	x.Kubectl("apply", "-f", manifest).Succeeds(t)
	x.Kubectl("delete", "provider.pkg.crossplane.io", old, "--timeout=3m").Succeeds(t)
	c.awaitTerminating("the package that alone owned it was deleted")
	c.awaitHeld(objs)
	r := x.Run("doctor").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s%s", r.Stdout, r.Stderr)
	contains(t, "doctor", r.Stdout, "BLOCKING CRD "+nopCRD+" has been deleting for ", "[definition-terminating]")

	x.Kubectl("annotate", "provider.pkg.crossplane.io", nu, "crossplane.io/paused-").Succeeds(t)
	c.awaitActiveRevision(nu, 3*time.Minute)
	if err := c.awaitHealthy("providers", nu, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	if c.crdUID() != oldUID {
		t.Fatalf("CRD %s was made again before the repair", nopCRD)
	}

	backup := filepath.Join(t.TempDir(), "backup.yaml")
	r = x.Run("doctor", "--fix", "--yes", "--backup", backup, "--wait", "3m")
	t.Logf("transcript:\n$ kubectl xpkg doctor --fix --yes --backup backup.yaml --wait 3m\n%s%s", r.Stdout, r.Stderr)
	r.Succeeds(t)
	contains(t, "doctor --fix", r.Stdout, mrFinalizer+" removed", "made again", "recreated")
	checkRepaired(t, x, c, p, repaired{backup: backup, oldUID: oldUID, before: before, objs: objs})
}

// TestDoctorFixOrphansWhenAskedTo: the prune of
// TestDoctorFixRestoresAfterAPrune, the provider not installed again.
// doctor --fix --orphan-external-resources names every external resource
// it leaves unmanaged, saves the objects, removes their finalizers, and
// the CRD's deletion finishes; the external system keeps every resource.
func TestDoctorFixOrphansWhenAskedTo(t *testing.T) {
	env, reg, c, x := start(t)
	const nop = "e2e-fix-orphan-provider-nop"
	ref := pushFixNop(t, reg, "e2e/fix-orphan/provider-nop", "v0.4.0")
	t.Cleanup(func() { cleanUpFix(t, env, c, nop) })
	objs := fixObjects("orphan")

	p, _, _ := c.installManaged(x, ref, objs)
	c.prune(x, nop, objs)

	backup := filepath.Join(t.TempDir(), "backup.yaml")
	r := x.Run("doctor", "--fix", "--yes", "--orphan-external-resources", "--backup", backup, "--wait", "3m")
	t.Logf("transcript:\n$ kubectl xpkg doctor --fix --yes --orphan-external-resources --backup backup.yaml --wait 3m\n%s%s", r.Stdout, r.Stderr)
	r.Succeeds(t)
	for _, m := range objs {
		contains(t, "doctor --fix --orphan-external-resources", r.Stdout, m.name, m.external)
	}
	checkBackup(t, backup, objs)
	if !c.awaitCRD(nopCRD, time.Minute, func(u *unstructured.Unstructured) bool { return u == nil }) {
		t.Errorf("CRD %s is still there after the repair", nopCRD)
	}
	ext := p.snapshot()
	for _, m := range objs {
		if r := ext[m.external]; r.Created != 1 || r.Deleted != 0 || !r.Present {
			t.Errorf("external resource %s of %s: %+v, want left in place", m.external, m.name, r)
		}
	}
	r = x.Run("doctor")
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s%s", r.Stdout, r.Stderr)
	r.Succeeds(t)
}

// repaired is what a restoring doctor --fix had to work from.
type repaired struct {
	backup string
	oldUID types.UID
	before map[string]*unstructured.Unstructured
	objs   []managed
}

// checkRepaired checks what a restoring doctor --fix leaves: its backup
// whole and taken by kubectl apply (as the repair says), the CRD made
// again (a new UID) and established, every object back as it was, the
// stand-in taking each up again without deleting or creating anything,
// and doctor finding nothing.
func checkRepaired(t *testing.T, x *clitest.Test, c cluster, p *standInProvider, rp repaired) {
	t.Helper()
	checkBackup(t, rp.backup, rp.objs)
	x.Kubectl("apply", "--dry-run=server", "-f", rp.backup).Succeeds(t)
	crd, err := c.dyn.Resource(crdsGVR).Get(context.Background(), nopCRD, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("CRD %s after the repair: %v", nopCRD, err)
	}
	if crd.GetUID() == rp.oldUID || crd.GetDeletionTimestamp() != nil || !established(crd) {
		t.Errorf("CRD %s after the repair: UID %s (was %s), deleting since %v, established %v; want made again and established",
			nopCRD, crd.GetUID(), rp.oldUID, crd.GetDeletionTimestamp(), established(crd))
	}
	checkRestored(t, rp.before, c.nopResources(), rp.objs)

	rerunStandIn(t, c, p, rp.objs)
	checkExternal(t, p, rp.objs)
	r := x.Run("doctor")
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s%s", r.Stdout, r.Stderr)
	r.Succeeds(t)
}
