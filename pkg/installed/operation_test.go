package installed

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestOperationRecord: the record reads back as written; a value that is
// no record is an error; of two records the later step wins, and an undo
// is later than any step forward, its lower steps later still.
func TestOperationRecord(t *testing.T) {
	op := &Operation{Operation: "rename", ID: "x-1", From: "provider/a", To: "provider/b", Step: 2, Of: 6, StepName: "deactivate the old package"}
	u := &unstructured.Unstructured{}
	u.SetAnnotations(map[string]string{OperationAnnotation: op.String()})
	got, err := ReadOperation(&Package{Kind: "Provider", Name: "a", Object: u})
	if err != nil || *got != *op || got.NewName() != "b" {
		t.Fatalf("read %+v, %v", got, err)
	}
	u.SetAnnotations(map[string]string{OperationAnnotation: "nonsense"})
	if _, err := ReadOperation(&Package{Kind: "Provider", Name: "a", Object: u}); err == nil {
		t.Error("nonsense read as a record")
	}
	step := func(n int, undo bool) *Operation { return &Operation{Step: n, Undo: undo} }
	for _, tc := range []struct{ a, b, want *Operation }{
		{step(2, false), step(3, false), step(3, false)},
		{step(3, false), step(2, false), step(3, false)},
		{step(5, false), step(4, true), step(4, true)},
		{step(4, true), step(2, true), step(2, true)},
		{nil, step(1, false), step(1, false)},
	} {
		if got := Later(tc.a, tc.b); *got != *tc.want {
			t.Errorf("Later(%+v, %+v) = %+v, want %+v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestHealth: never healthy while paused (Healthy says Paused) or while
// the current revision is inactive.
func TestHealth(t *testing.T) {
	cond := func(string) string { return "True" }
	u := &unstructured.Unstructured{}
	p := &Package{Object: u}
	if i, h := Health(p, &Revision{DesiredState: "Active"}, cond); i != "True" || h != "True" {
		t.Errorf("active: %s %s", i, h)
	}
	if i, h := Health(p, &Revision{DesiredState: "Inactive"}, cond); i != "False" || h != "False" {
		t.Errorf("inactive: %s %s", i, h)
	}
	u.SetAnnotations(map[string]string{PausedAnnotation: "true"})
	if _, h := Health(p, nil, cond); h != "Paused" {
		t.Errorf("paused: %s", h)
	}
	if r := PackageReadiness(p); r.Ready {
		t.Error("a paused package is ready")
	}
}
