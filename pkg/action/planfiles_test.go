package action

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/flags"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// TestSpecEdits: a field the manifest sets to another value is an edit
// (numbers compared as JSON, so YAML's and the API server's agree); one
// it leaves out is the API server's to default, and no edit.
func TestSpecEdits(t *testing.T) {
	have := &installed.Package{Object: withSpec(pkgObj("Provider", "p", nopRepo+":v0.2.0", "p-1"),
		"revisionHistoryLimit", int64(1), "revisionActivationPolicy", "Automatic")}
	m := Manifest{Where: "p.yaml:1", Object: withSpec(pkgObj("Provider", "p", nopRepo+":v0.4.0", ""),
		"revisionHistoryLimit", float64(1), "revisionActivationPolicy", "Manual")}
	edits := specEdits(have, m)
	if len(edits) != 1 || edits[0] != `spec.revisionActivationPolicy: "Automatic" → "Manual"` {
		t.Errorf("edits %q", edits)
	}
}

// TestOverlaid: the set's entries stand for those of the same source
// (keeping the revision's name) and new ones are added.
func TestOverlaid(t *testing.T) {
	lock := []installed.LockPackage{{Name: "nop-aaa", Source: nopRepo, Version: "v0.2.0"}, {Name: "cfg-bbb", Source: "r.example.org/org/cfg", Version: "v1.0.0",
		Dependencies: []installed.LockDependency{{Package: nopRepo, Constraints: "<v0.3.0"}}}}
	set := []installed.LockPackage{{Name: "cfg", Source: "r.example.org/org/cfg", Version: "v2.0.0",
		Dependencies: []installed.LockDependency{{Package: nopRepo, Constraints: ">=v0.4.0"}}}, {Name: "new", Source: fnRepo, Version: "v0.1.0"}}
	got := overlaid(lock, set)
	if len(got) != 3 || got[1].Name != "cfg-bbb" || got[1].Version != "v2.0.0" || got[1].Dependencies[0].Constraints != ">=v0.4.0" ||
		got[2].Source != fnRepo || lock[1].Version != "v1.0.0" {
		t.Errorf("overlaid %+v (the Lock read: %+v)", got, lock)
	}
	if fs := diagnose.DependentFindings(got, nil, nopRepo, "v0.4.0"); len(fs) != 0 {
		t.Errorf("the dependent's new constraint admits v0.4.0, yet: %+v", fs)
	}
	if fs := diagnose.DependentFindings(lock, nil, nopRepo, "v0.4.0"); len(fs) != 1 || !strings.Contains(fs[0].Message, "<v0.3.0") {
		t.Errorf("the old constraint excludes v0.4.0: %+v", fs)
	}
}

