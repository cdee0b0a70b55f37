package e2e

import (
	"context"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
)

var (
	widgets = schema.GroupVersionResource{Group: "stored.example.org", Version: "v1beta1", Resource: "widgets"}
	mrds    = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourcedefinitions"}
)

// planDoc is the plan as -o json prints it.
type planDoc struct {
	Action   string `json:"action"`
	Findings []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
		Count    *int64 `json:"count"`
		Object   string `json:"object"`
	} `json:"findings"`
}

func parsePlan(t *testing.T, out string) planDoc {
	t.Helper()
	var p planDoc
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("plan is not JSON: %v\n%s", err, out)
	}
	return p
}

// finding is the plan's first finding of rule, or fails the test.
func (p planDoc) finding(t *testing.T, rule, severity string) (message, object string, count int64) {
	t.Helper()
	for _, f := range p.Findings {
		if f.Rule == rule && f.Severity == severity {
			if f.Count != nil {
				count = *f.Count
			}
			return f.Message, f.Object, count
		}
	}
	t.Fatalf("plan has no %s finding %s: %+v", severity, rule, p.Findings)
	return "", "", 0
}

// TestChangingPackagesSafely drives the plan, --atomic, rollback and the
// safe uninstall against the real package manager, with provider-stored
// (v1.0.0: Widget at v1alpha1; v1.1.0: v1alpha1 and v1beta1 as storage;
// v2.0.0: v1beta1 only) and configuration-stored, which needs it at
// >=v1.0.0 <v2.0.0.
func TestChangingPackagesSafely(t *testing.T) {
	env, reg, c, x := start(t)
	dyn := c.dyn
	repo := reg.Host + "/e2e/crossplane-contrib/"
	const (
		prov = "e2e-crossplane-contrib-provider-stored"
		cfg  = "e2e-crossplane-contrib-configuration-stored"
		nop  = "rollback-nop"
	)
	ctx := context.Background()
	t.Cleanup(func() {
		_ = dyn.Resource(widgets).Delete(ctx, "widget-a", metav1.DeleteOptions{})
		clitest.New(t).WithEnv(env).Run("uninstall", "configuration/"+cfg, "provider/"+prov, "provider/"+nop, "--force", "--yes", "--wait=2m")
	})

	x.Run("install", repo+"provider-stored:v1.0.0", "--wait=5m").Succeeds(t)
	x.Run("install", repo+"configuration-stored:v1.0.0", "--wait=5m").Succeeds(t)

	// v1.1.0 keeps v1alpha1 and adds v1beta1: a clean plan, then the upgrade.
	r := x.Run("upgrade", prov, "v1.1.0", "--dry-run", "-o", "json").Succeeds(t)
	for _, f := range parsePlan(t, r.Stdout).Findings {
		if f.Severity == "blocking" || f.Severity == "warning" {
			t.Errorf("the v1.1.0 plan is not clean: %+v", f)
		}
	}
	x.Run("upgrade", prov, "v1.1.0", "--wait=5m").Succeeds(t)
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stored.example.org/v1beta1", "kind": "Widget", "metadata": map[string]any{"name": "widget-a"},
		"spec": map[string]any{"forProvider": map[string]any{"size": int64(1)}},
	}}
	if _, err := dyn.Resource(widgets).Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// v2.0.0 drops v1alpha1, which the CRD stores, and the configuration
	// allows only <v2.0.0.
	r = x.Run("upgrade", prov, "v2.0.0", "--dry-run", "-o", "json").Fails(t, 3)
	plan := parsePlan(t, r.Stdout)
	plan.finding(t, "stored-version-dropped", "blocking")

	// The same change as a pull request's manifests plan it.
	cfgRef, _, _ := unstructured.NestedString(c.get("configurations", cfg).Object, "spec", "package")
	dir := writeManifests(t, map[string]string{
		"packages.yaml": packageManifest("Provider", prov, repo+"provider-stored:v2.0.0") + "---\n" + packageManifest("Configuration", cfg, cfgRef),
	})
	r = x.Run("plan", "-f", dir).Fails(t, 3)
	contains(t, "plan -f", r.Stdout, "1 upgrade, 1 unchanged", "Plan: upgrade provider/"+prov,
		"BLOCKING CRD widgets.stored.example.org stores objects at v1alpha1", "[stored-version-dropped]", "[dependent-constraint]")
	_, who, _ := plan.finding(t, "dependent-constraint", "blocking")
	if who != "configuration/"+cfg {
		t.Errorf("dependent-constraint names %q", who)
	}
	if _, _, n := plan.finding(t, "live-objects", "warning"); n != 1 {
		t.Errorf("live-objects counts %d widgets", n)
	}
	text := x.Run("upgrade", prov, "v2.0.0", "--dry-run").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg upgrade %s v2.0.0 --dry-run\n%s%s", prov, text.Stdout, text.Stderr)

	// Rolling back to v1.0.0 would strand v1beta1, which is stored now.
	r = x.Run("rollback", prov, "--dry-run", "-o", "json").Fails(t, 3)
	msg, _, _ := parsePlan(t, r.Stdout).finding(t, "stored-version-dropped", "blocking")
	contains(t, "rollback plan", msg, "v1beta1")

	// Forced through, Crossplane reports the new revision Healthy while
	// its MRD cannot be applied: --atomic sees it and goes back.
	r = x.Run("upgrade", prov, "v2.0.0", "--force", "--atomic", "--wait=3m").Fails(t, 1)
	t.Logf("transcript:\n$ kubectl xpkg upgrade %s v2.0.0 --force --atomic --wait=3m\n%s%s", prov, r.Stdout, r.Stderr)
	contains(t, "atomic", r.Stderr, "ManagedResourceDefinition widgets.stored.example.org", "missing from spec.versions", "rolled back to "+repo+"provider-stored:v1.1.0")
	if src, _, _ := unstructured.NestedString(c.get("providers", prov).Object, "spec", "package"); src != repo+"provider-stored:v1.1.0" {
		t.Errorf("after --atomic the provider points at %s", src)
	}
	c.healthy("providers", prov)
	mrd, err := dyn.Resource(mrds).Get(ctx, "widgets.stored.example.org", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if est := crossplane.Condition(mrd, "Established"); est["status"] != "True" {
		t.Errorf("after the rollback the MRD is %v", est)
	}

	// A downgrade through upgrade is refused.
	r = x.Run("upgrade", prov, "v1.0.0").Fails(t, 3)
	contains(t, "downgrade", r.Stderr, "[downgrade]", "use kubectl xpkg rollback")

	// Uninstalling the provider would delete the widget and break the
	// configuration: refused, and nothing is deleted.
	r = x.Run("uninstall", "provider/"+prov, "--yes").Fails(t, 3)
	contains(t, "uninstall", r.Stderr, "1 object of kind Widget", "is a dependency of configuration/"+cfg, "[live-objects]", "[dependents]")
	c.healthy("providers", prov)
	if _, err := dyn.Resource(widgets).Get(ctx, "widget-a", metav1.GetOptions{}); err != nil {
		t.Errorf("the refused uninstall lost the widget: %v", err)
	}

	// A compatible upgrade rolled back returns to the old version, healthy.
	x.Run("install", reg.Host+"/e2e/crossplane-contrib/provider-nop:v0.2.1", nop, "--wait=5m").Succeeds(t)
	x.Run("upgrade", nop, "v0.4.0", "--wait=5m").Succeeds(t)
	r = x.Run("rollback", nop, "--wait=5m").Succeeds(t)
	contains(t, "rollback", r.Stdout, "provider/"+nop+" rolled back from v0.4.0 to v0.2.1")
	c.healthy("providers", nop)
	if id, _, _ := unstructured.NestedString(c.get("providers", nop).Object, "status", "currentIdentifier"); id != repo+"provider-nop:v0.2.1" {
		t.Errorf("after rollback the package manager runs %s", id)
	}
}
