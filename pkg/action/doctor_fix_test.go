package action

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

var (
	fnRevResource = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "functionrevisions"}
	lockResource  = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}
)

// withUID gives an object the identity the API server would.
func withUID(u *unstructured.Unstructured, uid string) *unstructured.Unstructured {
	u.SetUID(types.UID(uid))
	u.SetResourceVersion("7")
	u.SetGeneration(1)
	return u
}

// duplicateRevisions is issue 28's route: a Manual Function with two
// revisions in the Lock, the newer current; fn-aaa is what to delete.
func duplicateRevisions() []*unstructured.Unstructured {
	return append(healthyNop(),
		withSpec(pkgObj("Function", "fn", fnRepo+":v0.1.0", "fn-bbb"), "revisionActivationPolicy", "Manual"),
		withUID(pkgRev("Function", "fn", "fn-aaa", fnRepo+":v0.1.0", 1, ""), "uid-aaa"),
		withUID(pkgRev("Function", "fn", "fn-bbb", fnRepo+":v0.1.0", 2, ""), "uid-bbb"),
		withUID(unresolvedLock("cannot build DAG: node "+fnRepo+" already exists",
			entry("fn-aaa", "Function", fnRepo, "v0.1.0"),
			entry("fn-bbb", "Function", fnRepo, "v0.1.0"),
			entry("org-provider-nop-aaa", "Provider", nopRepo, "v0.2.0")), "uid-lock"),
	)
}

