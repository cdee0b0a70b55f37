package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// writeManifests writes each file of files (name → YAML) into a new
// directory and returns it.
func writeManifests(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func packageManifest(kind, name, ref string) string {
	return fmt.Sprintf("apiVersion: pkg.crossplane.io/v1\nkind: %s\nmetadata:\n  name: %s\nspec:\n  package: %s\n", kind, name, ref)
}

// TestPlanFiles plans directories of manifests, as a pull request would
// change them, against the real package manager: a provider upgraded
// while an installed configuration pins it below (blocking), the two
// upgraded together (allowed: the configuration's new constraint is
// checked against the provider's new version), and a new configuration
// whose dependency no registry has (blocking: the resolver would stop
// there, and the Lock stall).
func TestPlanFiles(t *testing.T) {
	env, reg, _, x := start(t)
	const nop, cfg = "e2e-crossplane-contrib-provider-nop", "plan-pin"
	nopRepo := reg.Host + "/e2e/crossplane-contrib/provider-nop"
	cfgRepo := reg.Host + "/e2e/plan/configuration-pin"
	pushNeeds(t, reg, cfgRepo, "v1.0.0", nopRepo, "<v0.3.0")
	pushNeeds(t, reg, cfgRepo, "v2.0.0", nopRepo, ">=v0.4.0")
	nowhere := reg.Host + "/e2e/plan/configuration-nowhere"
	pushNeeds(t, reg, nowhere, "v1.0.0", reg.Host+"/e2e/plan/provider-nowhere", ">=v1.0.0")
	t.Cleanup(func() {
		clitest.New(t).WithEnv(env).Run("uninstall", "configuration/"+cfg, "provider/"+nop, "--force", "--yes", "--wait=2m")
	})
	x.Run("install", nopRepo+":v0.2.1", "--wait=5m").Succeeds(t)
	x.Run("install", "configuration", cfgRepo+":v1.0.0", cfg, "--wait=5m").Succeeds(t)
	configMap := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unrelated\n"

	pinned := writeManifests(t, map[string]string{
		"provider.yaml": packageManifest("Provider", nop, nopRepo+":v0.4.0") + "---\n" + configMap,
		"config.yaml":   packageManifest("Configuration", cfg, cfgRepo+":v1.0.0"),
	})
	r := x.Run("plan", "-f", pinned).Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg plan -f pinned/\n%s%s", r.Stdout, r.Stderr)
	contains(t, "plan -f pinned", r.Stdout, "Plan -f: 2 package manifest(s), 1 other object(s) ignored: 1 upgrade, 1 unchanged",
		"Plan: upgrade provider/"+nop+" from "+nopRepo+":v0.2.1 to "+nopRepo+":v0.4.0",
		"BLOCKING configuration/"+cfg+" depends on "+nopRepo+" <v0.3.0, which excludes v0.4.0", "[dependent-constraint]")

	together := writeManifests(t, map[string]string{
		"provider.yaml": packageManifest("Provider", nop, nopRepo+":v0.4.0"),
		"config.yaml":   packageManifest("Configuration", cfg, cfgRepo+":v2.0.0"),
	})
	r = x.Run("plan", "-f", together, "-o", "json").Succeeds(t)
	var doc struct {
		Manifests int
		Plans     []struct {
			Action, Package string
			Findings        []struct{ Rule, Severity string }
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("plan -o json: %v\n%s", err, r.Stdout)
	}
	if doc.Manifests != 2 || len(doc.Plans) != 2 {
		t.Fatalf("plan of the two together: %+v", doc)
	}
	for _, p := range doc.Plans {
		for _, f := range p.Findings {
			if f.Severity == "blocking" {
				t.Errorf("%s of %s blocked by %s", p.Action, p.Package, f.Rule)
			}
		}
	}

	added := writeManifests(t, map[string]string{
		"provider.yaml": packageManifest("Provider", nop, nopRepo+":v0.2.1"),
		"config.yaml":   packageManifest("Configuration", cfg, cfgRepo+":v1.0.0"),
		"new.yaml":      packageManifest("Configuration", "plan-nowhere", nowhere+":v1.0.0"),
	})
	r = x.Run("plan", "-f", added).Fails(t, 3)
	contains(t, "plan -f added", r.Stdout, "1 install, 2 unchanged", "Plan: install configuration/plan-nowhere",
		"BLOCKING", reg.Host+"/e2e/plan/provider-nowhere", "[lock-stall]")
}

// TestPlanFilesBadInput: one clear line each, exit 1, nothing planned.
func TestPlanFilesBadInput(t *testing.T) {
	_, reg, _, x := start(t)
	ref := reg.Host + "/e2e/crossplane-contrib/provider-nop:v0.4.0"
	twice := writeManifests(t, map[string]string{
		"a.yaml": packageManifest("Provider", "twice", ref),
		"b.yaml": "# the same package again\n" + packageManifest("Provider", "twice", ref),
	})
	r := x.Run("plan", "-f", twice).Fails(t, 1)
	contains(t, "two manifests for one package", r.Stderr, "twice", "a.yaml:1", "b.yaml:2")

	broken := writeManifests(t, map[string]string{"bad.yaml": packageManifest("Provider", "ok", ref) + "---\nkind: [unclosed\n"})
	r = x.Run("plan", "-f", broken).Fails(t, 1)
	contains(t, "a YAML error", r.Stderr, "bad.yaml:8: invalid YAML")
	if strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("want one line, got:\n%s", r.Stderr)
	}

	ibm := writeManifests(t, map[string]string{"ibm.yaml": strings.Replace(packageManifest("Provider", "ibm", ref), "pkg.crossplane.io/v1", "pkg.ibm.crossplane.io/v1", 1)})
	r = x.Run("plan", "-f", ibm).Fails(t, 1)
	contains(t, "a package API the cluster does not serve", r.Stderr, "ibm.yaml:1: provider/ibm is a pkg.ibm.crossplane.io package, but this cluster serves its packages in pkg.crossplane.io")
}
