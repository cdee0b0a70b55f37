package plugin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

// doctorSource is the repository of the Function the doctor tests break.
const doctorSource = "xpkg.example.org/doctor/function-twice"

// twoRevisionsInTheLock is what Crossplane v2.4 leaves after a spec edit
// of a Function under Manual activation: two revisions of it, neither
// activated (desiredState ""), both in the Lock under one source, the
// package's current revision the newer.
func twoRevisionsInTheLock() []*unstructured.Unstructured {
	objs := []*unstructured.Unstructured{fakecluster.Object("pkg.crossplane.io/v1", "Function", "doctor-fn", map[string]any{
		"spec":   map[string]any{"package": doctorSource + ":v0.1.0", "revisionActivationPolicy": "Manual", "revisionHistoryLimit": int64(3)},
		"status": map[string]any{"currentRevision": "doctor-fn-bbb", "currentIdentifier": doctorSource + ":v0.1.0"},
	})}
	var entries []any
	for i, name := range []string{"doctor-fn-aaa", "doctor-fn-bbb"} {
		rev := fakecluster.Object("pkg.crossplane.io/v1", "FunctionRevision", name, map[string]any{
			"spec": map[string]any{"image": doctorSource + ":v0.1.0", "revision": int64(i + 1), "desiredState": ""}})
		rev.SetLabels(map[string]string{"pkg.crossplane.io/package": "doctor-fn"})
		objs = append(objs, rev)
		entries = append(entries, map[string]any{"name": name, "apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
			"source": doctorSource, "version": "v0.1.0", "dependencies": []any{}})
	}
	return append(objs, fakecluster.Object("pkg.crossplane.io/v1beta1", "Lock", "lock", map[string]any{"packages": entries}))
}

