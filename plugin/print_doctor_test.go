package plugin

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// TestWriteHealthyReport: a report with nothing found says what it read.
func TestWriteHealthyReport(t *testing.T) {
	for _, n := range []int{1, 200} {
		r := &action.Report{Report: diagnose.Report{Packages: n, Revisions: 2 * n, LockEntries: n}}
		var out bytes.Buffer
		if err := writeReport(&out, r); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("Doctor: %d packages, %d revisions, %d Lock entries read\n  no problems found\n", n, 2*n, n); out.String() != want {
			t.Errorf("text %q, want %q", out.String(), want)
		}
	}
}

// TestWriteReportOfAPartialRead: what could not be read is counted in the
// heading, and the report is no clean bill of health.
func TestWriteReportOfAPartialRead(t *testing.T) {
	r := &action.Report{Report: diagnose.Report{Packages: 2, Revisions: 2, LockEntries: 2,
		Unread:   []string{"configurations: forbidden"},
		Findings: []findings.Finding{{Rule: findings.RuleDuplicateLockNode, Severity: findings.Blocking, Message: "Crossplane keeps provider/org-provider-nop"}}}}
	var out bytes.Buffer
	if err := writeReport(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "; 1 reads failed, so the findings are not complete\n") || strings.Contains(out.String(), "no problems found") {
		t.Errorf("text:\n%s", out.String())
	}
}

// TestWriteReleaseHeading: --crossplane-version heads the report with the
// move checked; without it there is no such line.
func TestWriteReleaseHeading(t *testing.T) {
	move := &diagnose.CrossplaneMove{Running: "v2.4.1", Target: "v2.4.2", Deployment: "crossplane-system/crossplane"}
	r := &action.Report{Report: diagnose.Report{Packages: 1, Revisions: 1, Crossplane: move,
		Findings: []findings.Finding{{Rule: findings.RuleCrossplaneConstraint, Severity: findings.Info, Message: "offline", Count: findings.Count(1)}}}}
	var out bytes.Buffer
	if err := writeReport(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "Crossplane v2.4.1 (deployment crossplane-system/crossplane) → v2.4.2\nDoctor: 1 packages, 1 revisions, 0 Lock entries read\n") {
		t.Errorf("text:\n%s", out.String())
	}

	r.Crossplane = nil
	out.Reset()
	_ = writeReport(&out, r)
	if strings.Contains(out.String(), "→") {
		t.Errorf("without --crossplane-version: %s", out.String())
	}

	r.Crossplane = &diagnose.CrossplaneMove{Target: "v2.4.2", Deployment: "crossplane-system/crossplane"}
	out.Reset()
	_ = writeReport(&out, r)
	if !strings.HasPrefix(out.String(), "Crossplane version unknown (deployment crossplane-system/crossplane) → v2.4.2\n") {
		t.Errorf("text:\n%s", out.String())
	}
}

// TestWriteEmptyRepair: a repair with no step says so.
func TestWriteEmptyRepair(t *testing.T) {
	var out bytes.Buffer
	if err := writeRepair(&out, &action.Repair{}); err != nil || !strings.Contains(out.String(), "nothing doctor can prove safe to change") {
		t.Errorf("%q, %v", out.String(), err)
	}
}

// TestWriteBackup: a line that says what the file is and how to restore
// it, then one YAML document per object, as kubectl apply -f takes them.
func TestWriteBackup(t *testing.T) {
	rev := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
		"metadata": map[string]any{"name": "fn-aaa", "labels": map[string]any{"pkg.crossplane.io/package": "fn"}}}}
	var out bytes.Buffer
	if err := writeBackup(&out, []*unstructured.Unstructured{rev}); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "---\n")
	if len(docs) != 2 || docs[0] != "# kubectl xpkg doctor --fix: the 1 object(s) it changes, as they were before it (restore: kubectl apply -f THIS-FILE)\n" {
		t.Fatalf("backup:\n%s", out.String())
	}
	var saved map[string]any
	if err := yaml.Unmarshal([]byte(docs[1]), &saved); err != nil {
		t.Fatal(err)
	}
	if b := (&unstructured.Unstructured{Object: saved}); b.GetName() != "fn-aaa" || b.GetKind() != "FunctionRevision" || b.GetLabels()["pkg.crossplane.io/package"] != "fn" {
		t.Errorf("the backup is not the revision: %s", out.String())
	}
}
