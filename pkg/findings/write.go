package findings

import (
	"fmt"
	"io"
	"strings"
)

// Write prints a heading, the counts by severity and one line per
// finding, blocking ones first: how plans and doctor print findings.
func Write(w io.Writer, head string, fs []Finding) error {
	b, warn, info := Counts(fs)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s\n  %d blocking, %d warning, %d info\n", head, b, warn, info)
	for _, sev := range []Severity{Blocking, Warning, Info} {
		for _, f := range fs {
			if f.Severity == sev {
				fmt.Fprintf(&sb, "  %-8s %s [%s]\n", strings.ToUpper(string(f.Severity)), f.Message, f.Rule)
			}
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// WriteLines prints findings as plans print them, after a blank line
// (nothing when there are none): for verbs whose report is a table.
func WriteLines(w io.Writer, fs []Finding) error {
	if len(fs) == 0 {
		return nil
	}
	var sb strings.Builder
	sb.WriteString("\n")
	for _, f := range fs {
		fmt.Fprintf(&sb, "%-8s %s [%s]\n", strings.ToUpper(string(f.Severity)), f.Message, f.Rule)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
