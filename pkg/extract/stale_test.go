//go:build unix

package extract

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestStaleStagingIsRemoved: a run killed while it wrote (SIGKILL: no
// clean-up ran) leaves its hidden staging directory or file beside the
// target; the next run for that target removes it, and leaves alone what
// a running process is writing.
func TestStaleStagingIsRemoved(t *testing.T) {
	// A process that has ended: its ID names no running process.
	done := exec.Command(os.Args[0], "-test.run=^$")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	dead, alive := strconv.Itoa(done.Process.Pid), strconv.Itoa(os.Getppid())
	parent := t.TempDir()
	target := filepath.Join(parent, "out")
	for _, name := range []string{".out.tmp-" + dead + "-1", ".out.tmp-" + alive + "-2", ".other.tmp-" + dead + "-3"} {
		if err := os.MkdirAll(filepath.Join(parent, name, "crds"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(parent, ".out.tmp-"+dead+"-4"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := CreateDir(target)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	for name, want := range map[string]bool{
		".out.tmp-" + dead + "-1": false, ".out.tmp-" + dead + "-4": false, // a killed run's: removed
		".out.tmp-" + alive + "-2":  true, // a running process's
		".other.tmp-" + dead + "-3": true, // another target's
	} {
		if _, err := os.Stat(filepath.Join(parent, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
}
