//go:build linux

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
)

// TestMirrorIntoAFullLayout: a layout whose disk fills up midway (a file
// size limit makes writes past 64 KiB fail, as a full disk does) leaves
// the package that did not fit unreported and unnamed, no blob file
// holding other than its name says, and a run again finishes the job.
func TestMirrorIntoAFullLayout(t *testing.T) {
	s := newMirrorSetup(t)
	layout := filepath.Join(t.TempDir(), "layout")
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skipf("no file size limit here: %v", err)
	}
	small := old
	small.Cur = 64 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &small); err != nil {
		t.Skipf("cannot lower the file size limit: %v", err)
	}
	run := s.x.Start("mirror", s.root, "--to-layout", layout) // the child keeps the limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	r := run.Wait()
	if r.ExitCode != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "Not mirrored: "+s.deps[1]) || !strings.Contains(r.Stderr, "file too large") {
		t.Errorf("into a full layout: exit %d\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	checkLayoutBlobs(t, layout)
	entries, _ := ocicopy.ReadLayout(layout)
	for _, e := range entries {
		if e.RefName == s.deps[1] || !strings.Contains(r.Stderr, "Mirrored "+e.RefName+" ") {
			t.Errorf("the layout names %s, which was not reported mirrored", e.RefName)
		}
	}
	r = s.x.Run("mirror", s.root, "--to-layout", layout).Succeeds(t)
	checkLayoutBlobs(t, layout)
	if entries, err := ocicopy.ReadLayout(layout); err != nil || len(entries) != 2 {
		t.Errorf("the layout after a run again: %v %+v\n%s", err, entries, r.Stderr)
	}
}
