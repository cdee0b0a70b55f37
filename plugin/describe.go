package plugin

import (
	"cmp"
	"context"
	"fmt"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// DescribeOptions holds the flags and state of `kubectl xpkg describe`.
type DescribeOptions struct {
	Output  string
	Cluster ClusterFlags
	arg     string
	root    *Root
}

// NewCmdDescribe builds `kubectl xpkg describe`.
func NewCmdDescribe(root *Root) *cobra.Command {
	o := &DescribeOptions{root: root}
	cmd := &cobra.Command{
		Use:     "describe KIND/NAME | NAME",
		Short:   "Show a package's spec, revisions, conditions, installed objects, dependencies and events",
		Example: helpExample("describe"),
		GroupID: groupCluster,
		Args:    exactArgs(1, "KIND/NAME or NAME"),
		RunE:    runOptions(root, o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: text).")
	cmd.ValidArgsFunction = completePackages(root, false, true)
	completeOutput(cmd, "json", "yaml")
	o.Cluster.AddFlags(cmd.Flags())
	return cmd
}

// Complete keeps the argument.
func (o *DescribeOptions) Complete(root *Root, _ *cobra.Command, args []string) error {
	o.root, o.arg = root, args[0]
	return nil
}

// Validate checks the flags.
func (o *DescribeOptions) Validate() error { return printers.CheckFormat(o.Output) }

// Run describes one package.
func (o *DescribeOptions) Run(ctx context.Context) error {
	cfg, err := o.root.config(&o.Cluster, nil, "")
	if err != nil {
		return err
	}
	d, err := action.Describe(ctx, cfg, o.arg)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printers.PrintObject(o.root.IOStreams.Out, o.Output, d)
	}
	w := &printers.ErrWriter{W: o.root.IOStreams.Out}
	writeDescription(w, d)
	return w.Err
}

func writeDescription(w io.Writer, d *installed.Description) {
	p := d.Package
	fmt.Fprintf(w, "Name:               %s\nKind:               %s\nPackage:            %s\n", p.Name, p.Kind, p.Source)
	if p.ResolvedPackage != "" && p.ResolvedPackage != p.Source {
		fmt.Fprintf(w, "Resolved package:   %s\n", p.ResolvedPackage)
	}
	if len(p.AppliedImageConfigs) > 0 {
		var ics []string
		for _, a := range p.AppliedImageConfigs {
			ics = append(ics, fmt.Sprintf("%s (%s)", a.Name, a.Reason))
		}
		fmt.Fprintf(w, "Image configs:      %s\n", strings.Join(ics, ", "))
	}
	if p.Namespace != "" {
		fmt.Fprintf(w, "Namespace:          %s\n", p.Namespace)
	}
	if p.ActivationPolicy != "" {
		fmt.Fprintf(w, "Activation policy:  %s\n", p.ActivationPolicy)
	}
	if p.RuntimeConfig != "" {
		fmt.Fprintf(w, "Runtime config:     %s\n", p.RuntimeConfig)
	}
	fmt.Fprintf(w, "Current revision:   %s\n", orNone(p.CurrentRevision))
	if r := d.Current(); r != nil {
		fmt.Fprintf(w, "Current image:      %s\n", cmp.Or(r.Image, r.Version))
		fmt.Fprintf(w, "Digest:             %s\n", orUnknown(packageDigest(reference.Digest(r.Image), r.Name, p.Generation)))
		if s := r.RuntimeState(); s != "" {
			fmt.Fprintf(w, "Runtime:            %s\n", runtimeLine(r))
		}
	}
	if st := installed.Standing(p, d.Current()); st != "" {
		fmt.Fprintf(w, "State:              not healthy: %s\n", st)
	}
	if op, _ := installed.ReadOperation(p); op != nil {
		fmt.Fprintf(w, "Operation:          %s %s of %s to %s, at step %d of %d (%s)%s: kubectl xpkg doctor says how to finish or undo it\n",
			op.Operation, op.ID, op.From, op.To, op.Step, op.Of, op.StepName, map[bool]string{true: ", undoing"}[op.Undo])
	}
	fmt.Fprintf(w, "Age:                %s\n", age(p.Created))
	section(w, "Conditions", len(p.Conditions), func() {
		t := printers.NewTable("TYPE", "STATUS", "REASON", "MESSAGE")
		for _, c := range p.Conditions {
			t.Row(c.Type, c.Status, c.Reason, c.Message)
		}
		indent(w, t)
	})
	section(w, "Revisions", len(d.Revisions), func() {
		t := printers.NewTable("NAME", "REVISION", "IMAGE", "STATE", "HEALTHY", "AGE")
		for i, r := range d.Revisions { // newest first; the current one always
			if i >= manyRows && r.Name != p.CurrentRevision {
				continue
			}
			t.Row(r.Name, fmt.Sprint(r.Revision), cmp.Or(r.Image, r.Version), orNone(r.DesiredState), revisionHealth(r), age(r.Created))
		}
		indent(w, t)
		if n := len(d.Revisions); n > manyRows {
			fmt.Fprintf(w, "  … and %d older (%d revisions: -o yaml lists them all)\n", n-t.Len(), n)
		}
	})
	writeObjects(w, d.Current())
	writeMRDs(w, d)
	writeDependencies(w, d)
	if d.LockUnresolved != nil {
		fmt.Fprintf(w, "Lock:               %s\n", installed.LockWarning(d.LockUnresolved))
	}
	section(w, "Events", len(d.Events), func() {
		t := printers.NewTable("TYPE", "REASON", "AGE", "FROM", "OBJECT", "MESSAGE")
		for _, e := range d.Events {
			t.Row(e.Type, e.Reason, eventAge(e), orNone(e.From), e.Object, e.Message)
		}
		indent(w, t)
	})
}

// manyRows is where a section stops listing and counts: a big provider
// installs 2,000 definitions.
const manyRows = 20

func writeObjects(w io.Writer, r *installed.Revision) {
	n := 0
	if r != nil {
		n = len(r.Objects)
	}
	section(w, "Objects installed by the current revision", n, func() {
		if n > manyRows {
			counts := map[string]int{}
			var kinds []string
			for _, o := range r.Objects {
				if counts[o.Kind] == 0 {
					kinds = append(kinds, o.Kind)
				}
				counts[o.Kind]++
			}
			t := printers.NewTable("KIND", "COUNT")
			for _, k := range kinds {
				t.Row(k, fmt.Sprint(counts[k]))
			}
			indent(w, t)
			fmt.Fprintf(w, "  (%d objects: -o yaml lists them)\n", n)
			return
		}
		t := printers.NewTable("KIND", "NAME", "API VERSION")
		for _, o := range r.Objects {
			t.Row(o.Kind, o.Name, o.APIVersion)
		}
		indent(w, t)
	})
}

// writeMRDs shows the state of a Crossplane v2 provider's managed
// resource definitions (safe-start: Inactive until a policy activates
// them) and the policies that activated them.
func writeMRDs(w io.Writer, d *installed.Description) {
	if len(d.MRDs) == 0 {
		return
	}
	states, est := map[string]int{}, 0
	for _, m := range d.MRDs {
		states[cmp.Or(m.State, "<unset>")]++
		if m.Established == "True" {
			est++
		}
	}
	var sum []string
	for _, s := range []string{"Active", "Inactive", "Terminating", "<unset>"} {
		if states[s] > 0 {
			sum = append(sum, fmt.Sprintf("%d %s", states[s], s))
		}
	}
	fmt.Fprintf(w, "Managed resource definitions: %d (%s; %d Established)\n", len(d.MRDs), strings.Join(sum, ", "), est)
	t := printers.NewTable("NAME", "STATE", "ESTABLISHED")
	for i, m := range d.MRDs {
		if i == manyRows {
			break
		}
		state := orNone(m.State)
		if m.Deleting != nil {
			state += " (its CRD is being deleted since " + m.Deleting.UTC().Format(time.RFC3339) + ")"
		}
		t.Row(m.Name, state, cmp.Or(m.Established, "Unknown"))
	}
	indent(w, t)
	if len(d.MRDs) > manyRows {
		fmt.Fprintf(w, "  … and %d more (kubectl get managedresourcedefinitions; -o yaml lists them all)\n", len(d.MRDs)-manyRows)
	}
	section(w, "Activation policies", len(d.MRAPs), func() {
		t := printers.NewTable("NAME", "ACTIVATES", "ACTIVATED HERE")
		for _, m := range d.MRAPs {
			t.Row(m.Name, strings.Join(m.Activate, ", "), fmt.Sprint(len(m.Activated)))
		}
		indent(w, t)
	})
}

func writeDependencies(w io.Writer, d *installed.Description) {
	section(w, "Dependencies", len(d.Dependencies), func() {
		t := printers.NewTable("PACKAGE", "KIND", "CONSTRAINT", "RESOLVED")
		for _, dep := range d.Dependencies {
			t.Row(dep.Package, orNone(dep.Kind), dep.Constraints, orNone(dep.Resolved))
		}
		indent(w, t)
	})
	if len(d.Dependents) > 0 {
		fmt.Fprintf(w, "Required by:        %s\n", strings.Join(d.Dependents, ", "))
	}
}

// revisionHealth is the revision's health condition, whatever the
// generation calls it.
// runtimeLine is the current revision's RuntimeActive condition (Crossplane
// v2.4 and later): Active, or why not, with its message.
func runtimeLine(r *installed.Revision) string {
	c := r.Condition(installed.TypeRuntimeActive)
	s := r.RuntimeState()
	if c.Reason == installed.ReasonAwaitingActivation {
		return s + " (scaled to zero until one of its managed resource definitions is active)"
	}
	if c.Status != "True" && c.Message != "" {
		return s + " (" + c.Message + ")"
	}
	return s
}

func revisionHealth(r *installed.Revision) string {
	for _, t := range []string{"Healthy", "RevisionHealthy"} {
		if c := r.Condition(t); c != nil {
			return c.Status
		}
	}
	return "Unknown"
}

func section(w io.Writer, title string, n int, body func()) {
	if n == 0 {
		fmt.Fprintf(w, "%s:%s<none>\n", title, strings.Repeat(" ", max(1, 19-len(title))))
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	body()
}

// eventAge is kubectl describe's Age of an event: when it was last seen,
// and for a repeated one how often over how long.
func eventAge(e installed.Event) string {
	if e.Count > 1 {
		return fmt.Sprintf("%s (x%d over %s)", age(e.Last), e.Count, age(e.First))
	}
	return age(e.First)
}

func indent(w io.Writer, t *printers.Table) {
	var b strings.Builder
	_ = t.Render(&b)
	for line := range strings.Lines(b.String()) {
		fmt.Fprint(w, "  "+line)
	}
}
