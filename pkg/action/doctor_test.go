package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// The messages of Crossplane's package manager that doctor reads.
const (
	errResolveDeps = "cannot resolve package dependencies"
	errInitDAG     = "cannot initialize dependency graph from the packages in the lock"
)

const (
	fnRepo  = "r.example.org/org/function-auto"
	nopRepo = "r.example.org/org/provider-nop"
)

// pkgRev is a revision of a package of kind, as the package manager makes
// it: labelled with its package, with a desired state (Manual activation
// leaves it "" until someone activates it) and conditions.
func pkgRev(kind, pkgName, name, image string, n int64, state string, conds ...map[string]any) *unstructured.Unstructured {
	var cs []any
	for _, c := range conds {
		cs = append(cs, c)
	}
	u := obj("pkg.crossplane.io/v1", kind+"Revision", name, map[string]any{
		"spec":   map[string]any{"image": image, "revision": n, "desiredState": state},
		"status": map[string]any{"conditions": cs},
	})
	u.SetLabels(map[string]string{"pkg.crossplane.io/package": pkgName})
	return u
}

// withSpec sets spec fields of a package object.
func withSpec(u *unstructured.Unstructured, kv ...any) *unstructured.Unstructured {
	for i := 0; i < len(kv); i += 2 {
		_ = unstructured.SetNestedField(u.Object, kv[i+1], "spec", kv[i].(string))
	}
	return u
}

// entry is a Lock entry of a revision; deps are package, constraints pairs
// of Provider dependencies.
func entry(rev, kind, src, version string, deps ...string) map[string]any {
	m := map[string]any{"name": rev, "apiVersion": "pkg.crossplane.io/v1", "kind": kind, "source": src, "version": version}
	var ds []any
	for i := 0; i < len(deps); i += 2 {
		ds = append(ds, map[string]any{"package": deps[i], "constraints": deps[i+1], "type": "Provider"})
	}
	if len(ds) > 0 {
		m["dependencies"] = ds
	}
	return m
}

// unresolvedLock is a Lock whose Resolved condition is False with msg.
func unresolvedLock(msg string, entries ...map[string]any) *unstructured.Unstructured {
	u := lock(entries...)
	u.Object["status"] = map[string]any{"conditions": []any{map[string]any{
		"type": "Resolved", "status": "False", "reason": "DependencyResolutionFailed", "message": msg,
	}}}
	return u
}

func doctor(t *testing.T, objs ...*unstructured.Unstructured) *Report {
	t.Helper()
	c := fakeCluster(t, objs...)
	return doctorOn(t, c)
}

func doctorOn(t *testing.T, c *cluster.Cluster) *Report {
	t.Helper()
	rep, err := NewDoctor(&Config{cluster: c}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func ruleFindings(r *Report, rule string) []findings.Finding {
	return planFindings(&Plan{Findings: r.Findings}, rule)
}

// want checks that exactly n findings of rule were made, the first of
// them blocking or not as sev says and its message saying each of parts.
func want(t *testing.T, r *Report, rule string, n int, sev findings.Severity, parts ...string) []findings.Finding {
	t.Helper()
	fs := ruleFindings(r, rule)
	if len(fs) != n {
		t.Fatalf("%d %s findings, want %d: %+v", len(fs), rule, n, r.Findings)
	}
	if n == 0 {
		return fs
	}
	if fs[0].Severity != sev {
		t.Errorf("%s is %s, want %s", rule, fs[0].Severity, sev)
	}
	for _, p := range parts {
		if !strings.Contains(fs[0].Message, p) {
			t.Errorf("%s does not say %q:\n%s", rule, p, fs[0].Message)
		}
	}
	return fs
}

// healthyNop is a provider installed under the resolver's name, active
// and in the Lock: nothing to find.
func healthyNop() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		pkgObj("Provider", "org-provider-nop", nopRepo+":v0.2.0", "org-provider-nop-aaa"),
		pkgRev("Provider", "org-provider-nop", "org-provider-nop-aaa", nopRepo+":v0.2.0", 1, "Active"),
	}
}

