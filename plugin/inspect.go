package plugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/inspect"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// InspectOptions holds the flags and state of `kubectl xpkg inspect`.
type InspectOptions struct {
	Output string
	Source SourceFlags
	reads  localReads

	source string
	root   *Root
}

// NewCmdInspect builds `kubectl xpkg inspect`.
func NewCmdInspect(root *Root) *cobra.Command {
	o := &InspectOptions{root: root}
	cmd := &cobra.Command{
		Use:     "inspect SOURCE",
		Short:   "Sum a package up on one screen without writing its content: meta, objects, runtime, image",
		Long:    helpLong("inspect"),
		Example: helpExample("inspect"),
		GroupID: groupLocal,
		Args:    exactArgs(1, "SOURCE"),
		RunE:    runOptions(root, o),
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: text).")
	completeOutput(cmd, "json", "yaml")
	o.Source.AddFlags(f)
	o.reads.addFlags(f)
	return cmd
}

// Complete keeps the argument.
func (o *InspectOptions) Complete(root *Root, cmd *cobra.Command, args []string) error {
	o.root, o.source, o.reads.cmd = root, args[0], cmd
	return nil
}

// Validate checks the flags.
func (o *InspectOptions) Validate() error { return printers.CheckFormat(o.Output) }

// Run reads and prints.
func (o *InspectOptions) Run(ctx context.Context) error {
	so, limits, err := o.Source.Options()
	if err != nil {
		return err
	}
	so.Inspect = true
	ref, so, err := o.reads.read(ctx, o.root, &o.Source, so, o.source)
	if err != nil {
		return err
	}
	p, err := openPackage(ctx, o.root, ref, so)
	if err != nil {
		return err
	}
	defer p.Close()
	r, err := inspect.Summarize(p, limits)
	if err != nil {
		return err
	}
	r.Source = o.source
	if o.Output != "" {
		return printers.PrintObject(o.root.IOStreams.Out, o.Output, r)
	}
	return writeInspect(o.root.IOStreams.Out, r)
}

func writeInspect(w io.Writer, r *inspect.Report) error {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%-14s%s\n", k+":", v) }
	line("Source", fmt.Sprintf("%s (%s)", r.Source, r.Type))
	line("Kind", fmt.Sprintf("%s (%s)", r.Kind, r.APIVersion))
	line("Name", r.Name)
	line("Version", orNone(r.Version))
	line("Crossplane", orNone(r.Crossplane))
	if len(r.DependsOn) == 0 {
		line("Depends on", "<none>")
	} else {
		b.WriteString("Depends on:\n")
		t := printers.NewTable("PACKAGE", "KIND", "VERSION")
		for _, d := range r.DependsOn {
			t.Row(d.Package, orNone(d.Kind), orNone(d.Version))
		}
		indent(&b, t)
	}
	line("Capabilities", orNone(strings.Join(r.Capabilities, ", ")))
	if len(r.Annotations) == 0 {
		line("Annotations", "<none>")
	} else {
		b.WriteString("Annotations:\n")
		keys := make([]string, 0, len(r.Annotations))
		for k := range r.Annotations {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %s\n", k, firstLine(r.Annotations[k]))
		}
	}
	if len(r.Problems) > 0 {
		b.WriteString("Problems:\n")
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	total := 0
	for _, k := range r.Objects {
		total += k.Count
	}
	line("Objects", fmt.Sprint(total))
	if total > 0 {
		t := printers.NewTable("KIND", "API VERSION", "COUNT")
		for _, k := range r.Objects {
			t.Row(k.Kind, k.APIVersion, fmt.Sprint(k.Count))
		}
		indent(&b, t)
	}
	switch r.Runtime.Kind {
	case inspect.RuntimeController:
		line("Runtime", "controller image "+r.Runtime.Image)
	case inspect.RuntimeEmbedded:
		what := "the package image itself"
		if len(r.Runtime.Entrypoint) > 0 {
			what += " (entrypoint " + strings.Join(r.Runtime.Entrypoint, " ") + ")"
		} else if r.Image != nil {
			what += " (it has no entrypoint: no runtime is embedded)"
		} else {
			what += " (to be built from this source)"
		}
		line("Runtime", what)
	default:
		line("Runtime", "<none>")
	}
	line("Format", r.Format)
	if im := r.Image; im != nil {
		b.WriteString("Image:\n")
		if im.Index != "" {
			fmt.Fprintf(&b, "  Index:       %s (%s)\n", im.Index, strings.Join(im.Platforms, ", "))
		}
		fmt.Fprintf(&b, "  Manifest:    %s\n", im.Manifest)
		if im.Config != "" {
			fmt.Fprintf(&b, "  Config:      %s\n", im.Config)
		}
		fmt.Fprintf(&b, "  Layers:      %d\n", im.Layers)
		if l := im.Base; l != nil {
			fmt.Fprintf(&b, "  Base layer:  %s (%s compressed, %s uncompressed)\n", l.Digest, size(l.Size), size(l.Uncompressed))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// size prints a byte count for people: 4706 B, 20.0 KiB, 3.1 MiB.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	first, _, more := strings.Cut(s, "\n")
	if len(first) > 100 {
		first, more = first[:100], true
	}
	if more {
		first += " …"
	}
	return first
}
