package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// offlineRegistry holds the packages the offline plans read:
// provider-a v1.0.0 serves v1alpha1 and v1beta1 of its CRD, v2.0.0 only
// v1beta1 (its storage version); config-pin v1.0.0 pins provider-a below
// v2.0.0, v2.0.0 needs it from v2.0.0; config-new needs a provider no
// version of which matches; function-f has no dependency.
func offlineRegistry(t *testing.T) *fixture.Registry {
	t.Helper()
	reg := fixture.NewRegistry(t)
	push := func(ref, stream string) { reg.PushStream(t, ref, stream) }
	crd := func(versions ...string) string {
		s := "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.a.example.org\nspec:\n  group: a.example.org\n  scope: Cluster\n  names:\n    kind: Thing\n    plural: things\n  versions:\n"
		for _, v := range versions {
			s += fmt.Sprintf("  - name: %s\n    served: true\n    storage: %t\n    schema:\n      openAPIV3Schema:\n        type: object\n", v, v == "v1beta1")
		}
		return s
	}
	meta := func(kind, name, deps string) string {
		return "apiVersion: meta.pkg.crossplane.io/v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n" + deps
	}
	dep := func(repo, version string) string {
		return "spec:\n  dependsOn:\n  - provider: " + reg.Host + "/" + repo + "\n    version: \"" + version + "\"\n"
	}
	push("org/provider-a:v1.0.0", meta("Provider", "provider-a", "")+crd("v1alpha1", "v1beta1"))
	push("org/provider-a:v2.0.0", meta("Provider", "provider-a", "")+crd("v1beta1"))
	push("org/config-pin:v1.0.0", meta("Configuration", "config-pin", dep("org/provider-a", ">=v1.0.0 <v2.0.0")))
	push("org/config-pin:v2.0.0", meta("Configuration", "config-pin", dep("org/provider-a", ">=v2.0.0")))
	push("org/config-new:v1.0.0", meta("Configuration", "config-new", dep("org/provider-missing", ">=v1.0.0")))
	push("org/provider-missing:v0.1.0", meta("Provider", "provider-missing", ""))
	push("org/function-f:v1.0.0", meta("Function", "function-f", ""))
	reg.Reset()
	return reg
}

// manifestOf is a package manifest of kind and name at reg's ref.
func manifestOf(reg *fixture.Registry, kind, name, ref string, spec ...any) Manifest {
	u := obj("pkg.crossplane.io/v1", kind, name, map[string]any{"spec": map[string]any{"package": reg.Host + "/" + ref}})
	return Manifest{Where: strings.ToLower(kind) + "-" + name + ".yaml:1", Object: withSpec(u, spec...)}
}