// TestPlanFilesRequestsDoNotGrowWithManifests: n packages, each edited by
// its manifest, are planned from one watch of each kind: the requests
// for 12 manifests are those for 3.
func TestPlanFilesRequestsDoNotGrowWithManifests(t *testing.T) {
	plan := func(n int) map[string]int {
		var objs []*unstructured.Unstructured
		var ms []Manifest
		for i := range n {
			name := fmt.Sprintf("p%02d", i)
			objs = append(objs, pkgObj("Provider", name, nopRepo+":v0.2.0", name+"-1"), pkgRev("Provider", name, name+"-1", nopRepo+":v0.2.0", 1, "Active"))
			ms = append(ms, Manifest{Where: name + ".yaml:1", Object: withSpec(pkgObj("Provider", name, nopRepo+":v0.2.0", ""), "revisionHistoryLimit", int64(3))})
		}
		c, dyn := fakeClusterDyn(t, append(objs, lock())...)
		fp, err := NewPlanFiles(&Config{cluster: c, XPNamespace: "crossplane-system"}, false).Plan(context.Background(), ms, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(fp.Plans) != n || fp.Plans[0].Action != ActionUpdate || fp.Plans[0].Findings[0].Rule != findings.RuleSpecChange {
			t.Fatalf("plans %+v", fp.Plans)
		}
		return requests(dyn.Actions())
	}
	few, many := plan(3), plan(12)
	if !maps.Equal(few, many) {
		t.Errorf("requests grow with the manifests: 3 → %v, 12 → %v", few, many)
	}
}

// TestClosure: a new package's dependencies, read from a registry, are
// installed as the resolver installs them (the newest version each
// constraint admits), then their own: one with no matching version
// stalls the Lock (blocking, naming the newest version there is); a
// closure that resolves finds nothing and names each version.
func TestClosure(t *testing.T) {
	reg := fixture.NewRegistry(t)
	push := func(repo, tag, deps string) {
		t.Helper()
		meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: " + repo[strings.LastIndex(repo, "/")+1:] + "\n"
		if deps != "" {
			meta += "spec:\n  dependsOn:\n" + deps
		}
		reg.PushStream(t, repo+":"+tag, meta)
	}
	dep := func(repo, version string) string {
		return fmt.Sprintf("  - provider: %s/%s\n    version: %q\n", reg.Host, repo, version)
	}
	push("org/b", "v1.0.0", "")
	push("org/d", "v1.5.0", "")
	push("org/a", "v1.0.0", dep("org/b", ">=v2.0.0")+dep("org/d", "<v1.0.0"))
	push("org/a", "v0.9.0", dep("org/b", ">=v1.0.0"))
	lock := []installed.LockPackage{{Name: "d-1", Type: "Provider", Source: reg.Host + "/org/d", Version: "v1.5.0"}}
	cfgOf := func(constraint string) installed.LockPackage {
		return installed.LockPackage{Name: "cfg", Type: "Configuration", Source: reg.Host + "/org/cfg", Version: "v1",
			Dependencies: []installed.LockDependency{{Package: reg.Host + "/org/a", Constraints: constraint, Type: "Provider"}}}
	}
	cl := resolve.NewClosure(context.Background(), resolve.Direct(source.Options{}), nil, xpkg.DefaultLimits)
	cp := diagnose.Crossplane{Config: flags.Defaults(), Read: diagnose.ConfigRead}
	p := diagnose.Predict(cl, cp, diagnose.LockState{Lock: lock}, diagnose.LockState{Lock: append(slices.Clone(lock), cfgOf(">=v1.0.0"))})
	fs := p.Findings("cfg:v1")
	if got := p.Resolution.Changes; len(got) != 1 || got[0].To != "v1.0.0" || got[0].Package != "provider/org-a" {
		t.Errorf("changes %+v", got)
	}
	if len(fs) != 1 || fs[0].Rule != findings.RuleLockStall || fs[0].Severity != findings.Blocking || !strings.Contains(fs[0].Message, "stops at "+reg.Host+"/org/b (cannot resolve package dependencies: no valid version for "+reg.Host+"/org/b with constraints >=v2.0.0)") ||
		!strings.Contains(fs[0].Message, "its newest version is v1.0.0") || !p.Resolution.IsUnhealthy("provider/org-a") {
		t.Errorf("findings %+v", fs)
	}
	p = diagnose.Predict(cl, cp, diagnose.LockState{Lock: lock}, diagnose.LockState{Lock: append(slices.Clone(lock), cfgOf("<v1.0.0"))})
	if fs := p.Findings("cfg:v2"); len(fs) != 0 || !p.Resolution.Resolves || len(p.Resolution.Changes) != 2 || p.Resolution.Changes[1].To != "v1.0.0" {
		t.Errorf("a closure that resolves: %+v, findings %+v", p.Resolution, fs)
	}
}

// TestReadValidated: a new package's target is read once, whole, with
// validate's rules: its meta object, and what Crossplane would refuse
// (an annotation YAML reads as a boolean) as blocking findings.
func TestReadValidated(t *testing.T) {
	reg := fixture.NewRegistry(t)
	reg.PushStream(t, "org/provider-bad:v1.0.0", "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-bad\n  annotations:\n    supported: yes\n")
	ref := reg.Host + "/org/provider-bad:v1.0.0"
	c, err := readValidated(context.Background(), resolve.Direct(source.Options{}), ref, nil, xpkg.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	fs := violationFindings(ref, c.Violations)
	if c.Meta == nil || c.Meta.Name() != "provider-bad" || len(fs) != 1 || fs[0].Severity != findings.Blocking || fs[0].Rule != findings.RuleInvalidPackage ||
		!strings.Contains(fs[0].Message, "supported") {
		t.Errorf("meta %v, findings %+v", c.Meta, fs)
	}
}
