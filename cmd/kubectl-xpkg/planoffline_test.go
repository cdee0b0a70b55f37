package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// recipeCommand is the offline plan command line of the example CI
// workflow (docs/plans-in-pull-requests.md shows it), without "kubectl
// xpkg": the test runs what users copy.
func recipeCommand(t *testing.T) []string {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "docs", "examples", "github-actions", "package-plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+run: kubectl xpkg (plan .*--offline.*)$`).FindAllStringSubmatch(string(b), -1)
	if len(m) != 1 {
		t.Fatalf("the example CI workflow has %d offline plan steps, want 1", len(m))
	}
	return strings.Fields(m[0][1])
}

// writeFiles writes name → content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlanOfflineRecipe runs the CI recipe's command line on a pull
// request's packages/ and the target branch's base/packages/ (both with
// subdirectories, for -R), against an in-process registry and no
// cluster: a provider upgrade that a configuration still pins blocks
// (exit 3), with the removed package listed; moved together with the
// configuration, nothing blocks (exit 0).
func TestPlanOfflineRecipe(t *testing.T) {
	reg := fixture.NewRegistry(t)
	push := func(ref, stream string) { reg.PushStream(t, ref, stream) }
	meta := func(kind, name, dep string) string {
		s := "apiVersion: meta.pkg.crossplane.io/v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n"
		if dep != "" {
			s += "spec:\n  dependsOn:\n  - provider: " + reg.Host + "/org/provider-a\n    version: \"" + dep + "\"\n"
		}
		return s
	}
	push("org/provider-a:v1.0.0", meta("Provider", "provider-a", ""))
	push("org/provider-a:v2.0.0", meta("Provider", "provider-a", ""))
	push("org/config-pin:v1.0.0", meta("Configuration", "config-pin", ">=v1.0.0 <v2.0.0"))
	push("org/config-pin:v2.0.0", meta("Configuration", "config-pin", ">=v2.0.0"))
	pkg := func(kind, name, ref string) string {
		return "apiVersion: pkg.crossplane.io/v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\nspec:\n  package: " + reg.Host + "/org/" + ref + "\n"
	}

	x := clitest.New(t)
	writeFiles(t, filepath.Join(x.Home(), "base", "packages"), map[string]string{
		"providers/a.yaml":      pkg("Provider", "provider-a", "provider-a:v1.0.0"),
		"configurations/c.yaml": pkg("Configuration", "config-pin", "config-pin:v1.0.0"),
		"functions/old.yaml":    pkg("Function", "function-old", "function-old:v1.0.0"),
	})
	writeFiles(t, filepath.Join(x.Home(), "packages"), map[string]string{
		"providers/a.yaml": pkg("Provider", "provider-a", "provider-a:v2.0.0"),
		// The same package, written otherwise, beside another object.
		"configurations/c.yaml": "kind: Configuration\napiVersion: pkg.crossplane.io/v1\nmetadata: {name: config-pin}\nspec: {package: \"" + reg.Host + "/org/config-pin:v1.0.0\"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
	})
	args := recipeCommand(t)
	r := x.Run(args...).Fails(t, 3)
	contains(t, "plan --offline", r.Stdout,
		"Plan -f (offline, against 3 base package manifest(s)): 2 package manifest(s), 1 other object(s) ignored: 1 upgrade, 1 unchanged\n",
		"removed from the manifests (in --base, in no manifest): function/function-old",
		"Plan: upgrade provider/provider-a from "+reg.Host+"/org/provider-a:v1.0.0 to "+reg.Host+"/org/provider-a:v2.0.0",
		"BLOCKING configuration/config-pin depends on "+reg.Host+"/org/provider-a >=v1.0.0 <v2.0.0, which excludes v2.0.0")

	var fp struct {
		Offline   bool
		Base      int
		Removed   []string
		Unchanged []string
		Plans     []struct{ Action, Package string }
	}
	r = x.Run(append(args, "-o", "json")...).Fails(t, 3)
	if err := json.Unmarshal([]byte(r.Stdout), &fp); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if !fp.Offline || fp.Base != 3 || strings.Join(fp.Removed, ",") != "function/function-old" || strings.Join(fp.Unchanged, ",") != "configuration/config-pin" || len(fp.Plans) != 1 {
		t.Errorf("-o json: %+v", fp)
	}

	writeFiles(t, filepath.Join(x.Home(), "packages"), map[string]string{
		"providers/a.yaml":      pkg("Provider", "provider-a", "provider-a:v2.0.0"),
		"configurations/c.yaml": pkg("Configuration", "config-pin", "config-pin:v2.0.0"),
	})
	r = x.Run(args...).Succeeds(t)
	contains(t, "plan --offline, both moved", r.Stdout, "2 upgrade, 0 unchanged", "Plan: upgrade configuration/config-pin")
}
