package plugin

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

// TestGetRefusesNamesWithASelector: as kubectl does, rather than ignoring
// the selector.
func TestGetRefusesNamesWithASelector(t *testing.T) {
	r := newCLI(t).Run("get", "providers", "some-name", "-l", "team=platform").Fails(t, 1)
	contains(t, "get -l with names", r.Stderr, "error: name cannot be provided when a selector is specified")
}

// TestGetSeveralNamesAndNoHeaders: get A B prints the packages found and
// fails for the one missing, naming it, as kubectl get does;
// --no-headers leaves the header line out of every table.
func TestGetSeveralNamesAndNoHeaders(t *testing.T) {
	const name = "get-several-nop"
	x := newCLI(t, fakecluster.Object("pkg.crossplane.io/v1", "Provider", name,
		map[string]any{"spec": map[string]any{"package": "xpkg.example.test/org/provider-nop:v0.4.0"}}))

	r := x.Run("get", "providers", name, "no-such-provider").Fails(t, 1)
	if row := tableRow(r.Stdout, name); len(row) == 0 || !strings.HasPrefix(r.Stdout, "NAME ") {
		t.Errorf("get A B with B missing printed %q", r.Stdout)
	}
	contains(t, "get A B", r.Stderr, "no-such-provider", "not found")
	r = x.Run("get", name, "no-such-provider").Fails(t, 1)
	contains(t, "get A B without a kind", r.Stderr, `no package named "no-such-provider"`)
	contains(t, "get A B without a kind", r.Stdout, name)
	r = x.Run("get", "providers", "no-such-a", "no-such-b").Fails(t, 1)
	if n := strings.Count(r.Stderr, "error: Error from server (NotFound)"); n != 2 || r.Stdout != "" {
		t.Errorf("get A B, both missing: %d error lines, stdout %q:\n%s", n, r.Stdout, r.Stderr)
	}

	for _, o := range []string{"", "wide", "custom-columns=NAME:.metadata.name,PACKAGE:.spec.package"} {
		args := []string{"get", "providers", name, "--no-headers"}
		if o != "" {
			args = append(args, "-o", o)
		}
		r = x.Run(args...).Succeeds(t)
		if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], name+" ") {
			t.Errorf("get --no-headers -o %q printed %q", o, r.Stdout)
		}
	}
}

// TestGetNeverHealthyWhilePausedOrInactive: a paused package keeps the
// conditions it had (Installed=True, Healthy=True): get says Paused, and
// a package whose current revision is inactive is not shown installed or
// healthy; describe says why.
func TestGetNeverHealthyWhilePausedOrInactive(t *testing.T) {
	conds := []any{
		map[string]any{"type": "Installed", "status": "True", "reason": "ActivePackageRevision"},
		map[string]any{"type": "Healthy", "status": "True", "reason": "HealthyPackageRevision"},
	}
	pkg := func(name string, annotations map[string]any) *unstructured.Unstructured {
		u := fakecluster.Object("pkg.crossplane.io/v1", "Provider", name, map[string]any{
			"spec":   map[string]any{"package": "xpkg.example.test/org/" + name + ":v1.0.0"},
			"status": map[string]any{"currentRevision": name + "-1", "conditions": conds}})
		if annotations != nil {
			u.Object["metadata"].(map[string]any)["annotations"] = annotations
		}
		return u
	}
	rev := func(name, state string) *unstructured.Unstructured {
		u := fakecluster.Object("pkg.crossplane.io/v1", "ProviderRevision", name+"-1", map[string]any{
			"spec": map[string]any{"image": "xpkg.example.test/org/" + name + ":v1.0.0", "revision": int64(1), "desiredState": state}})
		u.SetLabels(map[string]string{"pkg.crossplane.io/package": name})
		return u
	}
	x := newCLI(t, pkg("paused-old", map[string]any{"crossplane.io/paused": "true"}), rev("paused-old", "Inactive"),
		pkg("inactive", nil), rev("inactive", "Inactive"), pkg("fine", nil), rev("fine", "Active"))
	r := x.Run("get", "providers").Succeeds(t)
	for name, want := range map[string][]string{"paused-old": {"False", "Paused"}, "inactive": {"False", "False"}, "fine": {"True", "True"}} {
		row := tableRow(r.Stdout, name)
		if len(row) < 6 || row[4] != want[0] || row[5] != want[1] {
			t.Errorf("%s: row %q, want INSTALLED %s HEALTHY %s", name, row, want[0], want[1])
		}
	}
	r = x.Run("describe", "provider/paused-old").Succeeds(t)
	contains(t, "describe of a paused package", r.Stdout, "State:              not healthy: paused (crossplane.io/paused)", "its current revision paused-old-1 is inactive: it runs nothing")
}

