package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// killCase is where a rename is killed, and how the rerun ends it.
type killCase struct {
	name string
	step int // the step whose record the test waits for
	// wait, when set, is the point in the step's wait the test then
	// waits for (mid-wait).
	wait midWait
	undo bool // the rerun undoes (--undo) rather than finishes
}

// midWait names a point inside a rename's wait.
type midWait int

const (
	atBoundary midWait = iota
	// oldInactive: step 3, the old revision deactivated, its release
	// waited for.
	oldInactive
	// newRevision: step 5, the new package's revision made, its health
	// waited for.
	newRevision
	// oldDeleting: step 6, the old package's deletion sent, waited for.
	oldDeleting
)

// TestRenameKilled: a rename killed (SIGKILL) at each step boundary, and
// in the middle of its wait for the new package, on the real package
// manager. Black-box: the test watches the record the rename writes on
// the old package before each step (kubectl-xpkg.github.io/operation)
// and kills the process when it shows step k. Each time doctor names the
// state (unfinished-operation), the same command run again finishes it
// (or with --undo undoes it), nothing is lost (the CRDs and the
// ProviderConfigs keep their UIDs), and at no moment does the Lock hold
// two nodes for the source. Last, another writer unpauses the old
// package mid-rename: the rename stops at once, undoes, exits 4.
func TestRenameKilled(t *testing.T) {
	env, reg, c, x := start(t)
	const famRepoPath = "e2e/kill/provider-family-kill"
	famRepo := reg.Host + "/" + famRepoPath
	pushFamilyPackage(t, reg, famRepoPath, "v1.0.0", "", famCRD("kill.example.org", "ProviderConfig"), famCRD("kill.example.org", "ProviderConfigUsage"))
	pushFamilyPackage(t, reg, "e2e/kill/provider-kill-a", "v1.0.0", famRepo, famCRD("a.kill.example.org", "Bucket"))
	const (
		custom = "fam-kill"
		proper = "e2e-kill-provider-family-kill" // the resolver's name
		member = "e2e-kill-provider-kill-a"
	)
	pcs := schema.GroupVersionResource{Group: "kill.example.org", Version: "v1beta1", Resource: "providerconfigs"}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	t.Cleanup(func() {
		y := clitest.New(t).WithEnv(env)
		_ = c.dyn.Resource(pcs).Delete(context.Background(), "one", metav1.DeleteOptions{})
		y.Run("uninstall", "provider/"+member, "--force", "--yes", "--wait=2m")
		y.Run("uninstall", "provider/"+custom, "provider/"+proper, "--force", "--yes", "--wait=2m")
	})
	runningCrossplane(t)
	x.Run("install", famRepo+":v1.0.0", custom, "--wait=5m").Succeeds(t)
	x.Run("install", reg.Host+"/e2e/kill/provider-kill-a:v1.0.0", "--wait=5m").Succeeds(t)
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kill.example.org/v1beta1", "kind": "ProviderConfig",
		"metadata": map[string]any{"name": "one"}, "spec": map[string]any{"credentials": map[string]any{"source": "None"}}}}
	made, err := c.dyn.Resource(pcs).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]string{"providerconfig/one": string(made.GetUID())}
	for _, n := range []string{"providerconfigs.kill.example.org", "providerconfigusages.kill.example.org"} {
		uids["crd/"+n] = string(c.getAny(crds, n).GetUID())
	}
	var phase atomic.Value
	phase.Store("set-up")
	stopLock := c.watchLock(t, famRepo, &phase)
	defer stopLock()

	var cases []killCase
	for step := 1; step <= 5; step++ {
		cases = append(cases, killCase{name: fmt.Sprintf("step %d, undone", step), step: step, undo: true},
			killCase{name: fmt.Sprintf("step %d, finished", step), step: step})
	}
	cases = append(cases, killCase{name: "step 6, finished", step: 6},
		killCase{name: "mid-wait for the old package to let go, undone", step: 3, wait: oldInactive, undo: true},
		killCase{name: "mid-wait for the old package to let go, finished", step: 3, wait: oldInactive},
		killCase{name: "mid-wait for the new package, undone", step: 5, wait: newRevision, undo: true},
		killCase{name: "mid-wait for the new package, finished", step: 5, wait: newRevision},
		killCase{name: "mid-wait for the old package's deletion, finished", step: 6, wait: oldDeleting})
	for _, kc := range cases {
		t.Run(kc.name, func(t *testing.T) {
			phase.Store(kc.name)
			c := cluster{t: t, dyn: c.dyn}
			at := c.killRename(t, x, custom, proper, kc)
			r := x.Run("doctor", "-o", "json")
			t.Logf("killed at %s; doctor exit %d", at, r.ExitCode)
			if r.ExitCode != 3 || !strings.Contains(r.Stdout, `"unfinished-operation"`) || !strings.Contains(r.Stdout, "kubectl xpkg rename provider/"+custom+" "+proper+" --yes") {
				t.Errorf("doctor after a kill at %s: exit %d, want 3 naming the rename\n%s", at, r.ExitCode, r.Stdout)
			}
			c.saysHalfRenamed(t, x, r.Stdout, custom, proper)
			args := []string{"rename", "provider/" + custom, proper, "--yes"}
			if kc.undo {
				args = append(args, "--undo")
			}
			r = x.Run(args...)
			t.Logf("transcript:\n$ kubectl xpkg %s\n%s%s", strings.Join(args, " "), r.Stderr, r.Stdout)
			if r.ExitCode != 0 {
				t.Fatalf("rerun after a kill at %s: exit %d", at, r.ExitCode)
			}
			stays, goes := proper, custom
			if kc.undo {
				stays, goes = custom, proper
				contains(t, "rename --undo", r.Stdout, "undone")
			}
			c.waitGone("providers", goes)
			c.healthy("providers", stays)
			c.healthy("providers", member)
			if a := c.get("providers", stays).GetAnnotations(); a[installed.OperationAnnotation] != "" || a[installed.PausedAnnotation] != "" {
				t.Errorf("%s after the rerun: %v", stays, a)
			}
			c.sameUIDs(uids, crds, pcs)
			if r := x.Run("doctor", "-o", "json"); strings.Contains(r.Stdout, "unfinished-operation") || strings.Contains(r.Stdout, "duplicate-") {
				t.Errorf("doctor after the rerun:\n%s", r.Stdout)
			}
			if !kc.undo { // back to the custom name for the next case
				r := x.Run("rename", "provider/"+proper, custom, "--yes", "--force")
				if r.ExitCode != 0 {
					t.Fatalf("rename back: exit %d\n%s", r.ExitCode, r.Stderr)
				}
				c.healthy("providers", custom)
			}
		})
	}

	t.Run("another writer", func(t *testing.T) {
		// Another writer who unpauses the old package once the new one
		// runs makes the package manager put the old revision back in the
		// Lock beside the new one: the rename cannot stop that, only end
		// it (the undo takes the new revision out first).
		phase.Store(anotherWriter)
		c := cluster{t: t, dyn: c.dyn}
		run := x.Start("rename", "provider/"+custom, "--yes")
		c.waitStep(t, run, custom, 3)
		patch := []byte(`[{"op":"remove","path":"/metadata/annotations/crossplane.io~1paused"}]`)
		if _, err := c.dyn.Resource(gvr("providers")).Patch(context.Background(), custom, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		r := run.Wait()
		t.Logf("transcript:\n$ kubectl xpkg rename provider/%s --yes   # another writer unpauses it at step 3\n%s", custom, r.Stderr)
		if r.ExitCode != 4 || !strings.Contains(r.Stderr, "was unpaused") || !strings.Contains(r.Stderr, "undone") {
			t.Errorf("rename with another writer: exit %d, want 4 and undone", r.ExitCode)
		}
		t.Logf("stopped and undone %s after the unpause", time.Since(start).Round(time.Second))
		c.healthy("providers", custom)
		c.waitGone("providers", proper)
		c.sameUIDs(uids, crds, pcs)
		if got := c.lockEntries(famRepo); len(got) != 1 {
			t.Errorf("after the undo the Lock holds %v for %s, want one entry", got, famRepo)
		}
	})
}

