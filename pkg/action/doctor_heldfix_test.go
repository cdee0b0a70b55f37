package action

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
)

// heldWidgets is a Widgets CRD being deleted, held by two Widgets (one
// with an external name of its own and a status), whose provider p is
// installed again with active revision p-2 (its runtime not running).
func heldWidgets() []*unstructured.Unstructured {
	rv := recording(pkgRev("Provider", "p", "p-2", "r.example.org/org/p:v2", 2, "Active",
		map[string]any{"type": "RuntimeHealthy", "status": "False", "message": "Deployment has no minimum availability"}), "u-p-2", "widgets.stored.example.org")
	w1 := deleting(widget("w-1"), time.Hour, diagnose.ManagedFinalizer)
	w1.SetAnnotations(map[string]string{diagnose.ExternalNameAnnotation: "bucket-7f3a"})
	w1.SetLabels(map[string]string{"team": "a"})
	w1.Object["spec"] = map[string]any{"deletionPolicy": "Orphan", "forProvider": map[string]any{"size": "3"}}
	w1.Object["status"] = map[string]any{"atProvider": map[string]any{"arn": "arn:7f3a"}}
	w1.SetUID("u-w-1")
	w2 := deleting(widget("w-2"), time.Hour, diagnose.ManagedFinalizer)
	w2.SetUID("u-w-2")
	return []*unstructured.Unstructured{
		withOwners(pkgObj("Provider", "p", "r.example.org/org/p:v2", "p-2"), "u-p"), rv,
		deleting(widgetsOwnedBy("p-2", "u-p-2"), time.Hour, "customresourcecleanup.apiextensions.k8s.io"),
		w1, w2,
	}
}

func stepNames(steps []diagnose.RepairStep) string {
	var out []string
	for _, st := range steps {
		out = append(out, st.Action+" "+st.Object)
	}
	return strings.Join(out, ", ")
}

// TestDoctorFixPlansTheHeldDefinition: with the provider installed again,
// --fix removes each Widget's finalizer, waits for the CRD to be made
// again and makes each Widget again; the backup holds each Widget whole,
// external name, labels, spec and status, without what the API server
// sets.
func TestDoctorFixPlansTheHeldDefinition(t *testing.T) {
	c, _ := fakeClusterDyn(t, heldWidgets()...)
	d := NewDoctor(&Config{cluster: c})
	rep := planRepair(t, d)
	want := "remove-finalizer widgets.stored.example.org/w-1, remove-finalizer widgets.stored.example.org/w-2, " +
		"await-definition customresourcedefinition/widgets.stored.example.org, recreate widgets.stored.example.org/w-1, recreate widgets.stored.example.org/w-2"
	if got := stepNames(rep.Repair.Steps); got != want {
		t.Fatalf("steps %s\nwant %s", got, want)
	}
	if m := rep.Repair.Steps[3].Message; !strings.Contains(m, "with external name bucket-7f3a, deletionPolicy Orphan") {
		t.Errorf("recreate step says %q", m)
	}
	if len(rep.Repair.Left) != 0 || len(rep.Repair.Orphaning) != 0 {
		t.Errorf("left %v, orphaning %v", rep.Repair.Left, rep.Repair.Orphaning)
	}
	objs, err := d.Backup(context.Background(), rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("backup holds %d objects, want the 2 Widgets", len(objs))
	}
	w1 := objs[0]
	arn, _, _ := unstructured.NestedString(w1.Object, "status", "atProvider", "arn")
	policy, _, _ := unstructured.NestedString(w1.Object, "spec", "deletionPolicy")
	if w1.GetName() != "w-1" || w1.GetAnnotations()[diagnose.ExternalNameAnnotation] != "bucket-7f3a" || w1.GetLabels()["team"] != "a" ||
		arn != "arn:7f3a" || policy != "Orphan" || w1.GetUID() != "" || w1.GetResourceVersion() != "" || w1.GetDeletionTimestamp() != nil {
		t.Errorf("backup of w-1: %v", w1.Object)
	}
}

