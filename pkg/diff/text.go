package diff

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/printers"
)

// TextOptions shape the human report.
type TextOptions struct {
	// Color uses ANSI colours: breaking changes red, compatible green,
	// unified diffs coloured the way git colours them.
	Color bool
	// Stat prints only the summary and one line per object.
	Stat bool
}

const (
	red   = "\x1b[31m"
	green = "\x1b[32m"
	cyan  = "\x1b[36m"
	bold  = "\x1b[1m"
	reset = "\x1b[0m"
)

type painter bool

func (p painter) paint(color, s string) string {
	if !p || s == "" {
		return s
	}
	return color + s + reset
}

// WriteText writes the human report: the two packages, the summary, then
// every change by object, with unified diffs where there are some.
func WriteText(out io.Writer, r *Report, o TextOptions) error {
	w := &printers.ErrWriter{W: out}
	p := painter(o.Color)
	fmt.Fprintf(w, "%s %s\n%s %s\n", p.paint(red, "---"), sideLine(r.Old), p.paint(green, "+++"), sideLine(r.New))
	fmt.Fprintln(w, p.paint(bold, r.Summary.String()))
	if o.Stat {
		if err := writeStat(w, r, p); err != nil {
			return err
		}
		return w.Err
	}
	if len(r.Package) > 0 {
		fmt.Fprintf(w, "\n%s\n", p.paint(bold, "Package "+strings.TrimSpace(r.New.Kind+" "+r.New.Name)))
		writeChanges(w, r.Package, p)
	}
	for _, obj := range r.Objects {
		fmt.Fprintf(w, "\n%s (%s)\n", p.paint(bold, obj.Label()), obj.Status)
		if obj.Status != Added && obj.Status != Removed {
			writeChanges(w, obj.Changes, p)
		} else if obj.Breaking() {
			writeChanges(w, obj.Changes, p)
		}
		if obj.Diff != "" {
			writeUnified(w, obj.Diff, p)
		}
	}
	return w.Err
}

func sideLine(s Side) string {
	what := s.Source
	if s.Reference != "" && s.Reference != s.Source {
		what += " (" + s.Reference + ")"
	}
	if s.Digest != "" {
		what += "@" + s.Digest
	}
	if pkg := strings.TrimSpace(s.Kind + " " + s.Name); pkg != "" {
		what = pkg + " from " + what
	}
	return what
}

func writeChanges(w io.Writer, cs []Change, p painter) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range cs {
		sev := p.paint(green, "compatible")
		if c.Severity == Breaking {
			sev = p.paint(red, "BREAKING  ")
		}
		where := c.Version
		if c.Path != "" {
			where = join(where, c.Path)
		}
		if where != "" {
			where += ": "
		}
		fmt.Fprintf(tw, "  %s  %s%s\t[%s]\n", sev, where, c.Message, c.Rule)
	}
	tw.Flush()
}

func writeUnified(w io.Writer, diff string, p painter) {
	for _, line := range strings.SplitAfter(strings.TrimSuffix(diff, "\n"), "\n") {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			line = p.paint(bold, line)
		case strings.HasPrefix(line, "+"):
			line = p.paint(green, line)
		case strings.HasPrefix(line, "-"):
			line = p.paint(red, line)
		case strings.HasPrefix(line, "@@"):
			line = p.paint(cyan, line)
		}
		fmt.Fprintf(w, "    %s\n", line)
	}
}

// writeStat prints one line per object (and one for the package): its
// status and how many changes, how many of them breaking.
func writeStat(w io.Writer, r *Report, p painter) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(label, status string, cs []Change) {
		b := len(breakingOf(cs))
		counts := fmt.Sprintf("%d %s", len(cs), plural(len(cs), "change", "changes"))
		if b > 0 {
			counts += ", " + p.paint(red, fmt.Sprintf("%d breaking", b))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", label, status, counts)
	}
	if len(r.Package) > 0 {
		line("Package "+strings.TrimSpace(r.New.Kind+" "+r.New.Name), "changed", r.Package)
	}
	for _, o := range r.Objects {
		line(o.Label(), o.Status, o.Changes)
	}
	return tw.Flush()
}
