package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

var (
	functionsGVR         = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "functions"}
	functionRevisionsGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "functionrevisions"}
	rolesGVR             = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	bindingsGVR          = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

// doctorSource is the repository of the Function the doctor tests break.
const doctorSource = "xpkg.example.org/doctor/function-twice"

// twoRevisionsInTheLock makes what Crossplane v2.4 leaves after a spec
// edit of a Function under Manual activation: two revisions of it, neither
// activated (desiredState ""), both in the Lock under one source, the
// package's current revision the newer. Everything is removed again.
func twoRevisionsInTheLock(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	ctx := context.Background()
	fn := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
		"metadata": map[string]any{"name": "doctor-fn"},
		"spec":     map[string]any{"package": doctorSource + ":v0.1.0", "revisionActivationPolicy": "Manual", "revisionHistoryLimit": int64(3)}}}
	created, err := dyn.Resource(functionsGVR).Create(ctx, fn, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(functionsGVR).Delete(ctx, "doctor-fn", metav1.DeleteOptions{}) })
	created.Object["status"] = map[string]any{"currentRevision": "doctor-fn-bbb", "currentIdentifier": doctorSource + ":v0.1.0"}
	if _, err := dyn.Resource(functionsGVR).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"doctor-fn-aaa", "doctor-fn-bbb"} {
		rev := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"pkg.crossplane.io/package": "doctor-fn"}},
			"spec":     map[string]any{"image": doctorSource + ":v0.1.0", "revision": int64(i + 1), "desiredState": ""}}}
		if _, err := dyn.Resource(functionRevisionsGVR).Create(ctx, rev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = dyn.Resource(functionRevisionsGVR).Delete(ctx, name, metav1.DeleteOptions{}) })
	}
	ours := func(e any) bool { m, _ := e.(map[string]any); return m["source"] == doctorSource }
	editLock(t, dyn, func(pkgs []any) []any {
		for _, name := range []string{"doctor-fn-aaa", "doctor-fn-bbb"} {
			pkgs = append(pkgs, map[string]any{"name": name, "apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
				"source": doctorSource, "version": "v0.1.0", "dependencies": []any{}})
		}
		return pkgs
	})
	t.Cleanup(func() { editLock(t, dyn, func(pkgs []any) []any { return slices.DeleteFunc(pkgs, ours) }) })
}

// editLock changes the Lock's packages, making the Lock if there is none.
func editLock(t *testing.T, dyn dynamic.Interface, edit func([]any) []any) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := dyn.Resource(locksGVR).Get(ctx, "lock", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			u = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "Lock",
				"metadata": map[string]any{"name": "lock"}}}
			u.Object["packages"] = edit(nil)
			_, err = dyn.Resource(locksGVR).Create(ctx, u, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		pkgs, _, _ := unstructured.NestedSlice(u.Object, "packages")
		u.Object["packages"] = edit(pkgs)
		_, err = dyn.Resource(locksGVR).Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// What doctor finds and prints on crafted states is tested over a fake
// cluster in plugin/doctor_test.go; here is what only an API server shows.

// TestDoctorUnderRBAC: an identity that may not list configuration
// revisions gets the findings doctor could make and one error line for
// what it could not read (exit 1), not a report of health; one that may
// read nothing gets a line per read.
func TestDoctorUnderRBAC(t *testing.T) {
	env := testenv.Get(t)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	twoRevisionsInTheLock(t, dyn)
	x := clitest.New(t).WithEnv(env)

	r := x.Run("doctor", "--context", testenv.ContextUser).Fails(t, 1)
	if n := strings.Count(r.Stderr, "error: doctor is incomplete: "); n != 10 {
		t.Errorf("%d lines of what could not be read, want 10 (3 package kinds, 3 revision kinds, the Lock, CRDs, MRDs, DeploymentRuntimeConfigs):\n%s", n, r.Stderr)
	}
	contains(t, "doctor with no permission", r.Stdout, "Doctor: 0 packages, 0 revisions, 0 Lock entries read; 10 reads failed, so the findings are not complete")
	if strings.Contains(r.Stdout, "no problems found") {
		t.Errorf("a report of health from nothing read:\n%s", r.Stdout)
	}

	const name = "xpkg-doctor-reader"
	grant(t, dyn, name, []any{
		map[string]any{"apiGroups": []any{"pkg.crossplane.io"},
			"resources": []any{"providers", "configurations", "functions", "providerrevisions", "functionrevisions", "locks", "deploymentruntimeconfigs"},
			"verbs":     []any{"get", "list"}},
		map[string]any{"apiGroups": []any{"apiextensions.k8s.io"}, "resources": []any{"customresourcedefinitions"}, "verbs": []any{"list"}},
		map[string]any{"apiGroups": []any{"apiextensions.crossplane.io"}, "resources": []any{"managedresourcedefinitions"}, "verbs": []any{"list"}},
	})
	awaitGrant(t, env)
	r = x.Run("doctor", "--context", testenv.ContextUser).Fails(t, 1)
	contains(t, "doctor without configuration revisions", r.Stdout, "1 reads failed, so the findings are not complete",
		"Crossplane keeps doctor-fn-bbb, the current revision of function/doctor-fn")
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: doctor is incomplete: ") || !strings.Contains(lines[0], `cannot list resource "configurationrevisions"`) {
		t.Errorf("want one error line about configuration revisions, got:\n%s", r.Stderr)
	}
}

