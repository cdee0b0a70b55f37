package plugin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// fleetFailure is a cluster that did not answer, in -o json|yaml.
type fleetFailure struct {
	Cluster string `json:"cluster"`
	// Status is unreachable, forbidden, unauthorized, interrupted or failed.
	Status string `json:"status"`
	Error  string `json:"error"`
}

func newFleetFailure(context string, err error) fleetFailure {
	return fleetFailure{Cluster: context, Status: strings.Trim(action.Unanswered(err), "<>"), Error: exit.Message(err)}
}

// failedRow is the row of a cluster that did not answer: its context,
// then why, then empty cells up to width.
func failedRow(context string, err error, width int) []string {
	row := make([]string, width)
	row[0], row[1] = context, action.Unanswered(err)
	return row
}

// runFleet is get on several clusters: one table (or List) with each
// package's cluster first; a cluster that does not answer has a row that
// says so and an error line.
func (o *GetOptions) runFleet(ctx context.Context, f *action.Fleet) error {
	if o.Output == printers.FormatName {
		return &exit.UsageError{Err: errors.New("-o name prints no cluster: with several contexts use -o json, yaml, jsonpath=... or custom-columns=..."), Hint: "See 'kubectl xpkg get --help' for usage."}
	}
	answers := askFleet(ctx, f, func(ctx context.Context, cfg *action.Config) (*action.Listing, error) {
		g := action.NewGet(cfg)
		g.Selector, g.Wide = o.Selector, o.Output == printers.FormatWide
		return g.Run(ctx, o.args)
	})
	failed := map[string]error{}
	for i, a := range answers {
		switch {
		case a.Err != nil && apierrors.IsNotFound(a.Err):
			// Only names it does not have: no row, an error line.
			failed[a.Context], answers[i].Value = a.Err, &action.Listing{}
			answers[i].Err = nil
		case a.Err != nil:
			failed[a.Context] = a.Err
		case a.Value.Missing != nil:
			failed[a.Context] = a.Value.Missing
		}
	}
	var err error
	if o.Output == "" || o.Output == printers.FormatWide {
		err = o.fleetTable(answers)
	} else {
		err = o.fleetDocument(answers)
	}
	return cmp.Or(err, action.FleetError(failed))
}

func (o *GetOptions) fleetTable(answers []action.Answer[*action.Listing]) error {
	header := append([]string{"CLUSTER"}, getHeader(o.Output == printers.FormatWide)...)
	t := printers.NewTable(header...)
	t.NoHeaders = o.NoHeaders
	for _, a := range answers {
		if a.Err != nil {
			t.Row(failedRow(a.Context, a.Err, len(header))...)
			continue
		}
		for _, p := range a.Value.Packages {
			t.Row(append([]string{a.Context}, o.row(p, a.Value.Revisions[p])...)...)
		}
	}
	if t.Len() == 0 {
		fmt.Fprintln(o.root.IOStreams.ErrOut, "No packages found.")
		return nil
	}
	return t.Render(o.root.IOStreams.Out)
}

// fleetDocument prints a List of every cluster's packages, each with its
// cluster (a field "cluster" beside apiVersion and kind), and the clusters
// that did not answer under "errors"; custom-columns= gets a CLUSTER
// column first.
func (o *GetOptions) fleetDocument(answers []action.Answer[*action.Listing]) error {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	var failures []any
	for _, a := range answers {
		if a.Err != nil {
			f := newFleetFailure(a.Context, a.Err)
			failures = append(failures, map[string]any{"cluster": f.Cluster, "status": f.Status, "error": f.Error})
			continue
		}
		for _, p := range a.Value.Packages {
			p.Object.Object["cluster"] = a.Context
			list.Items = append(list.Items, *p.Object)
		}
	}
	if failures != nil {
		list.Object["errors"] = failures
	}
	if spec, ok := strings.CutPrefix(o.Output, "custom-columns="); ok {
		return o.customColumns("CLUSTER:.cluster,"+spec, list.Items)
	}
	return o.printDocument(list)
}
