package manifest

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// FuzzRead reads one file's bytes, as YAML and as JSON: it must never
// panic, every error must be one line, and every line it names must be in
// the file.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		configMap + "---\n" + providerA + "--- # c\n" + functionB,
		configC,
		"apiVersion: v1\nkind: List\nitems:\n" + item(providerA) + item(providerA) + "- 1\n",
		"\xef\xbb\xbf---\n...\n--- x\n" + providerA,
		"a: 1\nb: c: d\n---\nx: [\n",
		"{\"a\": [1, 2}\n",
		"- a\n- b\n",
		"a: &x [*x]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, isJSON := range []bool{false, true} {
			r := newReader(Options{MaxBytes: DefaultMaxBytes})
			r.readContent("f", data, isJSON)
			r.checkDuplicates()
			for _, err := range r.errs {
				msg := err.Error()
				if strings.ContainsAny(msg, "\r\n") {
					t.Errorf("error of several lines: %q", msg)
				}
				if n, ok := errorLine(msg); ok && (n < 1 || n > lines) {
					t.Errorf("error at line %d of a file of %d: %q", n, lines, msg)
				}
			}
			for _, o := range r.set.Packages {
				if o.GetName() == "" || o.Line < 1 || o.Line > lines {
					t.Errorf("package %q at line %d of a file of %d", o.GetName(), o.Line, lines)
				}
			}
		}
	})
}

// errorLine reads N from an error "f:N: …".
func errorLine(msg string) (int, bool) {
	rest, ok := strings.CutPrefix(msg, "f:")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil
}
