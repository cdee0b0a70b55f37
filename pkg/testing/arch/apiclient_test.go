package arch

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// The command layer reaches the cluster through the use cases: it never
// holds the API client (pkg/cluster's Cluster, or the Clients it is made
// of), whichever way it would get one: importing pkg/cluster (an import
// rule), or through a value pkg/action hands out, such as a method of
// action.Config (which exports neither), which only the types tell.

// apiClientTypes are pkg/cluster's types that are the API client.
var apiClientTypes = []string{"Cluster", "Clients"}

var exports = sync.OnceValues(func() (map[string]string, error) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", "./plugin")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export ./plugin: %w\n%s", err, stderr.String())
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			m[path] = file
		}
	}
	return m, sc.Err()
})

// typeCheck type-checks files as the package path, against the compiled
// packages the command layer depends on.
func typeCheck(t *testing.T, fset *token.FileSet, path string, files []*ast.File) *types.Info {
	t.Helper()
	exp, err := exports()
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
		file, ok := exp[p]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", p)
		}
		return os.Open(file)
	})}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := conf.Check(path, fset, files, info); err != nil {
		t.Fatal(err)
	}
	return info
}

// apiClientUses are the places in the type-checked code whose value is the
// API client, one line each.
func apiClientUses(fset *token.FileSet, info *types.Info) []string {
	var out []string
	for expr, tv := range info.Types {
		if tv.IsType() {
			continue
		}
		t := tv.Type
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		n, ok := t.(*types.Named)
		if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != module+"pkg/cluster" || !slices.Contains(apiClientTypes, n.Obj().Name()) {
			continue
		}
		pos := fset.Position(expr.Pos())
		out = append(out, fmt.Sprintf("%s:%d: %s is the API client (cluster.%s): the command layer reaches the cluster through the use cases", filepath.Base(pos.Filename), pos.Line, types.ExprString(expr), n.Obj().Name()))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestCommandsHoldNoAPIClient: no expression of the command layer is the
// API client.
func TestCommandsHoldNoAPIClient(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := parseDir(t, fset, filepath.Join(root, "plugin"))
	if len(files) == 0 {
		t.Fatal("no Go files in plugin/")
	}
	for _, u := range apiClientUses(fset, typeCheck(t, fset, module+"plugin", files)) {
		t.Error(u)
	}
}

// TestAPIClientRuleBites: a command that reaches the API client through a
// use case's exported field is caught, one that asks the use case is not.
func TestAPIClientRuleBites(t *testing.T) {
	for name, c := range map[string]struct {
		src  string
		want []string
	}{
		"through an action's field": {`package plugin

import (
	"context"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
)

func lookup(ctx context.Context, ch *action.Change) error {
	_, err := ch.Cluster.Lookup(ctx, "provider-nop")
	return err
}
`, []string{"cmd.go:10: ch.Cluster is the API client (cluster.Cluster)"}},
		"through the use case": {`package plugin

import (
	"context"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
)

func lookup(ctx context.Context, cfg *action.Config) error {
	_, err := cfg.ReadPackage(ctx, "provider-nop")
	return err
}
`, nil},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "cmd.go", c.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := apiClientUses(fset, typeCheck(t, fset, module+"plugin", []*ast.File{f}))
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", name, got, c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%s: %q, want %q", name, got[i], w)
			}
		}
	}
}
