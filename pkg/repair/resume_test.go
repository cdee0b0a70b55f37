package repair

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

var widgets = schema.GroupVersionResource{Group: "stored.example.org", Version: "v1beta1", Resource: "widgets"}

func widget(name, external string) *unstructured.Unstructured {
	u := fakecluster.Object("stored.example.org/v1beta1", "Widget", name, map[string]any{"spec": map[string]any{"deletionPolicy": "Orphan"}})
	u.SetAnnotations(map[string]string{diagnose.ExternalNameAnnotation: external})
	return u
}

// widgetCRD is the Widgets' CRD as the package manager made it again:
// established, with a new UID.
func widgetCRD() *unstructured.Unstructured {
	crd := fakecluster.Object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.stored.example.org", map[string]any{
		"spec": map[string]any{"group": "stored.example.org", "scope": "Cluster", "names": map[string]any{"plural": "widgets", "kind": "Widget"},
			"versions": []any{map[string]any{"name": "v1beta1", "served": true, "storage": true}}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Established", "status": "True"}}}})
	crd.SetUID("crd-new")
	return crd
}

// TestResumeMakesTheMissingObjectsAgain: a repair killed after removing
// the finalizers of two Widgets left its record, naming the backup. The
// CRD is made again and one Widget is back already (its provider's
// composite made it): the resumed repair waits for the CRD, makes the
// other Widget again from the backup, with its external name and
// policies, and leaves the one that is back.
func TestResumeMakesTheMissingObjectsAgain(t *testing.T) {
	f := fakecluster.New(widgetCRD(), widget("w-2", "ext-2"))
	dir := t.TempDir()
	var docs []string
	for _, u := range []*unstructured.Unstructured{widget("w-1", "ext-1"), widget("w-2", "ext-2"),
		fakecluster.Object("pkg.crossplane.io/v1beta1", "Lock", "lock", nil)} {
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	backup := filepath.Join(dir, "backup.yaml")
	if err := os.WriteFile(backup, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	op := &installed.Operation{Operation: installed.OperationRepair, ID: "r1", Step: 3, Of: 7, StepName: diagnose.RepairRemoveFinalizer + " widgets.stored.example.org/w-2", Backup: backup}
	ctx := context.Background()
	steps, left, err := Resume(ctx, f.Cluster(), f.ToRESTMapper, op)
	if err != nil || len(left) > 0 {
		t.Fatalf("resume: %v, left %v", err, left)
	}
	var names []string
	for _, st := range steps {
		names = append(names, st.Action+" "+st.Object)
	}
	if got := strings.Join(names, ", "); got != "await-definition customresourcedefinition/widgets.stored.example.org, recreate widgets.stored.example.org/w-1" {
		t.Fatalf("steps %s", got)
	}
	e := &Executor{Cluster: f.Cluster(), Mapper: f.ToRESTMapper, ID: "r2", Wait: time.Second, Interval: 10 * time.Millisecond}
	rp := &Plan{Steps: steps}
	for _, st := range steps {
		if err := e.apply(ctx, rp, st); err != nil {
			t.Fatalf("%s: %v", st.Object, err)
		}
	}
	if len(rp.NotRestored) > 0 {
		t.Fatalf("not restored: %v", rp.NotRestored)
	}
	u, err := f.Dynamic.Resource(widgets).Get(ctx, "w-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if policy, _, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy"); u.GetAnnotations()[diagnose.ExternalNameAnnotation] != "ext-1" || policy != "Orphan" {
		t.Errorf("w-1 made again as %v", u.Object)
	}

	// A record of another repair, or none, resumes nothing.
	other := *op
	other.StepName = diagnose.RepairDelete + " providerrevision/p-1"
	if steps, left, err := Resume(ctx, f.Cluster(), f.ToRESTMapper, &other); len(steps)+len(left) > 0 || err != nil {
		t.Errorf("another repair's record: %v %v %v", steps, left, err)
	}
	// A backup that cannot be read here is said, with the way out.
	gone := *op
	gone.Backup = filepath.Join(dir, "elsewhere.yaml")
	if _, left, _ := Resume(ctx, f.Cluster(), f.ToRESTMapper, &gone); len(left) != 1 || !strings.Contains(left[0], "cannot be read here") {
		t.Errorf("left %v", left)
	}
}