// TestGetDescribeTreeShowATerminatingCRD: a provider installed again over
// a CRD being deleted (objects of its kind hold it) has conditions that
// say Healthy and an MRD that says Active and Established, but no object
// of the kind can be made: get and tree show it Terminating, describe
// says which CRD since when, and shows the MRD Terminating, not
// Established. A provider whose CRD is not being deleted stays healthy.
func TestGetDescribeTreeShowATerminatingCRD(t *testing.T) {
	conds := []any{
		map[string]any{"type": "Installed", "status": "True", "reason": "ActivePackageRevision"},
		map[string]any{"type": "Healthy", "status": "True", "reason": "HealthyPackageRevision"},
	}
	mrdRef := func(name string) any {
		return map[string]any{"apiVersion": "apiextensions.crossplane.io/v1alpha1", "kind": "ManagedResourceDefinition", "name": name}
	}
	pkg := func(name, crd string) []*unstructured.Unstructured {
		p := fakecluster.Object("pkg.crossplane.io/v1", "Provider", name, map[string]any{
			"spec":   map[string]any{"package": "xpkg.example.test/org/" + name + ":v1.0.0"},
			"status": map[string]any{"currentRevision": name + "-1", "conditions": conds}})
		r := fakecluster.Object("pkg.crossplane.io/v1", "ProviderRevision", name+"-1", map[string]any{
			"spec":   map[string]any{"image": "xpkg.example.test/org/" + name + ":v1.0.0", "revision": int64(1), "desiredState": "Active"},
			"status": map[string]any{"conditions": conds, "objectRefs": []any{mrdRef(crd)}}})
		r.SetLabels(map[string]string{"pkg.crossplane.io/package": name})
		m := fakecluster.Object("apiextensions.crossplane.io/v1alpha1", "ManagedResourceDefinition", crd, map[string]any{
			"spec":   map[string]any{"state": "Active"},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Established", "status": "True"}}}})
		return []*unstructured.Unstructured{p, r, m}
	}
	since := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	objs := append(pkg("nop", "nopresources.nop.example.org"), pkg("fine", "widgets.fine.example.org")...)
	objs = append(objs, fakecluster.Deleting(fakecluster.CRD("nop.example.org", "NopResource", "nopresources", "v1alpha1"), since),
		fakecluster.CRD("fine.example.org", "Widget", "widgets", "v1"))
	x := newCLI(t, objs...)

	r := x.Run("get", "providers").Succeeds(t)
	for name, want := range map[string]string{"nop": "Terminating", "fine": "True"} {
		if row := tableRow(r.Stdout, name); len(row) < 6 || row[5] != want {
			t.Errorf("%s: row %q, want HEALTHY %s", name, row, want)
		}
	}
	r = x.Run("describe", "provider/nop").Succeeds(t)
	contains(t, "describe", r.Stdout,
		"State:              not healthy: its CRD nopresources.nop.example.org is being deleted (since 2025-06-01T10:00:00Z): the API server refuses every new object of its kind",
		"Managed resource definitions: 1 (1 Terminating; 0 Established)",
		"nopresources.nop.example.org   Terminating (its CRD is being deleted since 2025-06-01T10:00:00Z)   False")
	if r = x.Run("describe", "provider/fine").Succeeds(t); strings.Contains(r.Stdout, "Terminating") || strings.Contains(r.Stdout, "not healthy") {
		t.Errorf("describe of a provider whose CRD is not being deleted:\n%s", r.Stdout)
	}
	r = x.Run("tree").Succeeds(t)
	contains(t, "tree", r.Stdout, "provider/nop xpkg.example.test/org/nop v1.0.0 [installed: True, healthy: Terminating]",
		"provider/fine xpkg.example.test/org/fine v1.0.0 [installed: True, healthy: True]")
}
