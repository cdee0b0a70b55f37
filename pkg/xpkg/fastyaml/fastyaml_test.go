package fastyaml_test

import (
	"fmt"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg/fastyaml"
)

// oracle is the decoder fastyaml must agree with.
func oracle(doc []byte) (any, error) {
	var v any
	err := yaml.Unmarshal(doc, &v)
	return v, err
}

// check compares Decode with the oracle: a fast result must equal the
// oracle's, and the oracle must have succeeded.
func check(doc []byte) (fast bool, err error) {
	got, ok := fastyaml.Decode(doc)
	if !ok {
		return false, nil
	}
	want, werr := oracle(doc)
	if werr != nil {
		return true, fmt.Errorf("Decode = %#v, but sigs.k8s.io/yaml fails: %v", got, werr)
	}
	if path := diff(got, want, "$"); path != "" {
		return true, fmt.Errorf("Decode and sigs.k8s.io/yaml differ at %s", path)
	}
	return true, nil
}

// diff describes where a and b first differ, or returns "" if they are
// deeply equal.
func diff(a, b any, path string) string {
	if reflect.DeepEqual(a, b) {
		return ""
	}
	switch a := a.(type) {
	case map[string]any:
		if b, ok := b.(map[string]any); ok && len(a) == len(b) {
			for k, v := range a {
				if d := diff(v, b[k], path+"."+k); d != "" {
					return d
				}
			}
		}
	case []any:
		if b, ok := b.([]any); ok && len(a) == len(b) {
			for i := range a {
				if d := diff(a[i], b[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
					return d
				}
			}
		}
	}
	return fmt.Sprintf("%s: %#v != %#v", path, a, b)
}

// tableCases are tricky documents; fast says whether Decode must take them.
var tableCases = []struct {
	name, doc string
	fast      bool
}{
	// Structure.
	{"empty", "", true},
	{"comments only", "# a\n  # b\n\n", true},
	{"mapping", "a: 1\nb: two\n", true},
	{"nested mapping", "a:\n  b:\n    c: d\n  e: f\ng: h\n", true},
	{"no final newline", "a:\n  b: c", true},
	{"indented top level", "  a: 1\n  b: 2\n", true},
	{"compact sequence", "required:\n- a\n- b\nnext: 1\n", true},
	{"nested compact sequence", "a:\n  b:\n  - x\n  - y\n  c: 1\n", true},
	{"indented sequence", "l:\n  - a\n  -   b\n", true},
	{"mappings in sequence", "l:\n- a: 1\n  b: 2\n-   c: 3\n    d: [] # empty\n", true},
	{"nested sequences", "- - a\n  - b\n- -\n  - c\n", true},
	{"empty entries", "-\n- \n-   # c\n- a\n", true},
	{"empty values", "a:\nb: # c\nc:\n", true},
	{"value on next line", "a:\n  text\n  more\nb:\n    'q'\n", true},
	{"entry value on next line", "-\n  a: 1\n-\n  - b\n", true},
	{"empty flow", "a: []\nb: {}\nc:\n- []\n- {}\n", true},
	{"top-level scalar", "hello\n", true},
	{"top-level number", "12\n", true},
	{"top-level sequence", "- 1\n- 2\n", true},
	{"quoted keys", "'a b': 1\n\"c:d\" : 2\n'': 3\n", true},
	{"key with spaces before colon", "a   : b\n", true},
	{"key with colon and hash", "a:b#c: d\nhttp://x: y\n", true},
	{"comment after key", "a: # c\n  b: 1\n", true},
	{"comment lines between", "a:\n# c\n  # d\n  b: 1\n\n# e\nc: 2\n", true},
	{"deep", "a:\n b:\n  c:\n   d:\n    - e:\n       f: g\n", true},

	// Plain scalars.
	{"multi-line plain", "a: one\n  two\n\n  three\n\n\n  four   \nb: x\n", true},
	{"multi-line plain entry", "- one\n  two\n- three\n   four\n", true},
	{"plain ends at comment", "a: one # two\nb: x#y\n", true},
	{"plain ends at comment line", "a: one\n  # c\nb: 1\n", true},
	{"plain continuation with dash", "a: one\n  - two\n", true},
	{"plain with inner spaces", "a: one   two  \n", true},
	{"plain at shallow continuation", "a:\n  one\n two\n", true},
	{"plain with indicators inside", "a: b [c] {d} 'e' \"f\" g: h\n", false},
	{"plain with indicators inside ok", "a: b [c] {d} 'e' \"f\" g:h, i?\n", true},
	{"plain dash start", "a: -b\nc: --d\n", true},

	// Resolution.
	{"bools", "a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: N\ng: True\nh: false\ni: yES\n", true},
	{"nulls", "a: ~\nb: null\nc: Null\nd: NULL\ne: nUll\n", true},
	{"ints", "a: 1\nb: -2\nc: +3\nd: 0755\ne: 0x1F\nf: 0o17\ng: 1_000\nh: 0b101\ni: -0b11\nj: 08\nk: 0b-1\n", true},
	{"big ints", "a: 9223372036854775807\nb: 9223372036854775808\nc: 18446744073709551615\nd: 18446744073709551616\ne: -9223372036854775809\n", true},
	{"floats", "a: 1.5\nb: .5\nc: -.5\nd: 1e3\ne: 1.e3\nf: 6.02E+23\ng: 1_0.5\nh: 1e400\ni: 0.1\nj: -0.0\n", true},
	{"not numbers", "a: 1.2.3\nb: 1-2\nc: 0x\nd: +\ne: .\nf: 1e\ng: _1\nh: 2001-12-14\ni: 2001-12-14t21:59:43.10-05:00\nj: 12:30\n", true},
	{"timestamps stay strings", "a: 2001-12-14 21:59:43.10\nb: 2002-12-14\n", true},
	{"inf", "a: .inf\n", false},
	{"neg inf", "a: -.Inf\n", false},
	{"nan", "a: .NaN\n", false},
	{"merge-looking value", "a: <<\n", true},

	// Keys that are not strings.
	{"int keys", "1: a\n0x10: b\n-3: c\n", true},
	{"bool keys", "yes: a\noff: b\n", true},
	{"null key", "~: a\n", false},
	{"float key", "1.5: a\n", false},
	{"uint key", "18446744073709551615: a\n", false},
	{"merge key", "<<: {}\n", false},
	{"quoted merge key", "'<<': a\n", true},
	{"colliding keys", "yes: a\n'true': b\n", false},
	{"duplicate keys", "a: 1\na: 2\n", false},

	// Quoted scalars.
	{"single quoted", "a: 'it''s'\nb: ''\nc: ' x  '\n", true},
	{"single quoted folding", "a: 'one\n  two\n\n  three   \n   four'\n", true},
	{"double quoted escapes", `a: "\t\n\\\"\0\a\b\v\f\r\e\ \N\_\L\P\x41\u00e9\U0001F600'"` + "\n", true},
	{"double quoted folding", "a: \"one \\\n  two\n\n  three\\\n\n  four\"\n", true},
	{"double quoted trailing escaped space", "a: \"one\\ \n  two\"\n", true},
	{"slash escape", `a: "\/"` + "\n", false},
	{"surrogate escape", `a: "\ud800"` + "\n", false},
	{"bad escape", `a: "\q"` + "\n", false},
	{"quoted then comment", "a: 'b' # c\nd: \"e\" # f\n", true},
	{"quoted then junk", "a: 'b' c\n", false},
	{"quoted then hash", "a: 'b'#c\n", false},
	{"unterminated", "a: 'b\n", false},
	{"quoted continuation too shallow", "a:\n  b: 'c\n  d'\n", false},
	{"multi-line quoted key", "'a\n b': c\n", false},
	{"quoted number is a string", "a: '1'\nb: \"true\"\n", true},

	// Block scalars.
	{"literal", "a: |\n  one\n   two\n\n  three\nb: 1\n", true},
	{"literal strip", "a: |-\n  one\n\n\nb: 1\n", true},
	{"literal keep", "a: |+\n  one\n\n\nb: 1\n", true},
	{"folded", "a: >\n  one\n  two\n\n  three\n    indented\n  four\n", true},
	{"folded strip keep", "a: >-\n  one\n  two\nb: >+\n  three\n\n", true},
	{"indentation indicator", "a: |2\n    one\n  two\nb: |1-\n  x\n", true},
	{"indicators reversed", "a: |-2\n    one\nb: >+1\n  x\n", true},
	{"zero indicator", "a: |0\n  x\n", false},
	{"block in sequence", "- |\n  one\n- >-\n  two\n  three\n", true},
	{"block at end without newline", "a: |\n  one", true},
	{"empty block", "a: |\nb: 1\n", true},
	{"block with comment-like line", "a: |\n  # not a comment\n  x\n", true},
	{"block with more spaces in blank line", "a: |\n  one\n      \n  two\n", true},
	{"block header comment", "a: | # c\n  x\n", true},
	{"block header junk", "a: | x\n  y\n", false},
	{"top-level block", "|\n text\n", true},
	{"leading blank lines deeper", "a: |\n\n      \n  x\n", false},

	// Left to go-yaml.
	{"anchor", "a: &x 1\nb: *x\n", false},
	{"tag", "a: !!str 1\n", false},
	{"flow content", "a: [1, 2]\n", false},
	{"flow mapping", "a: {b: c}\n", false},
	{"complex key", "? a\n: b\n", false},
	{"tab", "a:\tb\n", false},
	{"tab indent", "a:\n\tb: c\n", false},
	{"crlf", "a: b\r\n", false},
	{"directive", "%YAML 1.1\n---\na: b\n", false},
	{"document start", "---\na: b\n", false},
	{"document end", "a: b\n...\n", false},
	{"bom", "\ufeffa: b\n", false},
	{"non-utf8", "a: \xff\n", false},
	{"nel", "a: b\u0085c\n", false},
	{"line separator", "a: b\u2028c\n", false},
	{"control", "a: \x01\n", false},
	{"del", "a: \x7f\n", false},

	// Malformed: go-yaml fails.
	{"bad indent", "a:\n  b: 1\n c: 2\n", false},
	{"value after value", "a: b: c\n", false},
	{"sequence after key on line", "a: - b\n", false},
	{"mapping then sequence", "a: 1\n- b\n", false},
	{"sequence then mapping", "- a\nb: 1\n", false},
	{"key without colon", "a: 1\nb\n", false},
	{"plain continuation with colon", "a: one\n  two: three\n", false},
	{"too deep under entry", "- a: 1\n   b: 2\n", false},

	// Unicode.
	{"unicode", "a: héllo – wörld ’ 😀\n'ключ': значение\n", true},
	{"replacement character", "a: \ufffd\n", true},
}

func TestDecodeTable(t *testing.T) {
	for _, c := range tableCases {
		t.Run(c.name, func(t *testing.T) {
			fast, err := check([]byte(c.doc))
			if err != nil {
				t.Fatalf("%q: %v", c.doc, err)
			}
			if fast != c.fast {
				want, werr := oracle([]byte(c.doc))
				t.Errorf("%q: fast = %v, want %v (sigs.k8s.io/yaml: %#v, %v)", c.doc, fast, c.fast, want, werr)
			}
		})
	}
}
