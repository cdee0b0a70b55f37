package action

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// recordOn sets the rename's record at step on u.
func recordOn(u *unstructured.Unstructured, step int, undo bool) *unstructured.Unstructured {
	op := &installed.Operation{Operation: ActionRename, ID: "20261128T060000Z-abcdef", From: "provider/fam-custom", To: "provider/org-provider-family-x",
		Step: step, Of: len(renameSteps), StepName: renameSteps[step-1], Undo: undo}
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[installed.OperationAnnotation] = op.String()
	u.SetAnnotations(a)
	return u
}

func paused(u *unstructured.Unstructured) *unstructured.Unstructured {
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[installed.PausedAnnotation] = "true"
	u.SetAnnotations(a)
	return u
}

// halfRenamed is customFamily as a rename killed at step leaves it: the
// new package made paused (no revision), and from step 2 the old one
// paused, its revision inactive and, from step 3, out of the Lock.
func halfRenamed(step int) []*unstructured.Unstructured {
	objs := customFamily()
	old := recordOn(objs[0], step, false)
	if step >= 2 {
		paused(old)
		_ = unstructured.SetNestedField(objs[1].Object, "Inactive", "spec", "desiredState")
	}
	if step >= 3 {
		objs[7] = lock(entry("member-a-1", "Provider", "r.example.org/org/provider-a", "v1.0.0", famRepo, ">= 0.0.0"))
	}
	created := withUID(paused(recordOn(pkgObj("Provider", "org-provider-family-x", famRepo+":v1.0.0", ""), step, false)), "pkg-new")
	return append(objs, created)
}

func renameOn(c *cluster.Cluster) *Rename {
	r := NewRename(&Config{cluster: c, XPNamespace: "crossplane-system"})
	r.Timeout = time.Minute
	return r
}

// TestRenameResumePlan: a rename cut short is found from its record on
// the old package; the plan finishes it (or, --undo, undoes it), is not
// refused for what the cut left, and another new name is refused.
func TestRenameResumePlan(t *testing.T) {
	for _, step := range []int{1, 2, 3} {
		c := fakeCluster(t, halfRenamed(step)...)
		rp, err := renameOn(c).Plan(context.Background(), "provider/fam-custom")
		if err != nil {
			t.Fatal(err)
		}
		if rp.Resume == nil || rp.Resume.Step != step || rp.created == nil || rp.Undo || rp.Blocking() {
			t.Fatalf("step %d: plan resume %+v, created %v, undo %v, findings %+v", step, rp.Resume, rp.created, rp.Undo, rp.Findings)
		}
		f := planFindings(rp.Plan, findings.RuleUnfinishedOperation)
		if len(f) != 1 || f[0].Severity != findings.Info || !strings.Contains(f[0].Message, "this run finishes it") {
			t.Errorf("step %d: findings %+v", step, rp.Findings)
		}
		if len(rp.Objects) != 2 {
			t.Errorf("step %d: objects %v", step, rp.Objects)
		}
	}
	c := fakeCluster(t, halfRenamed(2)...)
	r := renameOn(c)
	r.Undo = true
	rp, err := r.Plan(context.Background(), "provider/fam-custom")
	if err != nil || !rp.Undo || len(rp.Steps) != 3 || !strings.HasPrefix(rp.Steps[1], "activate provider/fam-custom's current revision fam-custom-aaa") {
		t.Fatalf("undo plan %+v, %v", rp, err)
	}
	r = renameOn(c)
	r.To = "another-name"
	if _, err := r.Plan(context.Background(), "provider/fam-custom"); err == nil || !strings.Contains(err.Error(), "kubectl xpkg rename provider/fam-custom org-provider-family-x --undo --yes") {
		t.Errorf("another new name: %v", err)
	}
	r = renameOn(fakeCluster(t, customFamily()...))
	r.Undo = true
	if _, err := r.Plan(context.Background(), "provider/fam-custom"); err == nil || !strings.Contains(err.Error(), "nothing to undo") {
		t.Errorf("undo without a record: %v", err)
	}
}

