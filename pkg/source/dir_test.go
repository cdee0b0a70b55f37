package source_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
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