// killRename starts the rename, waits for the record of step kc.step on
// the old package (and with kc.wait for the new package's revision), and
// kills it; it returns the step the record shows after the kill.
func (c cluster) killRename(t *testing.T, x *clitest.Test, custom, proper string, kc killCase) string {
	t.Helper()
	run := x.Start("rename", "provider/"+custom, "--yes")
	c.waitStep(t, run, custom, kc.step)
	for deadline := time.Now().Add(3 * time.Minute); !c.reached(kc.wait, custom, proper); time.Sleep(20 * time.Millisecond) {
		select {
		case <-run.Exited():
			r := run.Wait()
			t.Fatalf("the rename ended (exit %d) before the middle of step %d's wait:\n%s%s", r.ExitCode, kc.step, r.Stderr, r.Stdout)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rename never reached the middle of step %d's wait", kc.step)
		}
	}
	if err := run.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := run.Wait()
	at := "(no record)"
	for _, n := range []string{custom, proper} {
		if p := c.get("providers", n); p != nil {
			if op, _ := installed.ReadOperation(&installed.Package{Kind: "Provider", Name: n, Object: p}); op != nil {
				at = fmt.Sprintf("step %d (%s), recorded on provider/%s", op.Step, op.StepName, n)
				break
			}
		}
	}
	t.Logf("transcript (killed):\n$ kubectl xpkg rename provider/%s --yes\n%s", custom, r.Stderr)
	return at
}

