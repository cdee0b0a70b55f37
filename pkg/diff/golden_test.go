package diff

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "write the pinned reports of the real sample pairs")

// samplePairs are every real sample pair (hack/testdata/packages), both
// ways: an upgrade and the rollback that undoes it.
var samplePairs = [][3]string{
	{"provider-nop", "v0.2.1", "v0.4.0"},
	{"provider-kubernetes", "v0.18.0", "v1.0.0"},
	{"provider-helm", "v1.3.0", "v1.4.0"},
	{"provider-aws", "v0.50.0", "v0.58.0"},
	{"configuration-aws-network", "v0.21.0", "v0.23.0"},
	{"function-patch-and-transform", "v0.9.0", "v0.10.8"},
}

// pinnedReport is a report as JSON and as text (with --stat and without),
// in one file: what the diff verb prints.
func pinnedReport(t *testing.T, r *Report) []byte {
	t.Helper()
	var b bytes.Buffer
	j, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b.Write(j)
	b.WriteString("\n")
	for _, stat := range []bool{false, true} {
		if err := WriteText(&b, r, TextOptions{Stat: stat}); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func pinnedPath(name, from, to string) string {
	return filepath.Join("testdata", "reports", name+"_"+from+"_"+to+".txt")
}

// TestReportsArePinned: the report of every real sample pair, both ways,
// is what the diff verb printed before it read packages as streams (the
// files under testdata/reports were written by the in-memory comparison,
// with -update).
func TestReportsArePinned(t *testing.T) {
	for _, p := range samplePairs {
		for _, way := range [][2]string{{p[1], p[2]}, {p[2], p[1]}} {
			t.Run(p[0]+"/"+way[0]+".."+way[1], func(t *testing.T) {
				got := pinnedReport(t, realPair(t, p[0], way[0], way[1]))
				path := pinnedPath(p[0], way[0], way[1])
				if *update {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("the report differs from %s (%d bytes, want %d)", path, len(got), len(want))
				}
			})
		}
	}
}