// TestRenameUndoRecorded: --undo puts back what a rename killed at step 2
// left: the old revision active, the old package unpaused and without
// the record, the new package gone.
func TestRenameUndoRecorded(t *testing.T) {
	HoldReady = time.Millisecond
	c, dyn := fakeClusterDyn(t, halfRenamed(2)...)
	r := renameOn(c)
	r.Undo = true
	rp, err := r.Plan(context.Background(), "provider/fam-custom")
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Apply(context.Background(), rp)
	if err != nil || !res.Undone {
		t.Fatalf("undo: %+v, %v", res, err)
	}
	old := get(t, dyn, providersGVR, "fam-custom")
	if old.GetAnnotations()[installed.PausedAnnotation] != "" || old.GetAnnotations()[installed.OperationAnnotation] != "" {
		t.Errorf("old package after the undo: %v", old.GetAnnotations())
	}
	rev := get(t, dyn, schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providerrevisions"}, "fam-custom-aaa")
	if s, _, _ := unstructured.NestedString(rev.Object, "spec", "desiredState"); s != "Active" {
		t.Errorf("revision %s after the undo", s)
	}
	if _, err := dyn.Resource(providersGVR).Get(context.Background(), "org-provider-family-x", metav1.GetOptions{}); err == nil {
		t.Error("the new package is still there")
	}
}

// TestRenameLeftOver: a rename killed once it deleted the old package is
// found from the new package's record and finished: unpaused, healthy,
// the record removed; it cannot be undone.
func TestRenameLeftOver(t *testing.T) {
	HoldReady = time.Millisecond
	objs := customFamily()[1:]
	objs[6] = lock(entry("x-1", "Provider", famRepo, "v1.0.0"), entry("member-a-1", "Provider", "r.example.org/org/provider-a", "v1.0.0", famRepo, ">= 0.0.0"))
	objs = append(objs, pkgRev("Provider", "org-provider-family-x", "x-1", famRepo+":v1.0.0", 1, "Active"), withUID(installedOK(recordOn(pkgObj("Provider", "org-provider-family-x", famRepo+":v1.0.0", "x-1"), 6, false)), "pkg-new"))
	c, dyn := fakeClusterDyn(t, objs...)
	r := renameOn(c)
	r.Undo = true
	rp, err := r.Plan(context.Background(), "provider/fam-custom")
	if err != nil || rp == nil || !rp.leftOver {
		t.Fatalf("plan %+v, %v", rp, err)
	}
	if _, err := r.Apply(context.Background(), rp); err == nil || !strings.Contains(err.Error(), "cannot be undone, only finished") {
		t.Errorf("undo of a rename whose old package is gone: %v", err)
	}
	r.Undo = false
	rp, err = r.Plan(context.Background(), "provider/fam-custom")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Apply(context.Background(), rp); err != nil {
		t.Fatal(err)
	}
	if a := get(t, dyn, providersGVR, "org-provider-family-x").GetAnnotations(); a[installed.OperationAnnotation] != "" {
		t.Errorf("record left: %v", a)
	}
}

// TestRenameStopsOnAnotherWriter: a rename records each step on both
// packages before it; when another writer unpauses the old package while
// the rename waits for it to let go, the rename stops at once, undoes
// what it did and exits 4 (not 124 after its whole timeout).
func TestRenameStopsOnAnotherWriter(t *testing.T) {
	for _, w := range []struct {
		name, resource, object, patch, says string
	}{
		{"unpauses the old package", "providers", "fam-custom", `[{"op":"remove","path":"/metadata/annotations/crossplane.io~1paused"}]`, "provider/fam-custom was unpaused"},
		{"activates the old revision", "providerrevisions", "fam-custom-aaa", `[{"op":"replace","path":"/spec/desiredState","value":"Active"}]`, "revision fam-custom-aaa of provider/fam-custom was activated again"},
	} {
		t.Run(w.name, func(t *testing.T) { stopsOnAnotherWriter(t, w.resource, w.object, w.patch, w.says) })
	}
}

func stopsOnAnotherWriter(t *testing.T, resource, object, patch, says string) {
	HoldReady, pollEvery = time.Millisecond, 5*time.Millisecond
	defer func() { pollEvery = time.Second }()
	c, dyn := fakeClusterDyn(t, customFamily()...)
	var uids atomic.Int64
	dyn.PrependReactor("create", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if u, ok := a.(clienttesting.CreateAction).GetObject().(*unstructured.Unstructured); ok && u.GetUID() == "" {
			u.SetUID(types.UID("made-" + string(rune('a'+uids.Add(1)))))
		}
		return false, nil, nil
	})
	r := renameOn(c)
	r.Timeout = 10 * time.Minute
	rp, err := r.Plan(context.Background(), "provider/fam-custom")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := r.Apply(context.Background(), rp); done <- err }()

	// The rename waits at step 3 for the old revision to leave the Lock,
	// which nothing does here: both packages say so.
	var step int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		newOp, oldOp := recordOf(t, dyn, "org-provider-family-x"), recordOf(t, dyn, "fam-custom")
		if newOp != nil && oldOp != nil && newOp.Step == 3 && oldOp.Step == 3 {
			step = 3
			if newOp.ID != oldOp.ID || oldOp.From != "provider/fam-custom" || oldOp.To != "provider/org-provider-family-x" || oldOp.StepName != "wait for the old package to let go" {
				t.Errorf("records %+v, %+v", oldOp, newOp)
			}
			break
		}
	}
	if step != 3 {
		t.Fatal("the rename never recorded step 3 on both packages")
	}
	gvr := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: resource}
	if _, err := dyn.Resource(gvr).Patch(context.Background(), object, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the rename did not stop when another writer unpaused the old package")
	}
	if exit.Code(err) != exit.PlanChanged || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), "undone") {
		t.Fatalf("exit %d: %v; want %d, undone", exit.Code(err), err, exit.PlanChanged)
	}
	if _, err := dyn.Resource(providersGVR).Get(context.Background(), "org-provider-family-x", metav1.GetOptions{}); err == nil {
		t.Error("the new package is still there")
	}
	if op := recordOf(t, dyn, "fam-custom"); op != nil {
		t.Errorf("record left on the old package: %+v", op)
	}
}

