package plugin

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// FleetOutdatedReport is outdated -o json|yaml across several clusters:
// every item and finding with its cluster, and the clusters that did not
// answer.
type FleetOutdatedReport struct {
	Items    []fleetItem    `json:"items"`
	Findings []fleetFinding `json:"findings,omitempty"`
	Errors   []fleetFailure `json:"errors,omitempty"`
}

type fleetItem struct {
	Cluster string `json:"cluster"`
	*action.Item
}

type fleetFinding struct {
	Cluster string `json:"cluster"`
	findings.Finding
}

// outdatedAnswer is what outdated found on one cluster.
type outdatedAnswer struct {
	items    []*action.Item
	findings []findings.Finding
}

// runFleet is outdated on several clusters, their registry reads shared
// (SharedReads: once per resolved reference and credentials).
func (o *OutdatedOptions) runFleet(ctx context.Context, f *action.Fleet) error {
	answers := askFleet(ctx, f, func(ctx context.Context, cfg *action.Config) (*outdatedAnswer, error) {
		return o.read(ctx, cfg, f.Reads)
	})
	failed := map[string]error{}
	for _, a := range answers {
		if a.Err != nil {
			failed[a.Context] = a.Err
		} else if err := action.UnreadError(a.Value.items); err != nil {
			failed[a.Context] = err
		}
	}
	return cmp.Or(o.printFleet(answers), action.FleetError(failed))
}

func (o *OutdatedOptions) printFleet(answers []action.Answer[*outdatedAnswer]) error {
	if o.Output == printers.FormatJSON || o.Output == printers.FormatYAML {
		rep := FleetOutdatedReport{Items: []fleetItem{}}
		for _, a := range answers {
			if a.Err != nil {
				rep.Errors = append(rep.Errors, newFleetFailure(a.Context, a.Err))
				continue
			}
			for _, it := range a.Value.items {
				rep.Items = append(rep.Items, fleetItem{a.Context, it})
			}
			for _, fd := range a.Value.findings {
				rep.Findings = append(rep.Findings, fleetFinding{a.Context, fd})
			}
		}
		return printers.PrintObject(o.root.IOStreams.Out, o.Output, rep)
	}
	header := append([]string{"CLUSTER"}, outdatedHeader(o.Output == printers.FormatWide)...)
	t := printers.NewTable(header...)
	var findings strings.Builder
	for _, a := range answers {
		if a.Err != nil {
			t.Row(failedRow(a.Context, a.Err, len(header))...)
			continue
		}
		for _, it := range a.Value.items {
			t.Row(append([]string{a.Context}, o.row(it)...)...)
		}
		for _, fd := range a.Value.findings {
			fmt.Fprintf(&findings, "%-8s %s: %s [%s]\n", strings.ToUpper(string(fd.Severity)), a.Context, fd.Message, fd.Rule)
		}
	}
	if t.Len() == 0 {
		fmt.Fprintln(o.root.IOStreams.ErrOut, "No packages found.")
		return nil
	}
	if err := t.Render(o.root.IOStreams.Out); err != nil {
		return err
	}
	if findings.Len() > 0 {
		_, err := fmt.Fprint(o.root.IOStreams.Out, "\n"+findings.String())
		return err
	}
	return nil
}

// outdatedHeader is the header of outdated's table (wide: -o wide).
func outdatedHeader(wide bool) []string {
	header := []string{"NAME", "KIND", "CURRENT", "WANTED", "LATEST", "DRIFT"}
	if wide {
		header = append(header, "FAMILY", "PACKAGE", "DIGEST", "HELD-BY")
	}
	return header
}

// row is an item's row of the table.
func (o *OutdatedOptions) row(it *action.Item) []string {
	row := []string{it.Name, it.Kind, shortDigest(it.Current), ifRead(it, it.Wanted), ifRead(it, it.Latest), driftMark(it)}
	if o.Output == printers.FormatWide {
		row = append(row, orNone(it.Family), reference.Repository(it.Package), orUnknown(it.Digest), orNone(heldBy(it)))
	}
	return row
}