// saysHalfRenamed checks that doctor (its JSON report) and get tell the
// state the kill left: two packages of one source, a paused package, and
// a paused package never shown healthy.
func (c cluster) saysHalfRenamed(t *testing.T, x *clitest.Test, report, custom, proper string) {
	t.Helper()
	oldPkg, newPkg := c.get("providers", custom), c.get("providers", proper)
	if oldPkg != nil && newPkg != nil && !strings.Contains(report, `"duplicate-package"`) {
		t.Errorf("doctor does not name the two packages of one source:\n%s", report)
	}
	for _, p := range []*unstructured.Unstructured{oldPkg, newPkg} {
		if p == nil || p.GetAnnotations()[installed.PausedAnnotation] != "true" {
			continue
		}
		if !strings.Contains(report, `"package-paused"`) {
			t.Errorf("doctor does not name the paused provider/%s:\n%s", p.GetName(), report)
		}
		r := x.Run("get", "providers", p.GetName(), "--no-headers").Succeeds(t)
		if f := strings.Fields(r.Stdout); len(f) < 6 || f[5] != "Paused" {
			t.Errorf("get of the paused provider/%s: %q, want HEALTHY Paused", p.GetName(), r.Stdout)
		}
	}
}

// reached says whether the rename is at the point w of its wait.
func (c cluster) reached(w midWait, custom, proper string) bool {
	switch w {
	case oldInactive:
		old := c.get("providers", custom)
		if old == nil {
			return true
		}
		rev, _, _ := unstructured.NestedString(old.Object, "status", "currentRevision")
		r := c.getRevision("providerrevisions", rev)
		if r == nil {
			return false
		}
		state, _, _ := unstructured.NestedString(r.Object, "spec", "desiredState")
		return state == "Inactive"
	case newRevision:
		p := c.get("providers", proper)
		if p == nil {
			return false
		}
		rev, _, _ := unstructured.NestedString(p.Object, "status", "currentRevision")
		return rev != ""
	case oldDeleting:
		old := c.get("providers", custom)
		return old == nil || old.GetDeletionTimestamp() != nil
	}
	return true
}