// TestDoctorFixStopsSayingWhatIsLeft: the finalizers removed, the CRD is
// not made again within --wait (the fake deletes nothing): the repair
// stops with exit status 124, saying what was done, what is left and
// that the backup makes the Widgets again.
func TestDoctorFixStopsSayingWhatIsLeft(t *testing.T) {
	c, dyn := fakeClusterDyn(t, heldWidgets()...)
	d := NewDoctor(&Config{cluster: c})
	rep := planRepair(t, d)
	rep.Repair.Backup = "doctor-backup.yaml"
	var done []string
	err := d.Repair(context.Background(), rep, RepairOptions{Wait: 10 * time.Millisecond, Interval: time.Millisecond,
		Done: func(st diagnose.RepairStep) { done = append(done, st.Done()) }})
	if exit.Code(err) != exit.WaitTimedOut {
		t.Fatalf("exit %d (%v), want %d", exit.Code(err), err, exit.WaitTimedOut)
	}
	for _, part := range []string{"CRD widgets.stored.example.org to be made again", "the old one is still being deleted",
		"done: remove-finalizer widgets.stored.example.org/w-1, remove-finalizer widgets.stored.example.org/w-2",
		"left: await-definition customresourcedefinition/widgets.stored.example.org, recreate widgets.stored.example.org/w-1, recreate widgets.stored.example.org/w-2",
		"kubectl xpkg doctor --fix makes the missing ones again from it (or kubectl apply -f doctor-backup.yaml)"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error does not say %q:\n%v", part, err)
		}
	}
	if fmt.Sprint(done) != "[widgets.stored.example.org/w-1: finalizer.managedresource.crossplane.io removed widgets.stored.example.org/w-2: finalizer.managedresource.crossplane.io removed]" {
		t.Errorf("done %v", done)
	}
	u, err := dyn.Resource(widgetsGVR).Get(context.Background(), "w-1", metav1.GetOptions{})
	if err != nil || len(u.GetFinalizers()) != 0 {
		t.Errorf("w-1 after the repair: %v, %v", u, err)
	}
}

// TestDoctorFixLeavesTheUninstalledKind: the provider not installed,
// --fix changes nothing for the CRD and names the two ways out; with
// --orphan-external-resources it removes the finalizers, after listing
// each Widget's external resource.
func TestDoctorFixLeavesTheUninstalledKind(t *testing.T) {
	objs := heldWidgets()[2:]
	c, _ := fakeClusterDyn(t, objs...)
	d := NewDoctor(&Config{cluster: c})
	rep := planRepair(t, d)
	if len(rep.Repair.Steps) != 0 || len(rep.Repair.Left) != 1 {
		t.Fatalf("steps %s, left %v", stepNames(rep.Repair.Steps), rep.Repair.Left)
	}
	for _, part := range []string{"CRD widgets.stored.example.org: the provider that serves Widget.stored.example.org is not installed, so doctor --fix changes nothing here. Two ways out: install the provider that serves Widget.stored.example.org again",
		"and run kubectl xpkg doctor --fix, which makes every Widget again under its external name", "or kubectl xpkg doctor --fix --orphan-external-resources"} {
		if !strings.Contains(rep.Repair.Left[0], part) {
			t.Errorf("left does not say %q:\n%s", part, rep.Repair.Left[0])
		}
	}

	c, _ = fakeClusterDyn(t, heldWidgets()[2:]...)
	d = NewDoctor(&Config{cluster: c})
	d.OrphanExternal = true
	rep = planRepair(t, d)
	if got := stepNames(rep.Repair.Steps); got != "remove-finalizer widgets.stored.example.org/w-1, remove-finalizer widgets.stored.example.org/w-2" {
		t.Fatalf("steps %s", got)
	}
	if fmt.Sprint(rep.Repair.Orphaning) != "[Widget w-1 (external name bucket-7f3a) Widget w-2 (external name none: its provider had not named what it manages)]" {
		t.Errorf("orphaning %v", rep.Repair.Orphaning)
	}
}