// TestDoctorDuplicateRevisionsOfOnePackage is the route of issue 28 on
// Crossplane v2.4: a Function under Manual activation whose spec was
// edited has two revisions, neither active nor inactive, both in the
// Lock; an unrelated healthy provider goes down with it.
func TestDoctorDuplicateRevisionsOfOnePackage(t *testing.T) {
	const dag = "cannot build DAG: node " + fnRepo + " already exists"
	objs := append(healthyNop(),
		withSpec(pkgObj("Function", "fn", fnRepo+":v0.1.0", "fn-bbb"), "revisionActivationPolicy", "Manual", "revisionHistoryLimit", int64(3)),
		pkgRev("Function", "fn", "fn-aaa", fnRepo+":v0.1.0", 1, ""),
		pkgRev("Function", "fn", "fn-bbb", fnRepo+":v0.1.0", 2, ""),
		unresolvedLock(dag,
			entry("fn-aaa", "Function", fnRepo, "v0.1.0"),
			entry("fn-bbb", "Function", fnRepo, "v0.1.0"),
			entry("org-provider-nop-aaa", "Provider", nopRepo, "v0.2.0")),
	)
	r := doctor(t, objs...)
	f := want(t, r, findings.RuleDuplicateLockNode, 1, findings.Blocking,
		"the Lock holds 2 nodes for "+fnRepo+": revision fn-aaa of function/fn (v0.1.0), revision fn-bbb of function/fn (v0.1.0)",
		"node "+fnRepo+" already exists",
		"Crossplane keeps fn-bbb, the current revision of function/fn: delete the other (kubectl delete functionrevision fn-aaa)")
	if f[0].Object != "function/fn" || f[0].Count == nil || *f[0].Count != 2 {
		t.Errorf("object %q, count %v", f[0].Object, f[0].Count)
	}
	want(t, r, findings.RuleDependencyUnresolved, 1, findings.Blocking, "the Lock is not resolved (Resolved=False, DependencyResolutionFailed: "+dag+")",
		"Taking part: "+fnRepo+" runs v0.1.0 as function/fn")
	want(t, r, findings.RuleManualInactive, 1, findings.Warning, "function/fn activates revisions by hand", "none of its 2 revision(s) is active",
		"kubectl xpkg upgrade function/fn --activate activates its current revision fn-bbb")
	for _, f := range r.Findings {
		if strings.Contains(f.Message, "org-provider-nop") {
			t.Errorf("a finding about the healthy provider: %+v", f)
		}
	}
	if !r.Blocking() || r.Healthy() {
		t.Error("the report is not blocking")
	}
}

// TestDoctorDuplicateTwinPackages: a custom-named provider and the twin
// the resolver installed under its own name: both named, and the
// resolver's kept.
func TestDoctorDuplicateTwinPackages(t *testing.T) {
	r := doctor(t,
		pkgObj("Provider", "custom-nop", nopRepo+":v0.2.0", "custom-nop-aaa"),
		pkgRev("Provider", "custom-nop", "custom-nop-aaa", nopRepo+":v0.2.0", 1, "Active"),
		pkgObj("Provider", "org-provider-nop", nopRepo+":v0.4.0", "org-provider-nop-bbb"),
		pkgRev("Provider", "org-provider-nop", "org-provider-nop-bbb", nopRepo+":v0.4.0", 1, "Active"),
		pkgObj("Configuration", "cfg", "r.example.org/org/cfg:v1.0.0", "cfg-ccc"),
		pkgRev("Configuration", "cfg", "cfg-ccc", "r.example.org/org/cfg:v1.0.0", 1, "Active"),
		lock(entry("custom-nop-aaa", "Provider", nopRepo, "v0.2.0"),
			entry("org-provider-nop-bbb", "Provider", nopRepo, "v0.4.0"),
			entry("cfg-ccc", "Configuration", "r.example.org/org/cfg", "v1.0.0", nopRepo, ">=v0.2.0")),
	)
	want(t, r, findings.RuleDuplicateLockNode, 1, findings.Blocking,
		"revision custom-nop-aaa of provider/custom-nop (v0.2.0), revision org-provider-nop-bbb of provider/org-provider-nop (v0.4.0)",
		"Crossplane keeps provider/org-provider-nop: its resolver installs this dependency under that name",
		"delete provider/custom-nop")
	// The twin exists: the name rule leaves it to the duplicate.
	want(t, r, findings.RuleTwinName, 0, findings.Warning)
}

