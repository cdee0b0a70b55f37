package diff

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
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

// indexedPair compares a real pair as the diff verb does: each package
// indexed as a stream, then CompareIndexed.
func indexedPair(t *testing.T, name, oldTag, newTag string) (*Report, error) {
	t.Helper()
	return CompareIndexed(indexReal(t, name, oldTag), indexReal(t, name, newTag))
}

// TestIndexedReportsArePinned: compared as streams, every real sample
// pair, both ways, reports byte for byte what the in-memory comparison
// reported (testdata/reports).
func TestIndexedReportsArePinned(t *testing.T) {
	for _, p := range samplePairs {
		for _, way := range [][2]string{{p[1], p[2]}, {p[2], p[1]}} {
			t.Run(p[0]+"/"+way[0]+".."+way[1], func(t *testing.T) {
				r, err := indexedPair(t, p[0], way[0], way[1])
				if err != nil {
					t.Fatal(err)
				}
				got := pinnedReport(t, r)
				path := pinnedPath(p[0], way[0], way[1])
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

// TestIndexedAgreesOnOddStreams: on streams that exercise every corner
// of matching (keys written twice, documents of comments only, the meta
// object late or twice, headers only a parse can read, documents that
// move, documents that do not decode on either side or both), the
// streamed comparison reports what the in-memory one reports, or fails
// with the same error.
func TestIndexedAgreesOnOddStreams(t *testing.T) {
	const meta = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n"
	cm := func(name, data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  k: " + data + "\n"
	}
	flow := func(name, data string) string {
		return "{apiVersion: v1, kind: ConfigMap, metadata: {name: " + name + "}, data: {k: " + data + "}}\n"
	}
	const bad = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  x: [\n"
	// Its header reads without a parse; the rest does not decode.
	const badBody = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad-body\ndata:\n  a: b: c\n"
	join := func(docs ...string) string { return strings.Join(docs, "---\n") }
	cases := []struct{ name, old, new string }{
		{"same", join(meta, cm("a", "1")), join(meta, cm("a", "1"))},
		{"changed, added, removed", join(meta, cm("a", "1"), cm("b", "1")), join(meta, cm("a", "2"), cm("c", "1"))},
		{"a key twice", join(meta, cm("a", "1"), cm("a", "2")), join(meta, cm("a", "2"), cm("a", "3"))},
		{"comments only", join(meta, "# nothing\n", cm("a", "1")), join("# x\n", meta, cm("a", "1"))},
		{"meta late and twice", join(cm("a", "1"), meta), join(cm("a", "1"), strings.Replace(meta, "name: p", "name: q", 1), meta)},
		{"no meta", cm("a", "1"), join(meta, cm("a", "1"))},
		{"flow style", join(meta, flow("a", "1"), flow("b", "1")), join(meta, flow("a", "2"), cm("b", "1"))},
		{"moved", join(meta, cm("a", "1"), cm("b", "1")), join(meta, cm("b", "1"), cm("a", "1"))},
		{"bad in old", join(meta, bad, cm("a", "1")), join(meta, cm("a", "1"))},
		{"bad in new", join(meta, cm("a", "1")), join(meta, cm("a", "2"), bad)},
		{"bad in both", join(meta, cm("a", "1"), bad), join(bad, meta, cm("a", "1"))},
		{"bad and identical", join(meta, bad), join(meta, bad)},
		{"bad body and identical", join(meta, cm("a", "1"), badBody), join(meta, cm("a", "2"), badBody)},
		{"bad body only new", join(meta, cm("a", "1")), join(meta, badBody, cm("a", "1"))},
		{"bad body, a key twice", join(meta, badBody, strings.Replace(badBody, "a: b: c", "a: b", 1)), join(meta, strings.Replace(badBody, "a: b: c", "a: b", 1))},
		{"bad meta", join(strings.Replace(meta, "name: p", "name: [", 1), cm("a", "1")), join(meta, cm("a", "1"))},
		{"not a mapping", join(meta, "- a\n- b\n"), join(meta, cm("a", "1"))},
	}
	errored := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []byte
			var wantErr error
			od, err1 := xpkg.Split(strings.NewReader(c.old), xpkg.DefaultLimits)
			nd, err2 := xpkg.Split(strings.NewReader(c.new), xpkg.DefaultLimits)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			o, n, err := Parse(od, nd, xpkg.DefaultLimits)
			if err != nil {
				wantErr = err
				errored++
			} else {
				want = pinnedReport(t, Compare(o, n))
			}
			var x [2]*Indexed
			for i, s := range []string{c.old, c.new} {
				var err error
				if x[i], err = Index(strings.NewReader(s), xpkg.DefaultLimits); err != nil {
					t.Fatal(err)
				}
				defer x[i].Close()
			}
			r, err := CompareIndexed(x[0], x[1])
			switch {
			case wantErr != nil:
				if err == nil || err.Error() != wantErr.Error() {
					t.Errorf("error %v, want %v", err, wantErr)
				}
			case err != nil:
				t.Errorf("error %v, want the report", err)
			default:
				if got := pinnedReport(t, r); !bytes.Equal(got, want) {
					t.Errorf("report:\n%s\nwant:\n%s", got, want)
				}
				checkAgainstReference(t, o, n, &[2]Definitions{x[0].Definitions(), x[1].Definitions()})
				checkMeta(t, x[0].Meta(), o.Meta)
				checkMeta(t, x[1].Meta(), n.Meta)
			}
		})
	}
	if errored != 9 {
		t.Errorf("%d of the %d cases failed to parse, want the 9 bad ones", errored, len(cases))
	}
}
