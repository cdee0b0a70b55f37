package plugin

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// writePlan prints a plan for people: a heading, then one line per
// finding, blocking ones first.
func writePlan(w io.Writer, p *action.Plan) error {
	var head string
	switch {
	case p.To != "" && p.From != "":
		head = fmt.Sprintf("Plan: %s %s from %s to %s", p.Action, p.Package, p.From, p.To)
	case p.To != "":
		head = fmt.Sprintf("Plan: %s %s at %s", p.Action, p.Package, p.To)
	case len(p.Packages) > 1:
		head = fmt.Sprintf("Plan: %s %s", p.Action, strings.Join(p.Packages, ", "))
	default:
		head = fmt.Sprintf("Plan: %s %s", p.Action, p.Package)
	}
	if err := findings.Write(w, head, p.Findings); err != nil {
		return err
	}
	for _, td := range p.Teardown {
		if _, err := io.WriteString(w, strings.Join(td.Lines(), "\n")+"\n"); err != nil {
			return err
		}
	}
	return writePrediction(w, p.Prediction)
}

// writePrediction prints what the package manager then does: what the
// plan knows of its configuration, each dependency its resolver installs
// or moves, whether the Lock resolves, and what is left unhealthy.
func writePrediction(w io.Writer, pred *diagnose.Prediction) error {
	if pred == nil {
		return nil
	}
	var sb strings.Builder
	cp := pred.Crossplane
	what, flag := cp.FlagsSaid()
	how := "read from its Deployment"
	switch cp.Read {
	case diagnose.ConfigAssumed:
		how = "as --assume-dependency-upgrades says"
	case diagnose.ConfigUnknown:
		how = "not read: " + cp.Why + "; Crossplane's default assumed"
	}
	if flag != "" {
		how = flag + ", " + how
	}
	release := "Crossplane"
	if cp.Version != "" {
		release += " " + cp.Version
	}
	o := pred.Resolution
	head := fmt.Sprintf("  Then %s, %s (%s)", release, what, how)
	if len(o.Changes) == 0 && o.Resolves && len(o.Unhealthy) == 0 {
		_, err := fmt.Fprintf(w, "%s: installs and moves no dependency; the Lock resolves\n", head)
		return err
	}
	sb.WriteString(head + ":\n")
	if len(o.Changes) == 0 {
		sb.WriteString("    installs and moves no dependency\n")
	}
	for _, c := range o.Changes {
		fmt.Fprintf(&sb, "    %s; needed by %s\n", diagnose.ChangeLine(c), holdsSaid(c.Constraints))
		if d := c.Definitions; d != nil {
			switch {
			case d.Err != "":
				fmt.Fprintf(&sb, "      its definitions could not be read: %s\n", d.Err)
			case len(d.Brings)+len(d.Drops) > 0:
				fmt.Fprintf(&sb, "      brings %s; drops %s\n", namesSaid(d.Brings), namesSaid(d.Drops))
			}
		}
	}
	switch {
	case o.Stall != nil:
		fmt.Fprintf(&sb, "    the Lock stalls at %s: %s\n", o.Stall.Repository, o.Stall.Message)
	case o.Resolves:
		sb.WriteString("    the Lock resolves\n")
	}
	for _, u := range o.Unhealthy {
		fmt.Fprintf(&sb, "    %s is unhealthy: %s\n", u.Package, u.Message)
	}
	if o.Unknown != "" {
		fmt.Fprintf(&sb, "    and then cannot tell: %s\n", o.Unknown)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// namesSaid lists a few names, and how many more there are.
func namesSaid(names []string) string {
	switch {
	case len(names) == 0:
		return "none"
	case len(names) > 3:
		return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
	}
	return strings.Join(names, ", ")
}

// holdsSaid lists constraints and their owners: ">=v0.1.0 (configuration/a)".
func holdsSaid(holds []versions.Hold) string {
	var s []string
	for _, h := range holds {
		s = append(s, fmt.Sprintf("%s %s", h.By, h.Constraint))
	}
	return strings.Join(s, ", ")
}

// writeFilesPlan prints the set's plan for people: a summary line, the
// packages left out, then each package's plan as upgrade prints its own.
func writeFilesPlan(w io.Writer, fp *action.FilesPlan) error {
	counts := map[string]int{}
	for _, p := range fp.Plans {
		counts[p.Action]++
	}
	var parts []string
	for _, a := range []string{action.ActionInstall, action.ActionUpgrade, action.ActionRollback, action.ActionUpdate, action.ActionUninstall} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[a], a))
		}
	}
	parts = append(parts, fmt.Sprintf("%d unchanged", len(fp.Unchanged)))
	var sb strings.Builder
	head := "Plan -f"
	if fp.Offline {
		head = fmt.Sprintf("Plan -f (offline, against %d base package manifest(s))", fp.Base)
	}
	fmt.Fprintf(&sb, "%s: %d package manifest(s), %d other object(s) ignored: %s\n", head, fp.Manifests, fp.Ignored, strings.Join(parts, ", "))
	if len(fp.Absent) > 0 {
		fmt.Fprintf(&sb, "  in the cluster and in no manifest: %s (--prune plans their uninstall)\n", strings.Join(fp.Absent, ", "))
	}
	if len(fp.Removed) > 0 {
		fmt.Fprintf(&sb, "  removed from the manifests (in --base, in no manifest): %s (a GitOps prune, Argo CD's or Flux's, would uninstall them)\n", strings.Join(fp.Removed, ", "))
	}
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return err
	}
	if len(fp.Findings) > 0 {
		if err := findings.Write(w, "\nThe set as a whole", fp.Findings); err != nil {
			return err
		}
	}
	if fp.Prediction != nil {
		if err := writePrediction(w, fp.Prediction); err != nil {
			return err
		}
	}
	for _, p := range fp.Plans {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		if err := writePlan(w, p); err != nil {
			return err
		}
	}
	return nil
}

// writeRenamePlan prints a rename's plan for people: the heading, the
// findings as every plan prints them, then the steps in order.
func writeRenamePlan(w io.Writer, rp *action.RenamePlan) error {
	head := fmt.Sprintf("Plan: rename %s to %s", rp.Package, rp.To)
	switch {
	case rp.Resume != nil && rp.Undo:
		head = fmt.Sprintf("Plan: undo rename %s of %s to %s", rp.Resume.ID, rp.Package, rp.To)
	case rp.Resume != nil:
		head = fmt.Sprintf("Plan: finish rename %s of %s to %s", rp.Resume.ID, rp.Package, rp.To)
	}
	if err := findings.Write(w, head, rp.Findings); err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString("  Steps (a failed step undoes those before it):\n")
	for i, s := range rp.Steps {
		fmt.Fprintf(&sb, "    %d. %s\n", i+1, s)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