// TestDoctorFindsTwoRevisionsInTheLock runs doctor as a user would on the
// state of issue 28's route: the duplicate node is blocking (exit 3),
// names both revisions and the one Crossplane keeps, in text and in JSON.
func TestDoctorFindsTwoRevisionsInTheLock(t *testing.T) {
	x := newCLI(t, twoRevisionsInTheLock()...)

	r := x.Run("doctor").Fails(t, 3)
	contains(t, "doctor", r.Stdout,
		"BLOCKING the Lock holds 2 nodes for "+doctorSource+": revision doctor-fn-aaa of function/doctor-fn (v0.1.0), revision doctor-fn-bbb of function/doctor-fn (v0.1.0)",
		"Crossplane keeps doctor-fn-bbb, the current revision of function/doctor-fn: delete the other (kubectl delete functionrevision doctor-fn-aaa)",
		"[duplicate-lock-node]",
		"WARNING  function/doctor-fn activates revisions by hand (revisionActivationPolicy: Manual) and none of its 2 revision(s) is active", "[manual-inactive]")
	if r.Stderr != "" {
		t.Errorf("stderr: %s", r.Stderr)
	}
	// The cluster holds nothing else: the whole report is these two.
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if len(lines) != 4 || lines[0] != "Doctor: 1 packages, 2 revisions, 2 Lock entries read" || lines[1] != "  1 blocking, 1 warning, 0 info" ||
		!strings.HasPrefix(lines[2], "  BLOCKING ") || !strings.HasPrefix(lines[3], "  WARNING  ") {
		t.Errorf("doctor reports more, or else, than the two findings:\n%s", r.Stdout)
	}

	r = x.Run("doctor", "-o", "json").Fails(t, 3)
	var doc struct {
		Findings []struct{ Rule, Severity, Message, Object string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	if !slices.ContainsFunc(doc.Findings, func(f struct{ Rule, Severity, Message, Object string }) bool {
		return f.Rule == "duplicate-lock-node" && f.Severity == "blocking" && f.Object == "function/doctor-fn"
	}) {
		t.Errorf("-o json has no blocking duplicate-lock-node about function/doctor-fn:\n%s", r.Stdout)
	}
	var rules []string
	for _, f := range doc.Findings {
		rules = append(rules, f.Severity+" "+f.Rule+" "+f.Object)
	}
	if want := []string{"blocking duplicate-lock-node function/doctor-fn", "warning manual-inactive function/doctor-fn"}; !slices.Equal(rules, want) {
		t.Errorf("-o json findings %q, want %q", rules, want)
	}
}

// TestDoctorCrossplaneVersion runs doctor --crossplane-version as a user
// would before upgrading Crossplane: the move heads the report, and a
// DeploymentRuntimeConfig that names its ServiceAccount makes v2.4.1 (a
// release with crossplane#7838) blocking, exit 3, in text and in JSON;
// v2.4.2 does not have the defect; a version that is no release, and
// --offline alone, are usage errors.
func TestDoctorCrossplaneVersion(t *testing.T) {
	const ns, drc = "xpkg-doctor-release", "xpkg-doctor-pinned"
	labels := map[string]any{"app": "crossplane"}
	deployment := fakecluster.Object("apps/v1", "Deployment", "crossplane", map[string]any{
		"spec": map[string]any{"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "crossplane", "image": "xpkg.crossplane.io/crossplane/crossplane:v2.4.0"}}}}}})
	deployment.SetNamespace(ns)
	deployment.SetLabels(map[string]string{"app": "crossplane", "app.kubernetes.io/version": "v2.4.0"})
	x := newCLI(t, deployment, fakecluster.Object("pkg.crossplane.io/v1beta1", "DeploymentRuntimeConfig", drc, map[string]any{
		"spec": map[string]any{"serviceAccountTemplate": map[string]any{"metadata": map[string]any{"name": "provider-pinned"}}}}))

	r := x.Run("doctor", "--crossplane-version", "v2.4.1", "--crossplane-namespace", ns, "--offline").Fails(t, 3)
	contains(t, "doctor --crossplane-version v2.4.1", r.Stdout,
		"Crossplane v2.4.0 (deployment "+ns+"/crossplane) → v2.4.1\nDoctor: ",
		"BLOCKING Crossplane v2.4.1 has a known defect (crossplane/crossplane#7838, fixed in v2.4.2)",
		"DeploymentRuntimeConfig "+drc+" names ServiceAccount provider-pinned", "[crossplane-known-bad]")
	// The cluster holds nothing else: that finding is the whole report.
	contains(t, "doctor --crossplane-version v2.4.1", r.Stdout, "Doctor: 0 packages, 0 revisions, 0 Lock entries read\n  1 blocking, 0 warning, 0 info\n")

	r = x.Run("doctor", "--crossplane-version", "2.4.1", "--crossplane-namespace", ns, "--offline", "-o", "json").Fails(t, 3)
	var doc struct {
		Crossplane struct{ Running, Target, Deployment string } `json:"crossplane"`
		Findings   []struct{ Rule, Severity string }            `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	if doc.Crossplane.Running != "v2.4.0" || doc.Crossplane.Target != "v2.4.1" || doc.Crossplane.Deployment != ns+"/crossplane" ||
		!slices.ContainsFunc(doc.Findings, func(f struct{ Rule, Severity string }) bool {
			return f.Rule == "crossplane-known-bad" && f.Severity == "blocking"
		}) {
		t.Errorf("-o json:\n%s", r.Stdout)
	}

	r = x.Run("doctor", "--crossplane-version", "v2.4.2", "--crossplane-namespace", ns, "--offline").Succeeds(t)
	if strings.Contains(r.Stdout, "[crossplane-known-bad]") || !strings.Contains(r.Stdout, "→ v2.4.2\n") {
		t.Errorf("v2.4.2:\n%s", r.Stdout)
	}
	if want := "Crossplane v2.4.0 (deployment " + ns + "/crossplane) → v2.4.2\nDoctor: 0 packages, 0 revisions, 0 Lock entries read\n  no problems found\n"; r.Stdout != want || r.Stderr != "" {
		t.Errorf("v2.4.2: stdout\n%s\nwant\n%s\nstderr %q", r.Stdout, want, r.Stderr)
	}
	r = x.Run("doctor", "--crossplane-version", "v2.4").Fails(t, 1)
	contains(t, "--crossplane-version v2.4", r.Stderr, "--crossplane-version: \"v2.4\" is no Crossplane version: want MAJOR.MINOR.PATCH")
	r = x.Run("doctor", "--offline").Fails(t, 1)
	contains(t, "--offline alone", r.Stderr, "--offline goes with --crossplane-version")
}
