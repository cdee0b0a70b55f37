package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
)

// lockEntries are the names of the Lock's entries whose source is src.
func (c cluster) lockEntries(src string) []string {
	lock := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}
	u, err := c.dyn.Resource(lock).Get(context.Background(), "lock", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	pkgs, _, _ := unstructured.NestedSlice(u.Object, "packages")
	var out []string
	for _, p := range pkgs {
		if m, _ := p.(map[string]any); m["source"] == src {
			out = append(out, m["name"].(string))
		}
	}
	slices.Sort(out)
	return out
}

// awaitLock waits until the Lock's entries for src are n, and returns them.
func (c cluster) awaitLock(src string, n int, within time.Duration) []string {
	c.t.Helper()
	var got []string
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if got = c.lockEntries(src); len(got) == n {
			return got
		}
	}
	c.t.Fatalf("the Lock holds %v for %s after %s, want %d entries", got, src, within, n)
	return nil
}

// TestDoctorFindsTheManualActivationDuplicate is issue 28's route on the
// real package manager: a Function installed under Manual activation,
// then any spec edit (revisionHistoryLimit). Crossplane v2.4 makes a new
// revision for the edit, and both revisions, neither active nor inactive,
// enter the Lock under one source. doctor names both, blocking (exit 3),
// and the one Crossplane keeps; deleting the other, as it says, clears
// the Lock and the finding.
func TestDoctorFindsTheManualActivationDuplicate(t *testing.T) {
	env, reg, c, x := start(t)
	if !fromV24(t, env) {
		t.Skip("Crossplane v2.3 makes no revision for a spec edit that keeps the image: this route needs v2.4")
	}
	const pkg = "doctor-pt"
	repo := reg.Host + "/crossplane-contrib/function-patch-and-transform"
	t.Cleanup(func() { clitest.New(t).WithEnv(env).Run("uninstall", "function/"+pkg, "--force", "--yes", "--wait=2m") })
	x.Run("install", repo+":v0.9.0", pkg, "--manual-activation").Succeeds(t)
	first := c.awaitLock(repo, 1, 2*time.Minute)

	patch := []byte(`{"spec":{"revisionHistoryLimit":3}}`)
	if _, err := c.dyn.Resource(gvr("functions")).Patch(context.Background(), pkg, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	both := c.awaitLock(repo, 2, 2*time.Minute)
	current, _, _ := unstructured.NestedString(c.get("functions", pkg).Object, "status", "currentRevision")
	if !slices.Contains(both, first[0]) || !slices.Contains(both, current) || current == first[0] {
		t.Fatalf("the Lock holds %v; the first revision was %s, the current one is %s", both, first[0], current)
	}

	r := x.Run("doctor").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s%s", r.Stdout, r.Stderr)
	contains(t, "doctor", r.Stdout,
		"BLOCKING the Lock holds 2 nodes for "+repo+": revision "+both[0]+" of function/"+pkg+" (v0.9.0), revision "+both[1]+" of function/"+pkg+" (v0.9.0)",
		"Crossplane keeps "+current+", the current revision of function/"+pkg+": delete the other (kubectl delete functionrevision "+first[0]+")",
		"[duplicate-lock-node]", "function/"+pkg+" activates revisions by hand", "[manual-inactive]")

	// The way out doctor names.
	if err := c.dyn.Resource(gvr("functionrevisions")).Delete(context.Background(), first[0], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c.awaitLock(repo, 1, 2*time.Minute)
	r = x.Run("doctor", "-o", "json")
	var doc struct {
		Findings []struct{ Rule, Message string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("doctor -o json: %v\n%s%s", err, r.Stdout, r.Stderr)
	}
	for _, f := range doc.Findings {
		if f.Rule == "duplicate-lock-node" && strings.Contains(f.Message, repo) {
			t.Errorf("the duplicate is still found after deleting %s: %s", first[0], f.Message)
		}
	}
}

// awaitHealthy waits until the package is Healthy (and Installed), and
// says whether it was within the time.
func (c cluster) awaitHealthy(resource, name string, within time.Duration) error {
	var err error
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(time.Second) {
		if u := c.get(resource, name); u == nil {
			err = errors.New("it does not exist")
		} else if err = crossplane.Ready(u); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s/%s is not healthy after %s: %w", resource, name, within, err)
}

// TestDoctorFixRepairsTheManualActivationDuplicate: the same route, with
// an unrelated provider that the duplicate takes down; doctor --fix
// plans the deletion of the stale revision (--dry-run changes nothing),
// saves it to a backup kubectl apply takes, deletes it, and every
// package is healthy again (the Function once its revision is activated,
// as it was installed to wait for).
func TestDoctorFixRepairsTheManualActivationDuplicate(t *testing.T) {
	env, reg, c, x := start(t)
	if !fromV24(t, env) {
		t.Skip("Crossplane v2.3 makes no revision for a spec edit that keeps the image: this route needs v2.4")
	}
	const pkg, nop = "fix-pt", "fix-nop"
	repo := reg.Host + "/crossplane-contrib/function-patch-and-transform"
	t.Cleanup(func() {
		clitest.New(t).WithEnv(env).Run("uninstall", "function/"+pkg, "provider/"+nop, "--force", "--yes", "--wait=2m")
	})
	x.Run("install", reg.Host+"/e2e/crossplane-contrib/provider-nop:v0.2.1", nop, "--wait=5m").Succeeds(t)
	x.Run("install", repo+":v0.9.0", pkg, "--manual-activation").Succeeds(t)
	first := c.awaitLock(repo, 1, 2*time.Minute)
	patch := []byte(`{"spec":{"revisionHistoryLimit":3}}`)
	if _, err := c.dyn.Resource(gvr("functions")).Patch(context.Background(), pkg, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	c.awaitLock(repo, 2, 2*time.Minute)

	r := x.Run("doctor", "--fix", "--dry-run").Fails(t, 3)
	contains(t, "doctor --fix --dry-run", r.Stdout, "Repair: 1 step(s)",
		"1. delete revision "+first[0]+" of function/"+pkg+", which is not its current revision", "[duplicate-lock-node]")
	if got := c.lockEntries(repo); len(got) != 2 {
		t.Fatalf("a dry run changed the Lock: %v", got)
	}

	backup := filepath.Join(t.TempDir(), "backup.yaml")
	r = x.Run("doctor", "--fix", "--yes", "--backup", backup, "--wait=3m").Succeeds(t)
	t.Logf("transcript:\n$ kubectl xpkg doctor --fix --yes --backup backup.yaml\n%s%s", r.Stdout, r.Stderr)
	contains(t, "doctor --fix", r.Stdout, "functionrevision/"+first[0]+" deleted", "After the repair:", "[manual-inactive]")
	contains(t, "doctor --fix", r.Stderr, "Saved the 1 object(s) the repair changes to "+backup)
	if strings.Contains(r.Stdout[strings.Index(r.Stdout, "After the repair:"):], "[duplicate-lock-node]") {
		t.Errorf("the duplicate is still there after the repair:\n%s", r.Stdout)
	}
	c.awaitLock(repo, 1, 2*time.Minute)
	if err := c.awaitHealthy("providers", nop, 3*time.Minute); err != nil {
		t.Error(err)
	}
	x.Kubectl("apply", "--dry-run=server", "-f", backup).Succeeds(t)

	x.Run("upgrade", "function/"+pkg, "--activate", "--wait=3m").Succeeds(t)
	if err := c.awaitHealthy("functions", pkg, time.Minute); err != nil {
		t.Error(err)
	}
	x.Run("doctor").Succeeds(t)
}