// waitStep watches the package until its record shows step (or later);
// the rename ending first fails the test with its transcript.
func (c cluster) waitStep(t *testing.T, run *clitest.Running, name string, step int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w, err := c.dyn.Resource(gvr("providers")).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for {
		var ev watch.Event
		select {
		case <-ctx.Done():
			// Bounded whether or not the watch stream notices the deadline.
			t.Fatalf("provider/%s did not record step %d within 5 minutes; the rename wrote so far:\n%s", name, step, run.Stderr())
		case <-run.Exited():
			r := run.Wait()
			t.Fatalf("the rename ended (exit %d) before provider/%s recorded step %d:\n%s%s", r.ExitCode, name, step, r.Stderr, r.Stdout)
		case e, open := <-w.ResultChan():
			if !open {
				t.Fatalf("provider/%s never recorded step %d (the watch ended)", name, step)
			}
			ev = e
		}
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || ev.Type == watch.Deleted {
			continue
		}
		var op installed.Operation
		if v := u.GetAnnotations()[installed.OperationAnnotation]; v != "" && json.Unmarshal([]byte(v), &op) == nil && op.Step >= step && !op.Undo {
			return
		}
	}
}

const anotherWriter = "another writer"

// watchLock checks, for as long as the test runs, that the Lock never
// holds two nodes for src but when another writer made them (phase);
// stop ends it and reports.
func (c cluster) watchLock(t *testing.T, src string, phase *atomic.Value) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		lock := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}
		for ctx.Err() == nil {
			if u, err := c.dyn.Resource(lock).Get(ctx, "lock", metav1.GetOptions{}); err == nil {
				var names []string
				pkgs, _, _ := unstructured.NestedSlice(u.Object, "packages")
				for _, p := range pkgs {
					if m, _ := p.(map[string]any); m["source"] == src {
						names = append(names, fmt.Sprint(m["name"]))
					}
				}
				if len(names) > 1 {
					mu.Lock()
					seen = append(seen, fmt.Sprintf("%s (%s)", strings.Join(names, ", "), phase.Load()))
					mu.Unlock()
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return func() {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		var ours []string
		for _, m := range seen {
			if !strings.HasSuffix(m, "("+anotherWriter+")") {
				ours = append(ours, m)
			}
		}
		t.Logf("the Lock held two nodes for %s at %d moments, all while another writer had unpaused the old package", src, len(seen)-len(ours))
		if len(ours) > 0 {
			t.Errorf("the Lock held two nodes for %s at %d moments: %s", src, len(ours), strings.Join(ours, "; "))
		}
	}
}

// getAny reads a cluster-scoped object.
func (c cluster) getAny(res schema.GroupVersionResource, name string) *unstructured.Unstructured {
	c.t.Helper()
	u, err := c.dyn.Resource(res).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return u
}

// sameUIDs checks that each object is the one it was.
func (c cluster) sameUIDs(uids map[string]string, crds, pcs schema.GroupVersionResource) {
	c.t.Helper()
	for key, uid := range uids {
		res, name := pcs, strings.TrimPrefix(key, "providerconfig/")
		if strings.HasPrefix(key, "crd/") {
			res, name = crds, strings.TrimPrefix(key, "crd/")
		}
		u, err := c.dyn.Resource(res).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || string(u.GetUID()) != uid {
			c.t.Errorf("%s is not the object it was (uid %s): %v", key, uid, err)
		}
	}
}

// waitGone waits until the package is gone (its deletion may still be
// under way when the command ends).
func (c cluster) waitGone(resource, name string) {
	c.t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); c.get(resource, name) != nil; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			c.t.Errorf("%s/%s still exists", resource, name)
			return
		}
	}
}
