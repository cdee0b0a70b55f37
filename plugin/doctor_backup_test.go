package plugin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
)

// writes are the requests of the fake that change something.
func writes(x *cli) []string {
	var out []string
	for _, r := range x.Fake.Requests() {
		if !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}

// refusedBackup checks a doctor --fix refused for its --backup path: the
// usage exit code, one error line naming the path and the way out, and
// not one write to the cluster.
func refusedBackup(t *testing.T, x *cli, path, what string) {
	t.Helper()
	r := x.Run("doctor", "--fix", "--yes", "--backup", path, "--wait", "0s").Fails(t, exit.Usage)
	want := "error: the backup file " + path + " exists already (" + what + "): a backup never replaces anything; name a new file with --backup, or move it away; nothing was changed\n"
	if r.Stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.Stderr, want)
	}
	if w := writes(x); len(w) > 0 {
		t.Errorf("the cluster was changed: %v", w)
	}
}

// TestDoctorFixKeepsAnEarlierBackup: the second repair of a runbook,
// given the first one's backup file, refuses before it reads or changes
// anything, and the first repair's undo stays as it was.
func TestDoctorFixKeepsAnEarlierBackup(t *testing.T) {
	x := newCLI(t, twoRevisionsInTheLock()...)
	path := filepath.Join(t.TempDir(), "before-repair.yaml")
	earlier := []byte("apiVersion: pkg.crossplane.io/v1\nkind: FunctionRevision\nmetadata:\n  name: the-first-repair\n")
	if err := os.WriteFile(path, earlier, 0o600); err != nil {
		t.Fatal(err)
	}
	refusedBackup(t, x, path, "a file")
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, earlier) {
		t.Errorf("the earlier backup is now %q (%v)", got, err)
	}
	if r := x.Fake.Requests(); len(r) > 0 {
		t.Errorf("doctor read the cluster before refusing: %v", r)
	}
}

// TestDoctorFixRefusesABackupThatIsNoNewFile: a directory, a device and
// a symbolic link (to a file, or to nothing) are refused alike, and what
// a link points to is kept.
func TestDoctorFixRefusesABackupThatIsNoNewFile(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "config")
	content := []byte("apiVersion: v1\nkind: Config\n")
	if err := os.WriteFile(kubeconfig, content, 0o600); err != nil {
		t.Fatal(err)
	}
	link, dangling := filepath.Join(dir, "link.yaml"), filepath.Join(dir, "dangling.yaml")
	if err := os.Symlink(kubeconfig, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nothing"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, what string }{
		{"a directory", dir, "a directory"},
		{"a device", os.DevNull, "a device"},
		{"a link to a file", link, "a symbolic link"},
		{"a link to nothing", dangling, "a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path == os.DevNull && os.Geteuid() == 0 {
				// A doctor that wrongly took it would replace the machine's
				// /dev/null; pkg/extract's TestCheckNew covers the device.
				t.Skip("as root a regression would replace " + os.DevNull)
			}
			refusedBackup(t, newCLI(t, twoRevisionsInTheLock()...), tc.path, tc.what)
		})
	}
	if got, err := os.ReadFile(kubeconfig); err != nil || !bytes.Equal(got, content) {
		t.Errorf("the file a link points to is now %q (%v)", got, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nothing")); !os.IsNotExist(err) {
		t.Errorf("a dangling link's target was created (%v)", err)
	}
}

// TestDoctorFixWritesANewBackup: a new path gets the backup, and nothing
// else is left beside it.
func TestDoctorFixWritesANewBackup(t *testing.T) {
	x := newCLI(t, twoRevisionsInTheLock()...)
	dir := t.TempDir()
	path := filepath.Join(dir, "before-repair.yaml")
	r := x.Run("doctor", "--fix", "--yes", "--backup", path, "--wait", "0s")
	contains(t, "doctor --fix", r.Stderr, "to "+path+" (kubectl apply -f "+path+" puts them back)")
	saved, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "backup", string(saved), "kind: FunctionRevision", "name: doctor-fn-aaa")
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("beside the backup: %v", entries)
	}
}