// TestDoctorReasonChain: the resolver's message and a revision's own,
// each with the packages whose constraints take part and what runs the
// source.
func TestDoctorReasonChain(t *testing.T) {
	const xRepo, yRepo = "r.example.org/org/provider-x", "r.example.org/org/provider-y"
	lockMsg := "Error occurred during dependency resolution dependency (" + xRepo + ") does not have a valid version to upgrade that satisfies all constraints. Constraints: [>=v2.0.0 <v1.0.0]"
	r := doctor(t,
		pkgObj("Configuration", "cfg-a", "r.example.org/org/cfg-a:v1.0.0", "cfg-a-1"),
		pkgRev("Configuration", "cfg-a", "cfg-a-1", "r.example.org/org/cfg-a:v1.0.0", 1, "Active"),
		pkgObj("Configuration", "cfg-b", "r.example.org/org/cfg-b:v1.0.0", "cfg-b-1"),
		pkgRev("Configuration", "cfg-b", "cfg-b-1", "r.example.org/org/cfg-b:v1.0.0", 1, "Active",
			map[string]any{"type": "RevisionHealthy", "status": "False", "message": errResolveDeps + ": " + errInitDAG + ": node x already exists"}),
		pkgObj("Configuration", "cfg-c", "r.example.org/org/cfg-c:v1.0.0", "cfg-c-1"),
		pkgRev("Configuration", "cfg-c", "cfg-c-1", "r.example.org/org/cfg-c:v1.0.0", 1, "Active",
			map[string]any{"type": "RevisionHealthy", "status": "False", "message": errResolveDeps + ": incompatible dependencies: existing package " + yRepo + "@v1.0.0 is incompatible with constraint >=v2.0.0"}),
		pkgObj("Provider", "org-provider-y", yRepo+":v1.0.0", "org-provider-y-1"),
		pkgRev("Provider", "org-provider-y", "org-provider-y-1", yRepo+":v1.0.0", 1, "Active"),
		unresolvedLock(lockMsg,
			entry("cfg-a-1", "Configuration", "r.example.org/org/cfg-a", "v1.0.0", xRepo, ">=v2.0.0"),
			entry("cfg-b-1", "Configuration", "r.example.org/org/cfg-b", "v1.0.0", xRepo, "<v1.0.0"),
			entry("cfg-c-1", "Configuration", "r.example.org/org/cfg-c", "v1.0.0", yRepo, ">=v2.0.0"),
			entry("org-provider-y-1", "Provider", yRepo, "v1.0.0")),
	)
	fs := want(t, r, findings.RuleDependencyUnresolved, 2, findings.Blocking,
		"the Lock is not resolved (Resolved=False, DependencyResolutionFailed: dependency ("+xRepo+") does not have a valid version",
		"Taking part: "+xRepo+" is not installed; configuration/cfg-a requires >=v2.0.0, configuration/cfg-b requires <v1.0.0")
	if fs[0].Object != "lock/lock" || fs[1].Object != "configuration/cfg-c" {
		t.Errorf("objects %q, %q: want the Lock, then configuration/cfg-c (not cfg-b, whose message is the Lock's)", fs[0].Object, fs[1].Object)
	}
	for _, p := range []string{"configuration/cfg-c (revision cfg-c-1) cannot resolve its dependencies: " + errResolveDeps + ": incompatible dependencies",
		"Taking part: " + yRepo + " runs v1.0.0 as provider/org-provider-y; configuration/cfg-c requires >=v2.0.0"} {
		if !strings.Contains(fs[1].Message, p) {
			t.Errorf("the revision's finding does not say %q:\n%s", p, fs[1].Message)
		}
	}
}

