//go:build unix

package manifest

import (
	"path/filepath"
	"syscall"
	"testing"
)

// A pipe left in a directory would block a reader forever: it is refused,
// and the directory's other files are still read.
func TestReadDirectoryWithPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	_, err := Read([]string{dir}, Options{})
	want := filepath.Join(dir, "pipe.yaml") + ": not a regular file; name it with -f to read it anyway"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}
