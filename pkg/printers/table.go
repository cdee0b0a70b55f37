// Package printers renders results the way kubectl does: borderless tables
// with upper-case headers, and JSON or YAML documents for scripts.
package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"sigs.k8s.io/yaml"
)

// Table is a kubectl-style table: no borders, columns separated by three
// spaces, every cell left-aligned and printed as given.
type Table struct {
	header []string
	rows   [][]string
	// NoHeaders leaves the header line out (kubectl's --no-headers).
	NoHeaders bool
}

// NewTable starts a table with the given column headers.
func NewTable(header ...string) *Table {
	return &Table{header: header}
}

// Row appends one row; it must have as many cells as the header.
func (t *Table) Row(cells ...string) {
	t.rows = append(t.rows, cells)
}

// Len is the number of rows.
func (t *Table) Len() int { return len(t.rows) }

// Render writes the table to w.
func (t *Table) Render(w io.Writer) error {
	var buf bytes.Buffer
	off := tw.Off
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.SeparatorsNone,
				Lines:      tw.LinesNone,
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoFormat: off, AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Padding:    tw.CellPadding{Global: tw.Padding{Right: "   ", Overwrite: true}},
			},
			Row: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoFormat: off, AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Padding:    tw.CellPadding{Global: tw.Padding{Right: "   ", Overwrite: true}},
			},
		}),
		tablewriter.WithTrimSpace(off),
	)
	if !t.NoHeaders {
		tbl.Header(toAny(t.header)...)
	}
	for _, r := range t.rows {
		if err := tbl.Append(r); err != nil {
			return err
		}
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	// The padding that separates columns also trails the last one.
	for line := range strings.Lines(buf.String()) {
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// Formats the structured printers accept for -o.
const (
	FormatJSON = "json"
	FormatYAML = "yaml"
	FormatName = "name"
	FormatWide = "wide"
)

// CheckFormat accepts an empty -o (the human form) or one of formats
// (default: json and yaml).
func CheckFormat(output string, formats ...string) error {
	if len(formats) == 0 {
		formats = []string{FormatJSON, FormatYAML}
	}
	if output == "" || slices.Contains(formats, output) {
		return nil
	}
	return fmt.Errorf("--output must be %s, not %q", strings.Join(formats, " or "), output)
}

// PrintObject writes v as indented JSON or as YAML.
func PrintObject(w io.Writer, format string, v any) error {
	switch format {
	case FormatJSON:
		b, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case FormatYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	default:
		return fmt.Errorf("unknown output format %q: use json or yaml", format)
	}
}

// ErrWriter passes writes on to W and remembers the first that failed;
// later writes fail at once. A report written with many Fprintf calls
// then fails as a whole: a full disk is an error, not a short report.
type ErrWriter struct {
	W   io.Writer
	Err error
}

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	if err != nil {
		e.Err = err
	}
	return n, err
}