func get(t *testing.T, dyn *dynamicfake.FakeDynamicClient, gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := dyn.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// recordOf is the rename's record on a provider, nil when there is none
// (or no provider).
func recordOf(t *testing.T, dyn *dynamicfake.FakeDynamicClient, name string) *installed.Operation {
	t.Helper()
	u, err := dyn.Resource(providersGVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	op, err := installed.ReadOperation(&installed.Package{Kind: "Provider", Name: name, Object: u})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// TestDoctorHalfRenamed: doctor names every state a rename killed mid-way
// leaves, with the commands that finish and undo it; none says "no
// problems", and the dependency is not "not installed".
func TestDoctorHalfRenamed(t *testing.T) {
	rep, err := NewDoctor(&Config{cluster: fakeCluster(t, halfRenamed(3)...), XPNamespace: "crossplane-system"}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		findings.RuleUnfinishedOperation: "kubectl xpkg rename provider/fam-custom org-provider-family-x --undo --yes",
		findings.RulePackagePaused:       "provider/fam-custom is paused",
		findings.RuleNoRevision:          "provider/org-provider-family-x has no revision",
		findings.RuleDuplicatePackage:    "provider/fam-custom (paused), provider/org-provider-family-x (paused) install " + famRepo,
		findings.RuleInactiveRevision:    "provider/member-a depend(s) on it",
	}
	for rule, says := range want {
		f := planFindings(&Plan{Findings: rep.Findings}, rule)
		if len(f) == 0 || !strings.Contains(f[0].Message, says) {
			t.Errorf("%s: %+v; want one saying %q", rule, f, says)
		}
	}
	for _, f := range planFindings(&Plan{Findings: rep.Findings}, findings.RuleUnfinishedOperation) {
		if f.Severity != findings.Blocking || !strings.Contains(f.Message, "step 3 of 6") || !strings.Contains(f.Message, "kubectl xpkg rename provider/fam-custom org-provider-family-x --yes") {
			t.Errorf("unfinished-operation %+v", f)
		}
	}
	for _, f := range planFindings(&Plan{Findings: rep.Findings}, findings.RuleInactiveRevision) {
		if f.Severity != findings.Blocking {
			t.Errorf("inactive-revision with a dependent: %s", f.Severity)
		}
	}
}

// TestDoctorPausedAndTwins: without a rename's record, a paused package
// is told how to unpause, two packages of one source which one the
// resolver keeps, and a package with no revision or an inactive one
// alone is a warning.
func TestDoctorPausedAndTwins(t *testing.T) {
	objs := []*unstructured.Unstructured{
		paused(installedOK(pkgObj("Provider", "fam-custom", famRepo+":v1.0.0", "fam-custom-aaa"))),
		pkgRev("Provider", "fam-custom", "fam-custom-aaa", famRepo+":v1.0.0", 1, "Inactive"),
		pkgObj("Provider", "org-provider-family-x", famRepo+":v1.0.0", ""),
		lock(),
	}
	rep, err := NewDoctor(&Config{cluster: fakeCluster(t, objs...), XPNamespace: "crossplane-system"}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := &Plan{Findings: rep.Findings}
	for rule, says := range map[string]string{
		findings.RulePackagePaused:    "unpause it: kubectl annotate provider fam-custom crossplane.io/paused-",
		findings.RuleDuplicatePackage: "Crossplane's resolver keeps provider/org-provider-family-x",
		findings.RuleNoRevision:       "the package manager has made none",
		findings.RuleInactiveRevision: "it is paused, so the package manager activates none",
	} {
		f := planFindings(p, rule)
		if len(f) != 1 || !strings.Contains(f[0].Message, says) {
			t.Errorf("%s: %+v; want one saying %q", rule, f, says)
		}
	}
	if f := planFindings(p, findings.RuleInactiveRevision); len(f) == 1 && f[0].Severity != findings.Warning {
		t.Errorf("inactive-revision with no dependent: %s", f[0].Severity)
	}
	if len(planFindings(p, findings.RuleUnfinishedOperation)) != 0 {
		t.Error("unfinished-operation without a record")
	}
}

// TestDoctorUnfinishedFamilyUpgrade: the record upgrade --family leaves
// on a provider it moved names the command that finishes it and the
// rollback that puts the provider back.
func TestDoctorUnfinishedFamilyUpgrade(t *testing.T) {
	p := installedOK(pkgObj("Provider", "fam", famRepo+":v1.1.0", "fam-1"))
	op := &installed.Operation{Operation: ActionUpgradeFamily, ID: "20261128T060000Z-abcdef", From: "provider-family-x", To: "v1.1.0", Step: 1, Of: 3,
		StepName: "upgrade provider/fam to " + famRepo + ":v1.1.0", Was: famRepo + ":v1.0.0"}
	p.SetAnnotations(map[string]string{installed.OperationAnnotation: op.String()})
	rep, err := NewDoctor(&Config{cluster: fakeCluster(t, p, pkgRev("Provider", "fam", "fam-1", famRepo+":v1.1.0", 2, "Active"), lock()), XPNamespace: "crossplane-system"}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f := planFindings(&Plan{Findings: rep.Findings}, findings.RuleUnfinishedOperation)
	if len(f) != 1 || f[0].Severity != findings.Blocking || !strings.Contains(f[0].Message, "finish it: kubectl xpkg upgrade --family provider-family-x v1.1.0") ||
		!strings.Contains(f[0].Message, "kubectl xpkg rollback provider/fam (to "+famRepo+":v1.0.0)") {
		t.Errorf("findings %+v", f)
	}
}

// TestRenameUndoesACreateThatLanded: a create of the new package that
// returns an error (a client time-out, an interrupt) but landed on the
// server is undone like one that succeeded: the package carrying this
// rename's record is deleted, the old one left as it was.
func TestRenameUndoesACreateThatLanded(t *testing.T) {
	HoldReady, pollEvery = time.Millisecond, 5*time.Millisecond
	defer func() { pollEvery = time.Second }()
	c, dyn := fakeClusterDyn(t, customFamily()...)
	dyn.PrependReactor("create", "providers", func(a clienttesting.Action) (bool, runtime.Object, error) {
		u := a.(clienttesting.CreateAction).GetObject().(*unstructured.Unstructured).DeepCopy()
		u.SetUID("landed")
		if err := dyn.Tracker().Create(providersGVR, u, ""); err != nil {
			t.Fatal(err)
		}
		return true, nil, context.DeadlineExceeded // the answer never came
	})
	r := renameOn(c)
	r.Timeout = time.Minute
	rp, err := r.Plan(context.Background(), "provider/fam-custom")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Apply(context.Background(), rp); err == nil || !strings.Contains(err.Error(), "undone") {
		t.Fatalf("apply: %v; want the create's error, undone", err)
	}
	if _, err := dyn.Resource(providersGVR).Get(context.Background(), "org-provider-family-x", metav1.GetOptions{}); err == nil {
		t.Error("the new package the create landed is still there")
	}
	old := get(t, dyn, providersGVR, "fam-custom")
	if op := recordOf(t, dyn, "fam-custom"); op != nil || old.GetAnnotations()[cluster.PausedAnnotation] != "" {
		t.Errorf("the old package after the undo: %v", old.GetAnnotations())
	}
}
