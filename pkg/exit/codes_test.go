package exit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// TestTableListsEveryCode: Table, from which docs/exit-codes.md and each
// command's reference page are generated, has a row for every constant of
// codes.go (named in table.go, so a new code needs its row), every row
// says what its code means, and no row has a code codes.go does not define
// but the statuses of a signal.
func TestTableListsEveryCode(t *testing.T) {
	consts := map[string]bool{}
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.Name != "Signaled" {
						consts[n.Name] = false
					}
				}
			}
		}
	}
	tf, err := parser.ParseFile(token.NewFileSet(), "table.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(tf, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if _, ok := consts[id.Name]; ok {
				consts[id.Name] = true
			}
		}
		return true
	})
	for name, named := range consts {
		if !named {
			t.Errorf("Table has no row for %s (codes.go)", name)
		}
	}
	values := []int{OK, Error, Usage, ValidateInvalid, ValidateUnreadable, DiffSame, DiffDifferent, DiffTrouble, DiffBreaking,
		Unread, Unanswered, PlanRefused, DoctorBlocking, PlanChanged, RollbackFailed, WaitTimedOut}
	signal := false
	last := 0
	for _, s := range Table {
		if len(s.Codes) == 0 || s.Meaning == "" {
			t.Errorf("row %v: no code or no meaning", s)
		}
		for _, c := range s.Codes {
			if c > Signaled {
				signal = true
			} else if !slices.Contains(values, c) {
				t.Errorf("Table lists exit code %d, which codes.go does not define", c)
			}
		}
		if s.Codes[0] < last {
			t.Errorf("row %v is out of the order of codes", s.Codes)
		}
		last = s.Codes[0]
	}
	if !signal {
		t.Error("Table lists no status of an interrupted verb (Signaled + the signal)")
	}
}

// TestFor: a verb's rows are those of every verb and its own.
func TestFor(t *testing.T) {
	rows := For("diff")
	var codes []int
	for _, r := range rows {
		codes = append(codes, r.Codes[0])
	}
	want := []int{OK, DiffSame, Error, Usage, DiffDifferent, DiffTrouble, DiffBreaking, Signaled + 2}
	if !slices.Equal(codes, want) {
		t.Errorf("For(diff) codes = %v, want %v", codes, want)
	}
}
