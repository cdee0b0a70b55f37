package plugin

import (
	"cmp"
	"fmt"
	"io"
	"strings"

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
	_, err := io.WriteString(w, sb.String())
	return err
}
