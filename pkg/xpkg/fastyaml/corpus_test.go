package fastyaml_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg/fastyaml"
)

// packages holds real package sources (see hack/testdata/README.md).
const packages = "../../../hack/testdata/packages"

// splitDocs splits a YAML stream the way package streams are split.
func splitDocs(tb testing.TB, stream []byte) [][]byte {
	tb.Helper()
	d := xpkg.NewDecoder(bytes.NewReader(stream), xpkg.Limits{})
	var docs [][]byte
	for {
		raw, err := d.NextRaw()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, raw)
	}
}

// yamlFiles returns the YAML files under dir in lexical order; skip names
// directories to leave out.
func yamlFiles(tb testing.TB, dir string, skip ...string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, s := range skip {
			if e.IsDir() && e.Name() == s {
				return filepath.SkipDir
			}
		}
		if ext := filepath.Ext(path); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

func corpusDocs(tb testing.TB) map[string][][]byte {
	tb.Helper()
	docs := map[string][][]byte{}
	for _, f := range yamlFiles(tb, packages) {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		docs[f] = splitDocs(tb, b)
	}
	return docs
}

// TestDecodeCorpus compares Decode with sigs.k8s.io/yaml on every document
// of the real packages and requires the fast path for almost all of them.
func TestDecodeCorpus(t *testing.T) {
	var total, fast, docs, fastDocs int
	for f, ds := range corpusDocs(t) {
		for i, doc := range ds {
			ok, err := check(doc)
			if err != nil {
				t.Errorf("%s document %d: %v", f, i, err)
			}
			total += len(doc)
			docs++
			if ok {
				fast += len(doc)
				fastDocs++
			} else {
				t.Logf("%s document %d: slow path", f, i)
			}
		}
	}
	frac := float64(fast) / float64(total)
	t.Logf("fast path: %d of %d documents, %d of %d bytes (%.4f%%)", fastDocs, docs, fast, total, 100*frac)
	if docs < 400 {
		t.Errorf("only %d documents under %s", docs, packages)
	}
	if frac < 0.99 {
		t.Errorf("fast path for only %.2f%% of the bytes, want at least 99%%", 100*frac)
	}
}

// awsStream is provider-aws v0.58.0's package stream, split into
// documents.
func awsStream(tb testing.TB) [][]byte {
	tb.Helper()
	var stream []byte
	for _, f := range yamlFiles(tb, packages+"/provider-aws/v0.58.0", "examples") {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		stream = append(append(stream, "---\n"...), b...)
	}
	return splitDocs(tb, stream)
}

func BenchmarkDecodeProviderAWS(b *testing.B) {
	docs := awsStream(b)
	var size int64
	for _, d := range docs {
		size += int64(len(d))
	}
	b.Run("fastyaml", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, d := range docs {
				if _, ok := fastyaml.Decode(d); !ok {
					b.Fatalf("slow path for %.60q", d)
				}
			}
		}
	})
	b.Run("sigs.k8s.io-yaml", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, d := range docs {
				var v any
				if err := yaml.Unmarshal(d, &v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// FuzzDecode checks that Decode never panics and never takes the fast
// path with a value sigs.k8s.io/yaml would not give.
func FuzzDecode(f *testing.F) {
	for _, c := range tableCases {
		f.Add([]byte(c.doc))
	}
	for _, ds := range corpusDocs(f) {
		for _, d := range ds {
			if len(d) < 4<<10 && strings.Contains(string(d), "\n") {
				f.Add(d)
			}
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if _, err := check(doc); err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
	})
}
