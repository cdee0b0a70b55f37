// Package arch holds the test of the module's layering: which packages may
// import which.
package arch

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

const module = "github.com/kubectl-xpkg/kubectl-xpkg/"

// imports maps each non-test Go file under dir (relative to the module
// root) to the module packages it imports, relative to the module.
func imports(t *testing.T, root, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module) {
				out[rel] = append(out[rel], strings.TrimPrefix(p, module))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLayers: pkg/ never imports the command layer; pkg/reference and
// pkg/findings import nothing of the module and pkg/installed only what
// describes references and image configs; pkg/diagnose, which the use
// cases call, never imports them (pkg/action); the command layer never
// imports pkg/cluster: it reaches the cluster through the use cases.
func TestLayers(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	below := map[string][]string{
		"pkg/reference/": nil,
		"pkg/installed/": {"pkg/reference", "pkg/imageconfig"},
		"pkg/findings/":  nil,
	}
	for file, imps := range imports(t, root, "pkg") {
		for _, imp := range imps {
			if imp == "plugin" || strings.HasPrefix(imp, "plugin/") || strings.HasPrefix(imp, "cmd/") {
				t.Errorf("%s imports %s: pkg/ never imports the command layer", file, imp)
			}
			if strings.HasPrefix(file, "pkg/diagnose/") && imp == "pkg/action" {
				t.Errorf("%s imports pkg/action: the use cases call pkg/diagnose, not the other way", file)
			}
			for dir, allowed := range below {
				if strings.HasPrefix(file, dir) && !slices.Contains(allowed, imp) {
					t.Errorf("%s imports %s: %s may import of this module only %v", file, imp, dir, allowed)
				}
			}
		}
	}
	for file, imps := range imports(t, root, "plugin") {
		if slices.Contains(imps, "pkg/cluster") {
			t.Errorf("%s imports pkg/cluster: the command layer reaches the cluster through the use cases", file)
		}
	}
}
