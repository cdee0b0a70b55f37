package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// GetOptions holds the flags and state of `kubectl xpkg get`.
type GetOptions struct {
	Output    string
	Selector  string
	NoHeaders bool
	Cluster   ClusterFlags
	Fleet     FleetFlags

	kind  string
	names []string
	args  []string
	root  *Root
}

// NewCmdGet builds `kubectl xpkg get`.
func NewCmdGet(root *Root) *cobra.Command {
	o := &GetOptions{root: root}
	cmd := &cobra.Command{
		Use:     "get [KIND] [NAME...]",
		Short:   "List installed packages with their version, state and current revision",
		Long:    helpLong("get"),
		Example: helpExample("get"),
		GroupID: groupCluster,
		RunE:    runOptions(root, o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: wide, json, yaml, name, custom-columns=HEADER:.path,..., jsonpath=..., go-template=..., template=... (and their -file forms).")
	cmd.ValidArgsFunction = completePackages(root, true, false)
	completeOutput(cmd, "wide", "json", "yaml", "name", "custom-columns=", "jsonpath=", "go-template=")
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "Label selector, e.g. -l team=platform.")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "Print tables (the default, wide and custom-columns outputs) without their header line.")
	o.Cluster.AddFlags(cmd.Flags())
	o.Fleet.AddFlags(cmd.Flags())
	return cmd
}

// Complete keeps the arguments: KIND and NAMEs.
func (o *GetOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root, o.args = root, args
	return nil
}

// Validate checks the flags.
func (o *GetOptions) Validate() error {
	switch o.Output {
	case "", printers.FormatWide, printers.FormatJSON, printers.FormatYAML, printers.FormatName:
		return nil
	}
	for _, prefix := range []string{"custom-columns=", "jsonpath=", "jsonpath-as-json=", "jsonpath-file=", "go-template=", "go-template-file=", "template=", "templatefile="} {
		if strings.HasPrefix(o.Output, prefix) {
			return nil
		}
	}
	return fmt.Errorf("--output must be wide, json, yaml, name, custom-columns=..., jsonpath=..., go-template=... or template=... (or their -file forms), not %q", o.Output)
}

// Run lists and prints. A first argument that is no kind the cluster
// serves is a name.
func (o *GetOptions) Run(ctx context.Context) error {
	fleet, err := o.root.fleet(&o.Fleet, &o.Cluster, nil, "")
	if err != nil {
		return err
	}
	if fleet != nil {
		return o.runFleet(ctx, fleet)
	}
	cfg, err := o.root.config(&o.Cluster, nil, "")
	if err != nil {
		return err
	}
	g := action.NewGet(cfg)
	g.Selector, g.Wide = o.Selector, o.Output == printers.FormatWide
	l, err := g.Run(ctx, o.args)
	if err != nil {
		return err
	}
	if o.Output == "" || o.Output == printers.FormatWide {
		err = o.table(l)
	} else {
		err = o.document(l)
	}
	return errors.Join(err, l.Missing)
}

func (o *GetOptions) table(l *action.Listing) error {
	pkgs := l.Packages
	if len(pkgs) == 0 {
		fmt.Fprintln(o.root.IOStreams.ErrOut, "No packages found.")
		return nil
	}
	t := printers.NewTable(getHeader(o.Output == printers.FormatWide)...)
	t.NoHeaders = o.NoHeaders
	for _, p := range pkgs {
		t.Row(o.row(p, l.Revisions[p])...)
	}
	return t.Render(o.root.IOStreams.Out)
}

// getHeader is the header of get's table (wide: -o wide).
func getHeader(wide bool) []string {
	header := []string{"NAME", "KIND", "PACKAGE", "VERSION", "INSTALLED", "HEALTHY", "REVISION", "AGE"}
	if wide {
		header = append(header, "DIGEST", "ACTIVATION", "RUNTIME-CONFIG", "RUNTIME", "FAMILY")
	}
	return header
}

// row is a package's row of the table; rev is its current revision (-o
// wide).
func (o *GetOptions) row(p *installed.Package, rev *installed.Revision) []string {
	inst, healthy := installed.Health(p, rev, func(t string) string { return conditionStatus(p, t) })
	row := []string{p.Name, p.Kind, reference.Repository(p.Source), p.Version, inst, healthy, orNone(p.CurrentRevision), age(p.Created)}
	if o.Output == printers.FormatWide {
		row = append(row, orUnknown(packageDigest(p.Digest, p.CurrentRevision, p.Generation)), orNone(p.ActivationPolicy), orNone(p.RuntimeConfig), orNone(runtimeState(rev)), orNone(diagnose.FamilyOf(p, rev)))
	}
	return row
}

// document prints every -o but the tables through cli-runtime's
// PrintFlags, as kubectl get does: json, yaml, name, jsonpath=,
// jsonpath-as-json=, jsonpath-file=, go-template=, go-template-file=,
// template= and templatefile=, of the object itself for one named
// package, else of a List; custom-columns= is a table.
func (o *GetOptions) document(l *action.Listing) error {
	pkgs := l.Packages
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, p := range pkgs {
		list.Items = append(list.Items, *p.Object)
	}
	if spec, ok := strings.CutPrefix(o.Output, "custom-columns="); ok {
		return o.customColumns(spec, list.Items)
	}
	if l.Named == 1 && len(pkgs) == 1 {
		return o.printDocument(pkgs[0].Object)
	}
	return o.printDocument(list)
}

// customColumns prints objects as -o custom-columns=spec.
func (o *GetOptions) customColumns(spec string, items []unstructured.Unstructured) error {
	cols, err := printers.ParseCustomColumns(spec)
	if err != nil {
		return err
	}
	cols.NoHeaders = o.NoHeaders
	objs := make([]map[string]any, len(items))
	for i := range items {
		objs[i] = items[i].Object
	}
	return cols.Print(o.root.IOStreams.Out, objs)
}

// printDocument prints obj through cli-runtime's PrintFlags.
func (o *GetOptions) printDocument(obj runtime.Object) error {
	pf := genericclioptions.NewPrintFlags("")
	pf.OutputFormat = &o.Output
	p, err := pf.ToPrinter()
	if err != nil {
		return fmt.Errorf("-o %s: %w", o.Output, err)
	}
	// A printer may drop a write's error; a full disk still fails.
	w := &printers.ErrWriter{W: o.root.IOStreams.Out}
	if err := p.PrintObj(obj, w); err != nil {
		return err
	}
	return w.Err
}

// conditionStatus is the status of condition t; generations before
// Crossplane v0.14 report a single Ready condition, which stands in for both.
func conditionStatus(p *installed.Package, t string) string {
	if c := p.Condition(t); c != nil {
		return c.Status
	}
	if c := p.Condition("Ready"); c != nil {
		return c.Status
	}
	return "Unknown"
}

// packageDigest is the digest a revision runs, when one at hand (the pin)
// is verified against the revision's name (reference.RevisionMadeFrom); ""
// otherwise: from Crossplane v2.4 a revision's name is a hash of the digest
// and the package's generation, no longer the digest's first digits.
func packageDigest(digest, rev string, generation int64) string {
	if digest != "" && reference.RevisionMadeFrom(rev, digest, generation) {
		return digest
	}
	return ""
}

func age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t))
}

// runtimeState is the RuntimeActive state of a revision (Crossplane v2.4
// and later), "" without one.
func runtimeState(r *installed.Revision) string {
	if r == nil {
		return ""
	}
	return r.RuntimeState()
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
