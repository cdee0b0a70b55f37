package repair

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

// TestRecreateCutShortIsLeft: a repair interrupted while it makes a
// held object again (the context cancelled during the creation, which
// may have landed) stops there: that object and the next are left, not
// done nor counted as not restored, and the error says so, that the
// object may have been made, and names the backup.
func TestRecreateCutShortIsLeft(t *testing.T) {
	f := fakecluster.New(widgetCRD())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Dynamic.PrependReactor("create", "widgets", func(clienttesting.Action) (bool, runtime.Object, error) {
		cancel()
		return true, nil, context.Canceled
	})
	crd := &cluster.CRD{Name: "widgets.stored.example.org", Group: "stored.example.org", Plural: "widgets", Kind: "Widget", Served: []string{"v1beta1"}, Storage: "v1beta1"}
	steps := []diagnose.RepairStep{{Action: diagnose.RepairAwaitDefinition, Object: "customresourcedefinition/" + crd.Name, Held: &diagnose.Held{CRD: crd, CRDUID: "crd-old"}}}
	for _, w := range []string{"w-1", "w-2"} {
		h := &diagnose.Held{CRD: crd, CRDUID: "crd-old", Object: widget(w, "ext-"+w)}
		steps = append(steps, diagnose.RepairStep{Action: diagnose.RepairRecreate, Object: diagnose.HeldName(crd, h.Object), Held: h})
	}
	var heard []string
	e := &Executor{Cluster: f.Cluster(), Mapper: f.ToRESTMapper, ID: "r1", Wait: time.Second, Interval: 10 * time.Millisecond,
		Done: func(st diagnose.RepairStep) { heard = append(heard, st.Done()) }}
	rp := &Plan{Steps: steps, Backup: "backup.yaml", Done: []string{diagnose.RepairRemoveFinalizer + " widgets.stored.example.org/w-1"}}
	err := e.Run(ctx, rp)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the interruption", err)
	}
	if slices.ContainsFunc(rp.Done, func(d string) bool { return strings.HasPrefix(d, diagnose.RepairRecreate) }) || len(heard) != 1 || len(rp.NotRestored) > 0 {
		t.Errorf("done %v, heard %v, not restored %v; want only the CRD waited for done", rp.Done, heard, rp.NotRestored)
	}
	if !strings.Contains(err.Error(), "it may have been made") {
		t.Errorf("err %q does not say that the object may have been made", err)
	}
	want := "left: recreate widgets.stored.example.org/w-1, recreate widgets.stored.example.org/w-2; the backup backup.yaml holds every object"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("err %q lacks %q", err, want)
	}
}