// TestDoctorTwinName: a package others depend on under a custom name is a
// warning; under the resolver's name, or with no dependents, nothing.
func TestDoctorTwinName(t *testing.T) {
	r := doctor(t,
		pkgObj("Provider", "custom-nop", nopRepo+":v0.2.0", "custom-nop-aaa"),
		pkgRev("Provider", "custom-nop", "custom-nop-aaa", nopRepo+":v0.2.0", 1, "Active"),
		pkgObj("Provider", "lonely", "r.example.org/org/provider-lonely:v1.0.0", "lonely-1"),
		pkgRev("Provider", "lonely", "lonely-1", "r.example.org/org/provider-lonely:v1.0.0", 1, "Active"),
		pkgObj("Configuration", "cfg", "r.example.org/org/cfg:v1.0.0", "cfg-ccc"),
		pkgRev("Configuration", "cfg", "cfg-ccc", "r.example.org/org/cfg:v1.0.0", 1, "Active"),
		lock(entry("custom-nop-aaa", "Provider", nopRepo, "v0.2.0"),
			entry("lonely-1", "Provider", "r.example.org/org/provider-lonely", "v1.0.0"),
			entry("cfg-ccc", "Configuration", "r.example.org/org/cfg", "v1.0.0", nopRepo, ">=v0.2.0")),
	)
	f := want(t, r, findings.RuleTwinName, 1, findings.Warning,
		"provider/custom-nop installs "+nopRepo+", which configuration/cfg depend(s) on, under a name other than the one Crossplane's resolver gives it (org-provider-nop)",
		"the resolver installs it again as provider/org-provider-nop")
	if f[0].Object != "provider/custom-nop" {
		t.Errorf("object %q", f[0].Object)
	}
	if r.Blocking() {
		t.Error("a warning blocks")
	}
}

// TestDoctorStaleEntries: an entry whose revision is gone, one whose
// revision is inactive, one that lacks its kind, a dependency without a
// package; with the revisions unreadable, "gone" is not claimed.
func TestDoctorStaleEntries(t *testing.T) {
	objs := append(healthyNop(),
		pkgObj("Provider", "old", "r.example.org/org/provider-old:v1.0.0", "old-2"),
		pkgRev("Provider", "old", "old-1", "r.example.org/org/provider-old:v0.9.0", 1, "Inactive"),
		lock(entry("org-provider-nop-aaa", "Provider", nopRepo, "v0.2.0"),
			entry("gone-1", "Provider", "r.example.org/org/provider-gone", "v1.0.0"),
			entry("old-1", "Provider", "r.example.org/org/provider-old", "v0.9.0"),
			map[string]any{"name": "kindless-1", "source": "r.example.org/org/kindless", "version": "v1.0.0",
				"dependencies": []any{map[string]any{"constraints": ">=v1", "type": "Provider"}}}),
	)
	r := doctor(t, objs...)
	fs := want(t, r, findings.RuleStaleLockEntry, 4, findings.Warning)
	for _, p := range []string{
		"the Lock's entry gone-1 (source r.example.org/org/provider-gone) is stale: its revision gone-1 no longer exists; remove the entry from the Lock's packages (kubectl edit lock lock)",
		"the Lock's entry old-1 (source r.example.org/org/provider-old) is stale: its revision old-1 is inactive",
		"the Lock's entry kindless-1 (source r.example.org/org/kindless) is stale: its revision kindless-1 no longer exists",
		"the Lock's entry kindless-1 (source r.example.org/org/kindless) is stale: it has no type (or kind), no package in dependency 1",
	} {
		if !slices.ContainsFunc(fs, func(f findings.Finding) bool { return strings.Contains(f.Message, p) }) {
			t.Errorf("no finding says %q: %+v", p, fs)
		}
	}
	c, dyn := fakeClusterDyn(t, objs...)
	dyn.PrependReactor("list", "functionrevisions", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "pkg.crossplane.io", Resource: "functionrevisions"}, "", fmt.Errorf("RBAC"))
	})
	r = doctorOn(t, c)
	for _, f := range ruleFindings(r, findings.RuleStaleLockEntry) {
		if strings.Contains(f.Message, "no longer exists") {
			t.Errorf("with a revision kind unread, an entry is judged gone: %s", f.Message)
		}
	}
	want(t, r, findings.RuleStaleLockEntry, 2, findings.Warning) // old-1 inactive, kindless-1's fields
}

