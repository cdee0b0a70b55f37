package source_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// joined is how a package build joins a directory's files: each file's
// leading "---" line dropped, "---" between files, and a final newline
// added to a file that lacks one.
func joined(files ...[]byte) []byte {
	var buf bytes.Buffer
	for _, doc := range files {
		doc = bytes.TrimPrefix(doc, []byte("---\n"))
		if buf.Len() > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(doc)
		if len(doc) > 0 && !bytes.HasSuffix(doc, []byte("\n")) {
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes()
}

// TestDirStreamReadsFileByFile: a package directory read as a stream,
// file by file, is the files joined as a package build joins them,
// whatever their first and last lines, and at any read size.
func TestDirStreamReadsFileByFile(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		source.MetaFile:   "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p", // no final newline
		"a.yaml":          "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"b/empty.yaml":    "",
		"b/sep.yaml":      "---\n",
		"c.yml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d",
		"examples/x.yaml": "skipped: true\n",
		"notes.txt":       "skipped\n",
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := joined([]byte(files[source.MetaFile]), []byte(files["a.yaml"]), []byte(files["b/empty.yaml"]), []byte(files["b/sep.yaml"]), []byte(files["c.yml"]))
	for _, size := range []int{1, 3, 4096} {
		r, err := source.OpenDirStream(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		buf := make([]byte, size)
		for {
			n, err := r.Read(buf)
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("reads of %d bytes:\n%q\nwant\n%q", size, got.Bytes(), want)
		}
	}
	// The real samples: one package is one stream, as before.
	for _, v := range []string{"v0.50.0", "v0.58.0"} {
		sample := filepath.Join("..", "..", "hack", "testdata", "packages", "provider-aws", v)
		got, err := source.DirStream(sample)
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := filepath.Glob(filepath.Join(sample, "*.yaml"))
		if len(got) < 5<<20 || len(entries) == 0 {
			t.Errorf("%s: %d bytes from %d files", sample, len(got), len(entries))
		}
	}
}

// TestDirLinksAndSpecialFiles: a YAML file linked to a regular file inside
// the directory is read, as a package build reads it; a link that leads
// outside, and a named pipe (whose read would block), are left out, and
// the package's notes name them.
func TestDirLinksAndSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n"
	shared := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n"
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	for path, body := range map[string]string{source.MetaFile: meta, "shared.txt": shared, outside: "secret: yes\n"} {
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("shared.txt", filepath.Join(dir, "a-linked.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "b-outside.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "c-pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := source.Open(context.Background(), dir, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(p.Stream())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if want := joined([]byte(meta), []byte(shared)); !bytes.Equal(got, want) {
		t.Errorf("stream:\n%s\nwant:\n%s", got, want)
	}
	const note = "left out 2 YAML files that are no regular files: b-outside.yaml (a symbolic link that leads outside the directory, nowhere or to no regular file), c-pipe.yaml (a named pipe)"
	if len(p.Notes) != 1 || p.Notes[0] != note {
		t.Errorf("notes %q; want %q", p.Notes, note)
	}
}
