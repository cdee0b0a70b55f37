// Package readme reads the module's Markdown documentation (README.md and
// docs/) for tests that hold it to the code: the tables of plan rules and
// of doctor's rules.
package readme

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// Table is the table whose header line is header in the Markdown file at
// path (relative to the module root): from that line to the first blank
// line after it. The test fails when there is none.
func Table(t testing.TB, path, header string) string {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, header+"\n")
	if start < 0 {
		t.Fatalf("%s has no table %q", path, header)
	}
	table := s[start:]
	if end := strings.Index(table, "\n\n"); end >= 0 {
		table = table[:end]
	}
	return table
}
