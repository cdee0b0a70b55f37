package legacy

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var update = flag.Bool("update", false, "rewrite testdata/sample.golden.yaml")

// TestWriteYAMLGolden writes the sample as one stream, the Package record
// first, and compares it with the reviewed output in testdata.
func TestWriteYAMLGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := translateSample(t).WriteYAML(&buf); err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/sample.golden.yaml"
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("WriteYAML output differs from %s (run go test -update to accept):\n%s", golden, buf.String())
	}
	docs := strings.Split(buf.String(), "\n---\n")
	if len(docs) != 4 || !strings.Contains(docs[0], "kind: Package\n") {
		t.Errorf("want the Package record then 3 CRDs, got %d documents", len(docs))
	}
}

// TestWriteYAMLDeterministic translates and writes the sample repeatedly;
// map iteration order must never show in the bytes.
func TestWriteYAMLDeterministic(t *testing.T) {
	var first []byte
	for i := range 10 {
		var buf bytes.Buffer
		if err := translateSample(t).WriteYAML(&buf); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = buf.Bytes()
		} else if !bytes.Equal(first, buf.Bytes()) {
			t.Fatalf("run %d wrote different bytes", i)
		}
	}
}

func TestWriteYAMLRefusesIncompleteResult(t *testing.T) {
	var buf bytes.Buffer
	if err := (&Result{}).WriteYAML(&buf); err == nil {
		t.Error("no error for a result without a Package")
	}
	pkg := &unstructured.Unstructured{Object: map[string]any{"kind": "Package"}}
	if err := (&Result{Package: pkg, CRDs: []*unstructured.Unstructured{nil}}).WriteYAML(&buf); err == nil {
		t.Error("no error for a nil CRD")
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %d bytes for a result it refused", buf.Len())
	}
}
