package findings

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/readme"
)

// TestRulesTable: every Rule constant is in Rules once, with verbs and
// help, and the table of plan rules in docs/upgrading.md lists exactly
// those, in Rules' order (docs/rules.md is generated from Rules).
func TestRulesTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "rules.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var consts []string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && strings.HasPrefix(vs.Names[0].Name, "Rule") && len(vs.Values) == 1 {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				id, _ := strconv.Unquote(lit.Value)
				consts = append(consts, id)
			}
		}
		return true
	})
	var ids []string
	for _, r := range Rules {
		if slices.Contains(ids, r.ID) {
			t.Errorf("Rules lists %s twice", r.ID)
		}
		if len(r.Verbs) == 0 || r.Help == "" {
			t.Errorf("rule %s has no verbs or no help", r.ID)
		}
		ids = append(ids, r.ID)
	}
	slices.Sort(consts)
	if got := slices.Sorted(slices.Values(ids)); !slices.Equal(got, consts) {
		t.Errorf("Rules has %v; the constants are %v", got, consts)
	}

	table := readme.Table(t, "docs/upgrading.md", "| rule | severity | when |")
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|").FindAllStringSubmatch(table, -1) {
		listed = append(listed, m[1])
	}
	if !slices.Equal(listed, ids) {
		t.Errorf("docs/upgrading.md's table lists %v; Rules, in its order, %v", listed, ids)
	}
}

// TestDoctorRulesTable: the runbook, docs/doctor.md, lists exactly the
// rules whose verbs name doctor, in Rules' order.
func TestDoctorRulesTable(t *testing.T) {
	var ids []string
	for _, r := range Rules {
		if slices.Contains(r.Verbs, verbDoctor) {
			ids = append(ids, r.ID)
		}
	}
	table := readme.Table(t, "docs/doctor.md", "| rule | severity | finds |")
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|").FindAllStringSubmatch(table, -1) {
		listed = append(listed, m[1])
	}
	if len(ids) == 0 || !slices.Equal(listed, ids) {
		t.Errorf("docs/doctor.md's table lists %v; Rules, for doctor, %v", listed, ids)
	}
}