func planOffline(t *testing.T, ms, base []Manifest) *FilesPlan {
	t.Helper()
	pf := NewPlanFiles(&Config{Offline: true, Limits: xpkg.DefaultLimits}, false)
	pf.Base = base
	fp, err := pf.Plan(context.Background(), ms, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

func planOf(t *testing.T, fp *FilesPlan, pkg string) *Plan {
	t.Helper()
	for _, p := range fp.Plans {
		if p.Package == pkg {
			return p
		}
	}
	t.Fatalf("no plan for %s in %+v", pkg, fp)
	return nil
}

// TestPlanOfflineAgainstBase: provider-a's upgrade is blocked by the
// constraint of config-pin, which the new manifests keep (a manifest that
// differs only as YAML does: unchanged); the version it drops is said
// once; config-new's dependency has no matching version; function-f's
// only edit is listed; provider-gone is removed. Each reference is read
// once, the removed package's never.
func TestPlanOfflineAgainstBase(t *testing.T) {
	reg := offlineRegistry(t)
	base := []Manifest{
		manifestOf(reg, "Provider", "provider-a", "org/provider-a:v1.0.0"),
		manifestOf(reg, "Configuration", "config-pin", "org/config-pin:v1.0.0", "revisionHistoryLimit", int64(1)),
		manifestOf(reg, "Function", "function-f", "org/function-f:v1.0.0"),
		manifestOf(reg, "Provider", "provider-gone", "org/provider-gone:v1.0.0"),
	}
	ms := []Manifest{
		manifestOf(reg, "Provider", "provider-a", "org/provider-a:v2.0.0"),
		manifestOf(reg, "Configuration", "config-pin", "org/config-pin:v1.0.0", "revisionHistoryLimit", float64(1)),
		manifestOf(reg, "Function", "function-f", "org/function-f:v1.0.0", "revisionActivationPolicy", "Manual"),
		manifestOf(reg, "Configuration", "config-new", "org/config-new:v1.0.0"),
	}
	fp := planOffline(t, ms, base)
	if !fp.Offline || fp.Base != 4 || len(fp.Plans) != 3 || strings.Join(fp.Unchanged, ",") != "configuration/config-pin" ||
		strings.Join(fp.Removed, ",") != "provider/provider-gone" || !fp.Blocking() {
		t.Fatalf("plan %+v", fp)
	}
	up := planOf(t, fp, "provider/provider-a")
	if up.Action != ActionUpgrade || up.From != reg.Host+"/org/provider-a:v1.0.0" {
		t.Errorf("upgrade %+v", up)
	}
	if f := planFindings(up, findings.RuleDependentConstraint); len(f) != 1 || f[0].Severity != findings.Blocking || !strings.Contains(f[0].Message, "configuration/config-pin depends on") {
		t.Errorf("dependent-constraint: %+v", f)
	}
	if f := planFindings(up, findings.RuleOffline); len(f) != 1 || f[0].Severity != findings.Warning || !strings.Contains(f[0].Message, "things.a.example.org") {
		t.Errorf("offline: %+v", f)
	}
	if f := planFindings(up, findings.RuleStoredVersionDropped); len(f) != 0 {
		t.Errorf("the storage version stays, yet: %+v", f)
	}
	in := planOf(t, fp, "configuration/config-new")
	if in.Action != ActionInstall {
		t.Errorf("install %+v", in)
	}
	// The set's prediction: the resolver stops at config-new's dependency.
	if f := setFindings(fp, findings.RuleLockStall); len(f) != 1 || f[0].Severity != findings.Blocking || !strings.Contains(f[0].Message, "no valid version for") ||
		fp.Crossplane.Read != diagnose.ConfigUnknown || fp.Crossplane.Why != "planned offline" {
		t.Errorf("lock-stall %+v (Crossplane %+v)", f, fp.Crossplane)
	}
	ed := planOf(t, fp, "function/function-f")
	if f := planFindings(ed, findings.RuleSpecChange); ed.Action != ActionUpdate || len(f) != 1 || f[0].Severity != findings.Info || !strings.Contains(f[0].Message, `spec.revisionActivationPolicy: null → "Manual"`) {
		t.Errorf("update %+v", ed)
	}
	for _, ref := range []string{"provider-a/manifests/v1.0.0", "provider-a/manifests/v2.0.0", "config-pin/manifests/v1.0.0", "config-new/manifests/v1.0.0", "provider-gone/manifests/v1.0.0"} {
		if n, want := reg.Count("GET", "/org/"+ref), map[bool]int{true: 0, false: 1}[strings.HasPrefix(ref, "provider-gone")]; n != want {
			t.Errorf("%s read %d times, want %d: %q", ref, n, want, reg.Requests())
		}
	}
	if !fp.Offline || fp.Base != 4 || fp.Manifests != 4 || fp.Ignored != 0 || len(fp.Plans) != 3 || len(fp.Unchanged) != 1 || !slices.Equal(fp.Removed, []string{"provider/provider-gone"}) {
		t.Errorf("offline %v against %d, %d manifests, %d ignored, %d plans, unchanged %v, removed %v", fp.Offline, fp.Base, fp.Manifests, fp.Ignored, len(fp.Plans), fp.Unchanged, fp.Removed)
	}
}

// TestPlanOfflineUpgradedTogether: the configuration that pinned the
// provider moves too, to a version that needs the new one: nothing
// blocks, and each plan is checked against the other's new version.
func TestPlanOfflineUpgradedTogether(t *testing.T) {
	reg := offlineRegistry(t)
	base := []Manifest{
		manifestOf(reg, "Provider", "provider-a", "org/provider-a:v1.0.0"),
		manifestOf(reg, "Configuration", "config-pin", "org/config-pin:v1.0.0"),
	}
	ms := []Manifest{
		manifestOf(reg, "Configuration", "config-pin", "org/config-pin:v2.0.0"),
		manifestOf(reg, "Provider", "provider-a", "org/provider-a:v2.0.0"),
	}
	fp := planOffline(t, ms, base)
	if fp.Blocking() || len(fp.Plans) != 2 {
		t.Fatalf("plan %+v", fp)
	}
	for _, p := range fp.Plans {
		if len(planFindings(p, findings.RuleDependentConstraint))+len(planFindings(p, findings.RuleDependencyConstraint)) != 0 {
			t.Errorf("%s: %+v", p.Package, p.Findings)
		}
	}
}

// TestPlanOfflineWithoutBase: every package is new, and the set's
// constraints still hold: a configuration that pins the provider below
// the version the manifests install blocks it; a rollback is named so.
func TestPlanOfflineWithoutBase(t *testing.T) {
	reg := offlineRegistry(t)
	ms := []Manifest{
		manifestOf(reg, "Provider", "provider-a", "org/provider-a:v2.0.0"),
		manifestOf(reg, "Configuration", "config-pin", "org/config-pin:v1.0.0"),
	}
	fp := planOffline(t, ms, nil)
	p := planOf(t, fp, "provider/provider-a")
	if f := planFindings(p, findings.RuleDependentConstraint); p.Action != ActionInstall || len(f) != 1 || f[0].Severity != findings.Blocking {
		t.Errorf("install %+v", p)
	}
	if f := setFindings(fp, findings.RuleDependencyConstraint); len(f) != 1 || f[0].Object != "configuration/config-pin" || !strings.Contains(f[0].Message, "heals it at v1.0.0") {
		t.Errorf("config-pin needs provider-a below v2.0.0, which the manifests install: %+v", fp.Findings)
	}

	back := planOffline(t, []Manifest{manifestOf(reg, "Provider", "provider-a", "org/provider-a:v1.0.0")},
		[]Manifest{manifestOf(reg, "Provider", "provider-a", "org/provider-a:v2.0.0")})
	rb := planOf(t, back, "provider/provider-a")
	if f := planFindings(rb, findings.RuleDowngrade); rb.Action != ActionRollback || len(f) != 1 || f[0].Severity != findings.Info || rb.Blocking() {
		t.Errorf("rollback %+v", rb)
	}
}

// TestOfflinePackagesNeedAPackage: a manifest without spec.package is an
// error naming it.
func TestOfflinePackagesNeedAPackage(t *testing.T) {
	u := obj("pkg.crossplane.io/v1", "Provider", "p", map[string]any{"spec": map[string]any{}})
	_, err := offlinePackages([]Manifest{{Where: "p.yaml:3", Object: &unstructured.Unstructured{Object: u.Object}}})
	if err == nil || err.Error() != "p.yaml:3: provider/p has no spec.package: name its package reference" {
		t.Errorf("err %v", err)
	}
}

// setFindings are the findings of a set's prediction under rule.
func setFindings(fp *FilesPlan, rule string) []findings.Finding {
	return planFindings(&Plan{Findings: fp.Findings}, rule)
}
