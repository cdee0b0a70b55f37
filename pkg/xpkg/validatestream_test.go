package xpkg

import (
	"strings"
	"testing"
)

// TestValidateStreamAgrees: on the real samples, one package after
// another as one stream, and on odd streams (documents of comments only,
// the meta object late or twice, a document that does not decode early,
// late or after comments, limits), ValidateStream says what Read and
// Validate say, errors included.
func TestValidateStreamAgrees(t *testing.T) {
	var all []string
	for _, d := range sampleDocuments(t) {
		all = append(all, string(d))
	}
	meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	bad := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [\n"
	streams := map[string]string{
		"samples":             strings.Join(all, "---\n"),
		"comments":            strings.Join([]string{"# c\n", meta, "# d\n", cm}, "---\n"),
		"meta late and twice": strings.Join([]string{cm, meta, "# x\n", meta}, "---\n"),
		"bad first":           strings.Join([]string{bad, meta}, "---\n"),
		"bad after comments":  strings.Join([]string{meta, "# c\n", "# d\n", cm, bad, cm}, "---\n"),
		"not a mapping":       strings.Join([]string{meta, "- a\n"}, "---\n"),
		"null document":       strings.Join([]string{meta, "null\n", cm}, "---\n"),
		"no meta":             cm,
	}
	for name, s := range streams {
		t.Run(name, func(t *testing.T) {
			p, err := Parse(strings.NewReader(s), DefaultLimits)
			sameAsStreamed(t, s, DefaultLimits, p, err)
		})
	}
	for name, l := range map[string]Limits{
		"too many documents": {MaxDocumentBytes: 1 << 20, MaxDocuments: 3},
		"a document too big": {MaxDocumentBytes: 100, MaxDocuments: 100},
	} {
		t.Run(name, func(t *testing.T) {
			s := strings.Join([]string{meta, "# c\n", cm, cm, cm + "data:\n  k: " + strings.Repeat("x", 200) + "\n"}, "---\n")
			p, err := Parse(strings.NewReader(s), l)
			if err == nil {
				t.Fatal("the limit did not apply")
			}
			sameAsStreamed(t, s, l, p, err)
		})
	}
}