// grant binds the test user to a ClusterRole of rules, removed again.
func grant(t *testing.T, dyn dynamic.Interface, name string, rules []any) {
	t.Helper()
	ctx := context.Background()
	role := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
		"metadata": map[string]any{"name": name}, "rules": rules}}
	binding := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": name},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": testenv.ContextUser}}}}
	if _, err := dyn.Resource(rolesGVR).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(rolesGVR).Delete(ctx, name, metav1.DeleteOptions{}) })
	if _, err := dyn.Resource(bindingsGVR).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(bindingsGVR).Delete(ctx, name, metav1.DeleteOptions{}) })
}

// awaitGrant waits until the API server's authorizer lets the test user
// list functions (RBAC takes a moment to see a new binding).
func awaitGrant(t *testing.T, env *testenv.Env) {
	t.Helper()
	user, err := env.DynamicClient(testenv.ContextUser)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		_, err := user.Resource(functionsGVR).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the grant never took effect: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

var (
	namespacesGVR     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deploymentsGVR    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	runtimeConfigsGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "deploymentruntimeconfigs"}
)

// crossplaneDeployment makes the Deployment crossplane in ns (and ns),
// labelled with version as Crossplane's Helm chart labels it, removed
// again: the test API server runs no Crossplane of its own.
func crossplaneDeployment(t *testing.T, dyn dynamic.Interface, ns, version string) {
	t.Helper()
	ctx := context.Background()
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := dyn.Resource(namespacesGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	labels := map[string]any{"app": "crossplane"}
	d := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "crossplane", "namespace": ns, "labels": map[string]any{"app": "crossplane", "app.kubernetes.io/version": version}},
		"spec": map[string]any{"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "crossplane", "image": "xpkg.crossplane.io/crossplane/crossplane:" + version}}}}}}}
	if _, err := dyn.Resource(deploymentsGVR).Namespace(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(deploymentsGVR).Namespace(ns).Delete(ctx, "crossplane", metav1.DeleteOptions{})
	})
}

// TestDoctorFixOnTheAPIServer: --fix deletes the stale revision behind the
// duplicate (with no package manager here, its Lock entry stays, and a
// second --fix removes that entry as one whose revision is gone); each
// run saves what it changes first, in a file kubectl apply takes, and
// says in -o json what it did.
func TestDoctorFixOnTheAPIServer(t *testing.T) {
	env := testenv.Get(t)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	twoRevisionsInTheLock(t, dyn)
	x := clitest.New(t).WithEnv(env)
	dir := t.TempDir()

	first := filepath.Join(dir, "first.yaml")
	r := x.Run("doctor", "--fix", "--yes", "--backup", first, "--wait", "0s", "-o", "json").Fails(t, 3)
	var doc struct {
		Repair struct {
			Steps  []struct{ Rule, Action, Object string }
			Backup string
			Done   []string
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	if doc.Repair.Backup != first || !slices.Contains(doc.Repair.Done, "delete functionrevision/doctor-fn-aaa") ||
		!slices.ContainsFunc(doc.Repair.Steps, func(s struct{ Rule, Action, Object string }) bool {
			return s.Rule == "duplicate-lock-node" && s.Action == "delete" && s.Object == "functionrevision/doctor-fn-aaa"
		}) {
		t.Errorf("repair %+v\nstderr:\n%s", doc.Repair, r.Stderr)
	}
	if _, err := dyn.Resource(functionRevisionsGVR).Get(context.Background(), "doctor-fn-aaa", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the stale revision is still there (or cannot be read: %v)", err)
	}
	saved, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "backup", string(saved), "kind: FunctionRevision", "name: doctor-fn-aaa")
	if strings.Contains(string(saved), "uid:") || strings.Contains(string(saved), "resourceVersion:") {
		t.Errorf("the backup keeps what only the API server sets:\n%s", saved)
	}
	x.Kubectl("apply", "--dry-run=server", "-f", first).Succeeds(t)

	second := filepath.Join(dir, "second.yaml")
	r = x.Run("doctor", "--fix", "--yes", "--backup", second, "--wait", "0s")
	contains(t, "doctor --fix again", r.Stdout, "remove the Lock's entry doctor-fn-aaa (source "+doctorSource+"): its revision no longer exists [stale-lock-entry]",
		"lock/lock: entry doctor-fn-aaa removed", "After the repair:")
	lock, err := dyn.Resource(locksGVR).Get(context.Background(), "lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pkgs, _, _ := unstructured.NestedSlice(lock.Object, "packages")
	var ours []string
	for _, p := range pkgs {
		if m, _ := p.(map[string]any); m["source"] == doctorSource {
			ours = append(ours, m["name"].(string))
		}
	}
	if !slices.Equal(ours, []string{"doctor-fn-bbb"}) {
		t.Errorf("the Lock holds %v for %s, want only doctor-fn-bbb", ours, doctorSource)
	}
	x.Kubectl("apply", "--dry-run=server", "-f", second).Succeeds(t)
}
