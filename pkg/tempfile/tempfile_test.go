package tempfile

import (
	"io"
	"os"
	"testing"
)

// TestUnlinkedLeavesNothing: the file works, and no name of it is left in
// the temporary directory, even while it is open.
func TestUnlinkedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	f, err := Unlinked("x-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in the directory while open: %v", left)
	}
	if _, err := f.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(f); err != nil || string(b) != "hello" {
		t.Errorf("read back %q, %v", b, err)
	}
}
