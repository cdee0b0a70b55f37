package plugin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// FleetDoctorReport is doctor -o json|yaml across several clusters: one
// report per cluster that answered, with its cluster, and the clusters
// that did not.
type FleetDoctorReport struct {
	Clusters []fleetDoctor  `json:"clusters"`
	Errors   []fleetFailure `json:"errors,omitempty"`
}

type fleetDoctor struct {
	Cluster string `json:"cluster"`
	*action.Report
}

// runFleet is doctor on several clusters: a table of what each read and
// found, then each finding after its cluster. What could not be read, and
// a cluster that did not answer, make the exit status 1 (one error line
// each); else a blocking finding makes it 3.
func (o *DoctorOptions) runFleet(ctx context.Context, f *action.Fleet) error {
	if o.Fix {
		return &exit.UsageError{Err: errors.New("--fix repairs one cluster: give one --context"), Hint: "See 'kubectl xpkg doctor --help' for usage."}
	}
	answers := askFleet(ctx, f, func(ctx context.Context, cfg *action.Config) (*action.Report, error) {
		d := action.NewDoctor(cfg)
		d.CrossplaneVersion, d.NoRegistry = o.CrossplaneVersion, o.Offline
		rep, err := d.Run(ctx)
		if err == nil && len(rep.Unread) > 0 && rep.Packages+rep.Revisions+rep.LockEntries == 0 {
			// Nothing read: a cluster that does not answer is unreachable,
			// not a report of ten failed reads.
			if rerr := action.Reachable(cfg); rerr != nil {
				return nil, rerr
			}
		}
		return rep, err
	})
	failed := map[string]error{}
	blocking := false
	for _, a := range answers {
		switch {
		case a.Err != nil:
			failed[a.Context] = a.Err
		case len(a.Value.Unread) > 0:
			var errs exit.Several
			for _, u := range a.Value.Unread {
				errs = append(errs, errors.New("doctor is incomplete: "+u))
			}
			failed[a.Context] = errs
		default:
			blocking = blocking || a.Value.Blocking()
		}
	}
	if err := o.printFleet(answers); err != nil {
		return err
	}
	if err := action.FleetError(failed); err != nil {
		return err
	}
	if blocking {
		return exit.WithCode(exit.DoctorBlocking, exit.Silent)
	}
	return nil
}

func (o *DoctorOptions) printFleet(answers []action.Answer[*action.Report]) error {
	out := o.root.IOStreams.Out
	if o.Output != "" {
		rep := FleetDoctorReport{Clusters: []fleetDoctor{}}
		for _, a := range answers {
			if a.Err != nil {
				rep.Errors = append(rep.Errors, newFleetFailure(a.Context, a.Err))
			} else {
				rep.Clusters = append(rep.Clusters, fleetDoctor{a.Context, a.Value})
			}
		}
		return printers.PrintObject(out, o.Output, rep)
	}
	t := printers.NewTable("CLUSTER", "PACKAGES", "REVISIONS", "LOCK-ENTRIES", "FINDINGS")
	var lines strings.Builder
	for _, a := range answers {
		if a.Err != nil {
			t.Row(failedRow(a.Context, a.Err, 5)...)
			continue
		}
		r := a.Value
		t.Row(a.Context, strconv.Itoa(r.Packages), strconv.Itoa(r.Revisions), strconv.Itoa(r.LockEntries), doctorSummary(r))
		if x := r.Crossplane; x != nil {
			fmt.Fprintf(&lines, "%-8s %s: Crossplane %s (deployment %s) → %s\n", "", a.Context, cmp.Or(x.Running, "version unknown"), x.Deployment, x.Target)
		}
		for _, fd := range r.Findings {
			fmt.Fprintf(&lines, "%-8s %s: %s [%s]\n", strings.ToUpper(string(fd.Severity)), a.Context, fd.Message, fd.Rule)
		}
	}
	if err := t.Render(out); err != nil {
		return err
	}
	if lines.Len() == 0 {
		return nil
	}
	_, err := fmt.Fprint(out, "\n"+lines.String())
	return err
}

// doctorSummary counts a cluster's findings by severity.
func doctorSummary(r *action.Report) string {
	if r.Healthy() {
		return "no problems found"
	}
	n := map[findings.Severity]int{}
	for _, f := range r.Findings {
		n[f.Severity]++
	}
	var parts []string
	for _, s := range []findings.Severity{findings.Blocking, findings.Warning, findings.Info} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	if len(r.Unread) > 0 {
		parts = append(parts, fmt.Sprintf("%d reads failed (incomplete)", len(r.Unread)))
	}
	return strings.Join(parts, ", ")
}
