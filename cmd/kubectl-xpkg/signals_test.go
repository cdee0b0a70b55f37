package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/faultproxy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
)

// waitBound bounds a test's wait for something the system does by itself:
// generous, since it only runs out when something is broken, never on a
// loaded machine that is merely slow.
const waitBound = 2 * time.Minute

// eventually polls cond for up to waitBound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(waitBound); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within %s", what, waitBound)
}

// leftovers are the files in dir besides the ones named.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestInterruptedExtractLeavesNothing: Ctrl-C or SIGTERM while the layer
// is being read (the registry stalls mid-blob) stops extract at once,
// removes the temporary file or directory, and exits 130, 143 or 129
// (SIGHUP).
func TestInterruptedExtractLeavesNothing(t *testing.T) {
	p, ref, x := behindProxy(t)
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		out  string
		code int
	}{
		{"SIGINT, -o FILE", syscall.SIGINT, "out.yaml", 130},
		{"SIGTERM, -o DIR/", syscall.SIGTERM, "out/", 143},
		// The terminal closed: kubectl's interrupt handler takes SIGHUP too.
		{"SIGHUP, -o FILE", syscall.SIGHUP, "out.yaml", 129},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p.Clear()
			// The blob stalls far longer than the bound below: stopping
			// within it means the signal, not the stall's end, stopped it.
			p.Add(faultproxy.Fault{Match: "/blobs/", StallAfter: 64 << 10, Stall: 10 * time.Minute})
			run := x.Start("extract", ref, "-o", filepath.Join(dir, c.out))
			eventually(t, "a temporary output and the stalled blob", func() bool {
				return p.Count("/blobs/") > 0 && len(leftovers(t, dir)) > 0
			})
			start := time.Now()
			if err := run.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			r := run.Wait()
			if r.ExitCode != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.ExitCode, c.code, r.Stderr)
			}
			if took := time.Since(start); took > waitBound {
				t.Errorf("took %s to stop", took)
			}
			if left := leftovers(t, dir); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			if !strings.Contains(r.Stderr, "error: interrupted by "+map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[c.sig]) {
				t.Errorf("stderr: %s", r.Stderr)
			}
		})
	}
}

// TestInterruptedWaitSaysWhatIsLeft: Ctrl-C during install --wait stops
// waiting, says the package stays as it is, and exits 130.
func TestInterruptedWaitSaysWhatIsLeft(t *testing.T) {
	l := newLifecycle(t)
	ref, _ := pushSample(t, l.env, "provider-nop", "v0.4.0")
	const name = "interrupted-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{Unhealthy: true})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name, "--force", "--yes") })
	run := x.Start("install", "provider", ref, name, "--wait=5m")
	eventually(t, "the wait sees the package not healthy", func() bool {
		return strings.Contains(run.Stderr(), "provider/"+name+": Healthy=False")
	})
	if err := run.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := run.Wait()
	if r.ExitCode != 130 {
		t.Errorf("exit %d, want 130; stderr:\n%s", r.ExitCode, r.Stderr)
	}
	contains(t, "stderr", r.Stderr, "error: interrupted by SIGINT", "stopped; nothing more is changed")
	t.Logf("stderr:\n%s", r.Stderr)
	if !l.providerExists(t, name) {
		t.Error("the interrupted install removed the package")
	}
}
