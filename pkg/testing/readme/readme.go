// Package readme reads the module's README.md for tests that hold it to
// the code: its tables of exit codes and of plan rules.
package readme

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// Table is the README's table whose header line is header: from that line
// to the first blank line after it. The test fails when there is none.
func Table(t testing.TB, header string) string {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, header+"\n")
	if start < 0 {
		t.Fatalf("README.md has no table %q", header)
	}
	table := s[start:]
	if end := strings.Index(table, "\n\n"); end >= 0 {
		table = table[:end]
	}
	return table
}
