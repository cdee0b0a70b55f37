// Package arch holds the test of the module's layering: which packages may
// import which, and what the command layer may reach.
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
// root) to what it imports: the module's packages relative to the module
// (pkg/action), others by their full path (github.com/spf13/cobra).
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
		rel = filepath.ToSlash(rel)
		out[rel] = []string{}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[rel] = append(out[rel], strings.TrimPrefix(p, module))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// importRule refuses files under dir (a directory relative to the module
// root, with the packages below it) the imports refused says.
type importRule struct {
	name    string
	dir     string
	refused func(imp string) bool
	why     string
}

// under: imp is the package p or one below it.
func under(imp string, ps ...string) bool {
	return slices.ContainsFunc(ps, func(p string) bool { return imp == p || strings.HasPrefix(imp, p+"/") })
}

// ofModule: imp is one of the module's packages.
func ofModule(imp string) bool { return under(imp, "pkg", "plugin", "cmd") }

// onlyOfModule refuses the module's packages but those allowed.
func onlyOfModule(allowed ...string) func(string) bool {
	return func(imp string) bool { return ofModule(imp) && !slices.Contains(allowed, imp) }
}

// importRules are the module's layers. A rule about a directory that does
// not exist (yet) holds no file, and so refuses nothing.
var importRules = []importRule{
	{"command-layer-below", "pkg", func(imp string) bool { return under(imp, "plugin", "cmd") },
		"pkg/ never imports the command layer"},
	{"no-cli-below", "pkg", func(imp string) bool { return under(imp, "github.com/spf13/cobra", "github.com/spf13/pflag") },
		"pkg/ never imports cobra or pflag: flags and commands are the command layer's"},
	{"reference-leaf", "pkg/reference", onlyOfModule(),
		"pkg/reference may import nothing of this module"},
	{"installed-values", "pkg/installed", onlyOfModule("pkg/reference", "pkg/imageconfig"),
		"pkg/installed may import of this module only pkg/reference and pkg/imageconfig"},
	{"format-pure", "pkg/xpkg", func(imp string) bool { return under(imp, "pkg/source", "pkg/cluster") },
		"pkg/xpkg is the package format: it knows nothing of where packages come from (pkg/source) or of the cluster (pkg/cluster)"},
	{"findings-leaf", "pkg/findings", onlyOfModule(),
		"pkg/findings is a leaf the use cases and diagnosis build on: it imports nothing of this module"},
	{"diagnose-below-actions", "pkg/diagnose", func(imp string) bool { return under(imp, "pkg/action") },
		"pkg/diagnose serves the use cases: it never imports pkg/action"},
	{"resolve-below-actions", "pkg/resolve", func(imp string) bool { return under(imp, "pkg/action") },
		"pkg/resolve serves the use cases: it never imports pkg/action"},
	{"commands-through-actions", "plugin", func(imp string) bool { return under(imp, "pkg/cluster") },
		"the command layer reaches the cluster through the use cases (pkg/action), never pkg/cluster"},
}

// violations are the imports of graph (file → imports) the rules refuse,
// one line each.
func violations(graph map[string][]string, rules []importRule) []string {
	var out []string
	for _, r := range rules {
		for file, imps := range graph {
			if !under(filepath.ToSlash(filepath.Dir(file)), r.dir) {
				continue
			}
			for _, imp := range imps {
				if r.refused(imp) {
					out = append(out, file+" imports "+imp+": "+r.why+" ("+r.name+")")
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestLayers: the module's packages import as importRules say.
func TestLayers(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	graph := imports(t, root, "pkg")
	for file, imps := range imports(t, root, "plugin") {
		graph[file] = imps
	}
	if len(graph) == 0 {
		t.Fatal("no Go files found under pkg/ and plugin/")
	}
	for _, v := range violations(graph, importRules) {
		t.Error(v)
	}
}

// TestLayerRulesBite: each rule refuses an import graph that breaks it,
// and lets the same graph without that import through.
func TestLayerRulesBite(t *testing.T) {
	cases := map[string]struct{ file, imp string }{
		"command-layer-below":      {"pkg/action/install.go", "plugin"},
		"no-cli-below":             {"pkg/printers/table.go", "github.com/spf13/pflag"},
		"reference-leaf":           {"pkg/reference/reference.go", "pkg/installed"},
		"installed-values":         {"pkg/installed/lock.go", "pkg/cluster"},
		"format-pure":              {"pkg/xpkg/legacy/walk.go", "pkg/source"},
		"findings-leaf":            {"pkg/findings/write.go", "pkg/installed"},
		"diagnose-below-actions":   {"pkg/diagnose/state.go", "pkg/action"},
		"resolve-below-actions":    {"pkg/resolve/choose.go", "pkg/action"},
		"commands-through-actions": {"plugin/get.go", "pkg/cluster"},
	}
	for _, r := range importRules {
		c, ok := cases[r.name]
		if !ok {
			t.Errorf("rule %s has no case that breaks it", r.name)
			continue
		}
		clean := map[string][]string{c.file: {"fmt", "strings"}}
		if v := violations(clean, []importRule{r}); len(v) > 0 {
			t.Errorf("rule %s refuses a graph that keeps it: %v", r.name, v)
		}
		broken := map[string][]string{c.file: {"fmt", "strings", c.imp}}
		if v := violations(broken, []importRule{r}); len(v) != 1 || !strings.Contains(v[0], "("+r.name+")") {
			t.Errorf("rule %s: %s importing %s gives %v, want one violation", r.name, c.file, c.imp, v)
		}
		if v := violations(broken, importRules); !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, "("+r.name+")") }) {
			t.Errorf("rule %s does not bite among all the rules: %v", r.name, v)
		}
	}
}
