// Package validate checks packages against the xpkg specification: it opens
// each source, reads its stream and reports every content-rule violation.
package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg/legacy"
)

// Status of one checked package.
const (
	Valid      = "valid"
	Invalid    = "invalid"
	Unreadable = "unreadable"
)

// Result is what checking one package found.
type Result struct {
	Source     string           `json:"source"`
	Status     string           `json:"status"`
	Info       *source.Info     `json:"info,omitempty"`
	Kind       string           `json:"kind,omitempty"`
	Name       string           `json:"name,omitempty"`
	Objects    int              `json:"objects"`
	Violations []xpkg.Violation `json:"violations,omitempty"`
	Error      string           `json:"error,omitempty"`
}

// Check opens src and validates it. Problems reading it make the result
// Unreadable; breaches of the rules make it Invalid.
func Check(ctx context.Context, src string, o source.Options, limits xpkg.Limits) Result {
	r := Result{Source: src}
	p, err := source.Open(ctx, src, o)
	if err != nil {
		return r.unreadable(err)
	}
	defer p.Close()
	r.Info = &p.Info
	if p.Format == source.FormatLegacy {
		return r.checkLegacy(p)
	}
	c, err := xpkg.ValidateStream(p.Stream(), limits)
	if err = p.Cause(err); err == nil {
		err = p.Close()
	}
	var syntax *xpkg.SyntaxError
	if errors.As(err, &syntax) {
		r.Status = Invalid
		r.Violations = []xpkg.Violation{{Document: syntax.Document, Rule: xpkg.RuleYAML, Message: syntax.Err.Error()}}
		return r
	}
	if err != nil {
		return r.unreadable(err)
	}
	r.Objects = c.Objects
	if c.Meta != nil {
		r.Kind, r.Name = c.Meta.Kind, c.Meta.Name()
	}
	r.Violations = c.Violations
	r.Status = Valid
	if len(r.Violations) > 0 {
		r.Status = Invalid
	}
	return r
}

func (r Result) unreadable(err error) Result {
	r.Status, r.Error = Unreadable, err.Error()
	return r
}

// checkLegacy validates a .registry/ package by translating it, as the
// package manager's unpack step would.
func (r Result) checkLegacy(p *source.Package) Result {
	res, err := legacy.Translate(p.Legacy(), legacy.Options{Image: p.Reference})
	if err != nil {
		r.Status = Invalid
		r.Violations = []xpkg.Violation{{Document: -1, Rule: "legacy", Message: err.Error()}}
		return r
	}
	r.Status, r.Kind, r.Name, r.Objects = Valid, "Package", res.Package.GetName(), 1+len(res.CRDs)
	return r
}

// Summary counts results by status.
type Summary struct {
	Valid, Invalid, Unreadable, Violations int
}

// Summarize counts the results.
func Summarize(results []Result) Summary {
	var s Summary
	for _, r := range results {
		switch r.Status {
		case Valid:
			s.Valid++
		case Invalid:
			s.Invalid++
		default:
			s.Unreadable++
		}
		s.Violations += len(r.Violations)
	}
	return s
}

// String is the summary line.
func (s Summary) String() string {
	n := s.Valid + s.Invalid + s.Unreadable
	line := fmt.Sprintf("%d %s checked: %d valid, %d invalid", n, plural(n, "package"), s.Valid, s.Invalid)
	if s.Invalid > 0 {
		line += fmt.Sprintf(" (%d %s)", s.Violations, plural(s.Violations, "violation"))
	}
	return line + fmt.Sprintf(", %d unreadable", s.Unreadable)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// WriteText prints one result the way validate shows it to a person.
func WriteText(w io.Writer, r Result) {
	switch r.Status {
	case Unreadable:
		fmt.Fprintf(w, "%s: cannot read: %s\n", r.Source, r.Error)
		return
	case Valid:
		fmt.Fprintf(w, "%s: valid %s %s (%d %s)\n", r.Source, r.Kind, r.Name, r.Objects, plural(r.Objects, "object"))
		return
	}
	what := strings.TrimSpace(r.Kind + " " + r.Name)
	if what != "" {
		what = " " + what
	}
	fmt.Fprintf(w, "%s: invalid%s: %d %s\n", r.Source, what, len(r.Violations), plural(len(r.Violations), "violation"))
	for _, v := range r.Violations {
		fmt.Fprintf(w, "    %s\n", v)
	}
}