func planRepair(t *testing.T, d *Doctor) *Report {
	t.Helper()
	rep, err := d.PlanRepair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestDoctorFixDeletesTheStaleRevision(t *testing.T) {
	c, dyn := fakeClusterDyn(t, duplicateRevisions()...)
	d := NewDoctor(&Config{cluster: c})
	rep := planRepair(t, d)
	if len(rep.Repair.Steps) != 1 {
		t.Fatalf("steps %+v, want one", rep.Repair.Steps)
	}
	st := rep.Repair.Steps[0]
	if st.Action != diagnose.RepairDelete || st.Object != "functionrevision/fn-aaa" || st.Rule != findings.RuleDuplicateLockNode ||
		!strings.Contains(st.Message, "not its current revision (fn-bbb)") {
		t.Errorf("step %+v", st)
	}

	objs, err := d.Backup(context.Background(), rep)
	if err != nil || len(objs) != 1 {
		t.Fatalf("backup: %d objects, %v", len(objs), err)
	}
	b := objs[0]
	if b.GetName() != "fn-aaa" || b.GetKind() != "FunctionRevision" || b.GetUID() != "" || b.GetResourceVersion() != "" || b.Object["status"] != nil {
		t.Errorf("the backup is not the revision as kubectl apply takes it: %v", b.Object)
	}
	if b.GetLabels()["pkg.crossplane.io/package"] != "fn" {
		t.Errorf("the backup lost the revision's labels: %v", b.Object)
	}

	dyn.ClearActions()
	if err := d.Repair(context.Background(), rep, RepairOptions{}); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, a := range dyn.Actions() {
		if del, ok := a.(clienttesting.DeleteActionImpl); ok {
			deleted = append(deleted, del.Name)
			pre := del.DeleteOptions.Preconditions
			if pre == nil || pre.UID == nil || *pre.UID != "uid-aaa" || pre.ResourceVersion == nil || *pre.ResourceVersion != "7" {
				t.Errorf("the deletion's preconditions are %+v, want the revision's UID and resourceVersion", pre)
			}
		}
	}
	if len(deleted) != 1 || deleted[0] != "fn-aaa" {
		t.Errorf("deleted %v, want [fn-aaa]", deleted)
	}
	if got := rep.Repair.Done; len(got) != 1 {
		t.Errorf("done %v", got)
	}
}

// TestDoctorFixStopsWhenAnotherWriterChangedTheRevision: a revision
// activated between the plan and the repair is no longer what the plan
// deletes: exit 4, nothing deleted.
func TestDoctorFixStopsWhenAnotherWriterChangedTheRevision(t *testing.T) {
	c, dyn := fakeClusterDyn(t, duplicateRevisions()...)
	d := NewDoctor(&Config{cluster: c})
	rep := planRepair(t, d)
	ctx := context.Background()
	u, err := dyn.Resource(fnRevResource).Get(ctx, "fn-aaa", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(u.Object, "Active", "spec", "desiredState")
	u.SetGeneration(2)
	if _, err := dyn.Resource(fnRevResource).Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn.ClearActions()
	err = d.Repair(ctx, rep, RepairOptions{})
	if exit.Code(err) != exit.PlanChanged || !strings.Contains(err.Error(), "functionrevision/fn-aaa") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("repair after another writer: exit %d, %v; want %d naming the revision", exit.Code(err), err, exit.PlanChanged)
	}
	for _, a := range dyn.Actions() {
		if a.GetVerb() == "delete" {
			t.Errorf("deleted despite the change: %v", a)
		}
	}
}

// TestDoctorFixLeavesWhatItCannotProve: two packages of one source (which
// to keep is the user's call), and a non-current revision that is still
// active (the package manager is half-way through an upgrade).
func TestDoctorFixLeavesWhatItCannotProve(t *testing.T) {
	twins := []*unstructured.Unstructured{
		pkgObj("Provider", "my-nop", nopRepo+":v0.2.0", "my-nop-aaa"),
		pkgRev("Provider", "my-nop", "my-nop-aaa", nopRepo+":v0.2.0", 1, "Active"),
		pkgObj("Provider", "org-provider-nop", nopRepo+":v0.2.0", "org-provider-nop-bbb"),
		pkgRev("Provider", "org-provider-nop", "org-provider-nop-bbb", nopRepo+":v0.2.0", 1, "Active"),
		lock(entry("my-nop-aaa", "Provider", nopRepo, "v0.2.0"), entry("org-provider-nop-bbb", "Provider", nopRepo, "v0.2.0")),
	}
	upgrading := []*unstructured.Unstructured{
		pkgObj("Function", "fn", fnRepo+":v0.2.0", "fn-bbb"),
		pkgRev("Function", "fn", "fn-aaa", fnRepo+":v0.1.0", 1, "Active"),
		pkgRev("Function", "fn", "fn-bbb", fnRepo+":v0.2.0", 2, "Active"),
		lock(entry("fn-aaa", "Function", fnRepo, "v0.1.0"), entry("fn-bbb", "Function", fnRepo, "v0.2.0")),
	}
	for name, objs := range map[string][]*unstructured.Unstructured{"twins": twins, "upgrading": upgrading} {
		t.Run(name, func(t *testing.T) {
			rep := planRepair(t, NewDoctor(&Config{cluster: fakeCluster(t, objs...)}))
			want(t, rep, findings.RuleDuplicateLockNode, 1, findings.Blocking)
			if len(rep.Repair.Steps) != 0 {
				t.Errorf("steps %+v, want none", rep.Repair.Steps)
			}
		})
	}
}

// TestDoctorFixRemovesAGoneRevisionsLockEntry: an entry whose revision no
// longer exists is removed from the Lock, by a patch that tests the
// Lock's UID and the entry; a revision of that name made since stops it.
func TestDoctorFixRemovesAGoneRevisionsLockEntry(t *testing.T) {
	objs := append(healthyNop(), withUID(lock(
		entry("org-provider-nop-aaa", "Provider", nopRepo, "v0.2.0"),
		entry("gone-xyz", "Function", fnRepo, "v0.1.0")), "uid-lock"))
	c, dyn := fakeClusterDyn(t, objs...)
	d := NewDoctor(&Config{cluster: c})
	rep := planRepair(t, d)
	if len(rep.Repair.Steps) != 1 || rep.Repair.Steps[0].Action != diagnose.RepairRemoveLockEntry || rep.Repair.Steps[0].Object != "lock/lock" {
		t.Fatalf("steps %+v, want the Lock entry's removal", rep.Repair.Steps)
	}
	if backup, _, err := backupText(d, rep); err != nil || !strings.Contains(backup, "gone-xyz") || !strings.Contains(backup, "kind: Lock") {
		t.Fatalf("backup %q, %v", backup, err)
	}
	if err := d.Repair(context.Background(), rep, RepairOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := dyn.Resource(lockResource).Get(context.Background(), "lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pkgs, _, _ := unstructured.NestedSlice(u.Object, "packages")
	if len(pkgs) != 1 || pkgs[0].(map[string]any)["name"] != "org-provider-nop-aaa" {
		t.Errorf("the Lock holds %v, want only org-provider-nop-aaa", pkgs)
	}
	// The record of the step on the Lock, the step, the record removed.
	var patches []string
	for _, a := range dyn.Actions() {
		if p, ok := a.(clienttesting.PatchActionImpl); ok {
			if p.PatchType != types.JSONPatchType || !strings.Contains(string(p.Patch), `"op":"test","path":"/metadata/uid","value":"uid-lock"`) {
				t.Errorf("patch %s", p.Patch)
			}
			switch patch := string(p.Patch); {
			case strings.Contains(patch, `"path":"/packages/1/name","value":"gone-xyz"`):
				patches = append(patches, "entry")
			case strings.Contains(patch, `"op":"remove","path":"/metadata/annotations/kubectl-xpkg.github.io~1operation"`):
				patches = append(patches, "record removed")
			case strings.Contains(patch, `\"operation\":\"doctor --fix\"`) && strings.Contains(patch, `\"step\":1`):
				patches = append(patches, "record")
			default:
				t.Errorf("patch %s", patch)
			}
		}
	}
	if strings.Join(patches, ", ") != "record, entry, record removed" {
		t.Errorf("patches: %v, want the record, the entry's removal, the record removed", patches)
	}
	if a := u.GetAnnotations()[installed.OperationAnnotation]; a != "" {
		t.Errorf("the Lock keeps the record %s", a)
	}
}

// TestDoctorFixFinishesARepairCutShort: a repair killed mid-way leaves its
// record on the Lock; doctor names it (unfinished-operation, a warning),
// and the next doctor --fix, with nothing else left to repair, removes it.
func TestDoctorFixFinishesARepairCutShort(t *testing.T) {
	l := withUID(lock(entry("org-provider-nop-aaa", "Provider", nopRepo, "v0.2.0")), "uid-lock")
	l.SetAnnotations(map[string]string{installed.OperationAnnotation: (&installed.Operation{Operation: installed.OperationRepair, ID: "20261128T000000Z-abcdef",
		From: "lock/lock", Step: 2, Of: 2, StepName: "remove-lock-entry lock/lock"}).String()})
	c, dyn := fakeClusterDyn(t, append(healthyNop(), l)...)
	d := NewDoctor(&Config{cluster: c})
	rep, err := d.PlanRepair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var named bool
	for _, f := range rep.Findings {
		named = named || f.Rule == findings.RuleUnfinishedOperation && strings.Contains(f.Message, "doctor --fix 20261128T000000Z-abcdef stopped at step 2 of 2") && strings.Contains(f.Message, "kubectl xpkg doctor --fix")
	}
	if !named || len(rep.Repair.Steps) != 1 || rep.Repair.Steps[0].Action != diagnose.RepairRemoveRecord {
		t.Fatalf("findings %+v, steps %+v: want the repair cut short named and its record's removal planned", rep.Findings, rep.Repair.Steps)
	}
	if err := d.Repair(context.Background(), rep, RepairOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := dyn.Resource(lockResource).Get(context.Background(), "lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := u.GetAnnotations()[installed.OperationAnnotation]; a != "" {
		t.Errorf("the Lock keeps the record %s", a)
	}
	if rep, err := d.Run(context.Background()); err != nil || findings.HasBlocking(rep.Findings) || len(rep.Findings) != 0 {
		t.Errorf("doctor after the repair: %+v, %v", rep, err)
	}
}

func TestDoctorFixStopsWhenTheGoneRevisionIsBack(t *testing.T) {
	objs := append(healthyNop(), withUID(lock(
		entry("org-provider-nop-aaa", "Provider", nopRepo, "v0.2.0"),
		entry("back-xyz", "Function", fnRepo, "v0.1.0")), "uid-lock"))
	c, dyn := fakeClusterDyn(t, objs...)
	d := NewDoctor(&Config{cluster: c})
	rep := planRepair(t, d)
	if len(rep.Repair.Steps) != 1 {
		t.Fatalf("steps %+v", rep.Repair.Steps)
	}
	if _, err := dyn.Resource(fnRevResource).Create(context.Background(), pkgRev("Function", "fn", "back-xyz", fnRepo+":v0.1.0", 1, "Active"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := d.Repair(context.Background(), rep, RepairOptions{})
	if exit.Code(err) != exit.PlanChanged {
		t.Fatalf("exit %d, %v; want %d", exit.Code(err), err, exit.PlanChanged)
	}
}

// TestDoctorFixRemovesAnOrphanedControllerReference: a CRD controlled by
// a revision that no longer exists loses that reference, by a patch that
// tests the CRD's UID and the reference's; the package's own (non
// controller) reference stays. A backup of the CRD is written first.
func TestDoctorFixRemovesAnOrphanedControllerReference(t *testing.T) {
	objs := append(providerP("a.x.example.org"),
		defCRD("a.x.example.org", []string{"v1"}, []string{"v1"}, pOwner, owner("ProviderRevision", "p-1", "u-gone", true)),
		crossplaneAt("v2.3.4"))
	c, dyn := fakeClusterDyn(t, objs...)
	d := NewDoctor(&Config{cluster: c, XPNamespace: xpNamespace})
	rep := planRepair(t, d)
	if len(rep.Repair.Steps) != 1 || rep.Repair.Steps[0].Action != diagnose.RepairRemoveOwnerRef || rep.Repair.Steps[0].Object != "customresourcedefinition/a.x.example.org" ||
		rep.Repair.Steps[0].Rule != findings.RuleControlConflict {
		t.Fatalf("steps %+v", rep.Repair.Steps)
	}
	if backup, n, err := backupText(d, rep); err != nil || n != 1 || !strings.Contains(backup, "kind: CustomResourceDefinition") || !strings.Contains(backup, "u-gone") {
		t.Fatalf("backup %d %v:\n%s", n, err, backup)
	}
	dyn.ClearActions()
	if err := d.Repair(context.Background(), rep, RepairOptions{}); err != nil {
		t.Fatal(err)
	}
	crd := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	u, err := dyn.Resource(crd).Get(context.Background(), "a.x.example.org", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if refs := u.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "u-p" {
		t.Errorf("owner references %+v, want only the package's", refs)
	}
	for _, a := range dyn.Actions() {
		if p, ok := a.(clienttesting.PatchActionImpl); ok && !strings.Contains(string(p.Patch), `{"op":"test","path":"/metadata/ownerReferences/1/uid","value":"u-gone"}`) {
			t.Errorf("patch without the reference's test: %s", p.Patch)
		}
	}
	if r := planRepair(t, d); len(r.Repair.Steps) != 0 || len(ruleFindings(r, findings.RuleControlConflict)) != 0 {
		t.Errorf("after the repair: steps %+v, findings %+v", r.Repair.Steps, r.Findings)
	}
}

// backupText is the objects of the repair's backup as YAML, and how many
// they are.
func backupText(d *Doctor, rep *Report) (string, int, error) {
	objs, err := d.Backup(context.Background(), rep)
	var b strings.Builder
	for _, u := range objs {
		y, yerr := yaml.Marshal(u.Object)
		b.WriteString("---\n" + string(y))
		err = errors.Join(err, yerr)
	}
	return b.String(), len(objs), err
}
