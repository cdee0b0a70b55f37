//go:build unix

package extract

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestOutputFollowsTheUmask: files and directories extract writes get the
// mode a plain create would give them under the user's umask, not a fixed
// 0644/0755.
func TestOutputFollowsTheUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	umaskOnce = sync.Once{} // read the umask set here
	dir := t.TempDir()

	f, err := CreateFile(filepath.Join(dir, "out.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("a: 1\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	d, err := CreateDir(filepath.Join(dir, "split"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Split(d, strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{
		filepath.Join(dir, "out.yaml"):                  0o640,
		filepath.Join(dir, "split"):                     0o750 | os.ModeDir,
		filepath.Join(dir, "split", "configmap_x.yaml"): 0o640,
	} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, st.Mode(), want)
		}
	}
}
