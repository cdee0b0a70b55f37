package xpkg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sampleDocuments is every document of the real sample packages
// (hack/testdata/packages), each package's files in turn.
func sampleDocuments(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	root := filepath.Join("..", "..", "hack", "testdata", "packages")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		docs, err := Split(strings.NewReader(string(b)), DefaultLimits)
		if err != nil {
			return err
		}
		out = append(out, docs...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// agrees checks that a header ReadHeader gives is what decoding says. A
// document that does not decode fails where it is parsed, header or not.
func agrees(t *testing.T, raw []byte) (read bool) {
	t.Helper()
	h, ok := ReadHeader(raw)
	if !ok {
		return false
	}
	o, err := DecodeDocument(0, raw, DefaultLimits)
	if err != nil {
		return true
	}
	if o == nil || o.GVK() != h.GVK() || o.Name() != h.Name || IsMeta(o) != h.IsMeta() {
		t.Fatalf("ReadHeader read %+v, decoding %v (%v) %q:\n%s", h, o, o.GVK(), o.Name(), raw)
	}
	return true
}

// TestReadHeaderAgreesWithDecoding: on every document of the real sample
// packages the header is read without parsing, and says what decoding
// says.
func TestReadHeaderAgreesWithDecoding(t *testing.T) {
	docs := sampleDocuments(t)
	read := 0
	for _, d := range docs {
		if agrees(t, d) {
			read++
		}
	}
	if len(docs) < 400 || read != len(docs) {
		t.Errorf("read the header of %d of %d documents without parsing", read, len(docs))
	}
}

// TestReadHeaderDeclines: what a line scan cannot be sure of is left to
// the parser.
func TestReadHeaderDeclines(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"apiVersion: v1\nkind: \"ConfigMap\"\nmetadata:\n  name: a\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n    b\n",          // a name over two lines
		"apiVersion: v1\nkind: ConfigMap\n  Map\nmetadata:\n  name: a\n",          // a kind over two lines
		"apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata:\n  name: a\n",   // a key twice
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",      // a name twice
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: true\n",              // no string
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 0x1f\n",              // no string
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # comment\n",       // a comment
		"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n",         // CRLF
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n",                 // a tab
		"apiVersion: v1\nkind: ConfigMap\n<<: *base\nmetadata:\n  name: a\n",      // a merge key
		"apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: a\n",              // an anchor
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: a\n  labels: {}\n", // uneven indentation
		"- apiVersion: v1\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    name: a\n", // no name of its own
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n- name: a\n",              // a sequence
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nkind:\n- x\n",  // kind twice
		"# only a comment\n",
	} {
		if h, ok := ReadHeader([]byte(doc)); ok {
			t.Errorf("ReadHeader read %+v of\n%s", h, doc)
		}
	}
	h, ok := ReadHeader([]byte("# c\napiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  annotations:\n    name: not-this\n  name: provider-nop\nspec:\n  name: nor-this\n"))
	if !ok || h != (Header{"meta.pkg.crossplane.io/v1", "Provider", "provider-nop"}) || !h.IsMeta() {
		t.Errorf("ReadHeader = %+v, %v", h, ok)
	}
}

// FuzzReadHeader: whatever ReadHeader reads is what decoding says.
func FuzzReadHeader(f *testing.F) {
	for _, d := range sampleDocuments(f) {
		if len(d) < 2<<10 {
			f.Add(d)
		}
	}
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, ok := ReadHeader(raw); ok {
			agrees(t, raw)
		}
	})
}