// TestDoctorRevisionHistory: more revisions than revisionHistoryLimit + 1
// is a warning naming the oldest; at the limit, or with limit 0, nothing.
func TestDoctorRevisionHistory(t *testing.T) {
	objs := []*unstructured.Unstructured{
		withSpec(pkgObj("Provider", "piled", "r.example.org/org/piled:v4", "piled-4"), "revisionHistoryLimit", int64(1)),
		withSpec(pkgObj("Provider", "kept", "r.example.org/org/kept:v2", "kept-2"), "revisionHistoryLimit", int64(1)),
		withSpec(pkgObj("Provider", "all", "r.example.org/org/all:v3", "all-3"), "revisionHistoryLimit", int64(0)),
	}
	for i := int64(1); i <= 4; i++ {
		state := "Inactive"
		if i == 4 {
			state = "Active"
		}
		objs = append(objs, pkgRev("Provider", "piled", fmt.Sprintf("piled-%d", i), "r.example.org/org/piled:v1", i, state))
		if i <= 2 {
			objs = append(objs, pkgRev("Provider", "kept", fmt.Sprintf("kept-%d", i), "r.example.org/org/kept:v1", i, state))
		}
		if i <= 3 {
			objs = append(objs, pkgRev("Provider", "all", fmt.Sprintf("all-%d", i), "r.example.org/org/all:v1", i, state))
		}
	}
	r := doctor(t, objs...)
	f := want(t, r, findings.RuleRevisionHistory, 1, findings.Warning, "provider/piled has 4 revisions, more than its revisionHistoryLimit of 1 keeps",
		"the oldest: piled-2, piled-1 (kubectl delete providerrevision piled-2 piled-1)")
	if f[0].Object != "provider/piled" || *f[0].Count != 4 {
		t.Errorf("object %q, count %d", f[0].Object, *f[0].Count)
	}
}

// TestDoctorHealthyInConstantRequests: a healthy cluster gets no finding,
// read with one request per package kind, one per revision kind, one for
// the Lock and one list each of CRDs, MRDs and DeploymentRuntimeConfigs,
// whatever the number of packages and revisions.
func TestDoctorHealthyInConstantRequests(t *testing.T) {
	for _, n := range []int{1, 20} {
		var objs []*unstructured.Unstructured
		var entries []map[string]any
		for i := range n {
			name := fmt.Sprintf("org-provider-%d", i)
			repo := "r.example.org/org/provider-" + fmt.Sprint(i)
			objs = append(objs, pkgObj("Provider", name, repo+":v1.0.0", name+"-b"),
				pkgRev("Provider", name, name+"-a", repo+":v0.9.0", 1, "Inactive"),
				pkgRev("Provider", name, name+"-b", repo+":v1.0.0", 2, "Active"))
			entries = append(entries, entry(name+"-b", "Provider", repo, "v1.0.0"))
		}
		objs = append(objs, lock(entries...))
		c, dyn := fakeClusterDyn(t, objs...)
		r := doctorOn(t, c)
		if !r.Healthy() || r.Blocking() || r.Packages != n || r.Revisions != 2*n || r.LockEntries != n {
			t.Errorf("%d providers: %+v", n, r)
		}
		got := requests(dyn.Actions())
		for _, r := range []string{"providers", "configurations", "functions", "providerrevisions", "configurationrevisions", "functionrevisions",
			"customresourcedefinitions", "managedresourcedefinitions", "deploymentruntimeconfigs"} {
			if got["list "+r] != 1 {
				t.Errorf("%d providers: %d lists of %s, want 1", n, got["list "+r], r)
			}
		}
		if got["get locks"] != 1 || len(dyn.Actions()) != 10 {
			t.Errorf("%d providers: requests %v, want 9 lists and 1 get of the Lock", n, got)
		}
	}
}

// TestDoctorSaysWhatItCouldNotRead: a kind RBAC keeps from doctor is one
// Unread line, and the findings it could make are made.
func TestDoctorSaysWhatItCouldNotRead(t *testing.T) {
	c, dyn := fakeClusterDyn(t, append(healthyNop(),
		pkgObj("Provider", "custom-nop", nopRepo+":v0.2.0", "custom-nop-aaa"),
		pkgRev("Provider", "custom-nop", "custom-nop-aaa", nopRepo+":v0.2.0", 1, "Active"),
		lock(entry("custom-nop-aaa", "Provider", nopRepo, "v0.2.0"), entry("org-provider-nop-aaa", "Provider", nopRepo, "v0.2.0")))...)
	dyn.PrependReactor("list", "configurations", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "pkg.crossplane.io", Resource: "configurations"}, "", fmt.Errorf("RBAC"))
	})
	r := doctorOn(t, c)
	if len(r.Unread) != 1 || !strings.Contains(r.Unread[0], "configurations") || !strings.Contains(r.Unread[0], "forbidden") {
		t.Errorf("unread %q, want one line about configurations", r.Unread)
	}
	want(t, r, findings.RuleDuplicateLockNode, 1, findings.Blocking, "Crossplane keeps provider/org-provider-nop")
	if r.Healthy() {
		t.Error("a partial read is healthy")
	}
}
