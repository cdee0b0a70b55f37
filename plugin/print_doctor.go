package plugin

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// writeReport prints doctor's report for people as a plan is printed:
// what was read, the counts by severity, one line per finding, blocking
// first. What could not be read is counted in the heading, not named
// (the command makes each its error line).
func writeReport(w io.Writer, r *action.Report) error {
	head := fmt.Sprintf("Doctor: %d packages, %d revisions, %d Lock entries read", r.Packages, r.Revisions, r.LockEntries)
	if x := r.Crossplane; x != nil {
		head = fmt.Sprintf("Crossplane %s (deployment %s) → %s\n%s", cmp.Or(x.Running, "version unknown"), x.Deployment, x.Target, head)
	}
	if len(r.Unread) > 0 {
		head += fmt.Sprintf("; %d reads failed, so the findings are not complete", len(r.Unread))
	}
	if r.Healthy() {
		_, err := fmt.Fprintf(w, "%s\n  no problems found\n", head)
		return err
	}
	return findings.Write(w, head, r.Findings)
}

// writeBackup writes the objects a repair changes as YAML documents that
// kubectl apply -f takes back, under a line that says so.
func writeBackup(w io.Writer, objs []*unstructured.Unstructured) error {
	header := fmt.Sprintf("# kubectl xpkg doctor --fix: the %d object(s) it changes, as they were before it (restore: kubectl apply -f THIS-FILE)\n", len(objs))
	if _, err := io.WriteString(w, header); err != nil {
		return err
	}
	for _, u := range objs {
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", b); err != nil {
			return err
		}
	}
	return nil
}

// writeRepair prints the repair's steps, numbered, after the report.
func writeRepair(w io.Writer, rp *action.Repair) error {
	var sb strings.Builder
	if len(rp.Steps) == 0 {
		sb.WriteString("Repair: nothing doctor can prove safe to change; the findings say what to do by hand\n")
	} else {
		fmt.Fprintf(&sb, "Repair: %d step(s)\n", len(rp.Steps))
	}
	for i, st := range rp.Steps {
		fmt.Fprintf(&sb, "  %d. %s [%s]\n", i+1, st.Message, st.Rule)
	}
	if len(rp.Orphaning) > 0 {
		fmt.Fprintf(&sb, "Left in place and unmanaged by --orphan-external-resources (%d): nothing will manage or delete them; to manage one again, make its object again with its external name:\n", len(rp.Orphaning))
		for _, o := range rp.Orphaning {
			fmt.Fprintf(&sb, "  - %s\n", o)
		}
	}
	for _, l := range rp.Left {
		fmt.Fprintf(&sb, "Left alone: %s\n", l)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
