package fastyaml

import (
	"strconv"
	"strings"
)

// Plain scalars resolve as go-yaml v2's resolve function does for an
// untagged scalar, followed by the JSON round trip sigs.k8s.io/yaml makes.
// The JSON step turns every integer and float into a float64, and fails on
// NaN and infinities, which Decode leaves to it.
//
// Timestamps need no special case: go-yaml hands back the original text
// when decoding them into an interface, and no timestamp parses as a
// number.

// resolved is the go-yaml value of a plain scalar, before the JSON step.
type resolved struct {
	kind kind
	b    bool
	i    int64
	u    uint64
	f    float64
}

type kind uint8

const (
	kString kind = iota
	kNull
	kBool
	kInt
	kUint // an integer above math.MaxInt64
	kFloat
	kInfNaN
)

// hint is go-yaml's resolveTable: a scalar whose first byte has no hint is
// a string.
var hint = func() (t [256]byte) {
	t['+'], t['-'] = 'S', 'S'
	for c := '0'; c <= '9'; c++ {
		t[c] = 'D'
	}
	for _, c := range "yYnNtTfFoO~" {
		t[c] = 'M'
	}
	t['.'] = '.'
	return t
}()

// resolve mirrors go-yaml v2's resolve("", s) for a non-empty s.
func resolve(s string) resolved {
	h := hint[s[0]]
	if h == 0 {
		return resolved{}
	}
	if r, ok := special(s); ok {
		return r
	}
	switch h {
	case '.':
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return resolved{kind: kFloat, f: f}
		}
	case 'D', 'S':
		return resolveNumber(s)
	}
	return resolved{}
}

// special looks s up in go-yaml's resolveMap.
func special(s string) (resolved, bool) {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return resolved{kind: kBool, b: true}, true
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return resolved{kind: kBool}, true
	case "~", "null", "Null", "NULL":
		return resolved{kind: kNull}, true
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF",
		"+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return resolved{kind: kInfNaN}, true
	}
	return resolved{}, false
}

// resolveNumber is go-yaml's branch for scalars starting with a digit or a
// sign, in the same order: base-prefixed or decimal int, uint, float, and
// its own binary forms.
func resolveNumber(s string) resolved {
	plain := strings.ReplaceAll(s, "_", "")
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return resolved{kind: kInt, i: i}
	}
	if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return resolved{kind: kUint, u: u}
	}
	if yamlStyleFloat(plain) {
		if f, err := strconv.ParseFloat(plain, 64); err == nil {
			return resolved{kind: kFloat, f: f}
		}
	}
	if rest, ok := strings.CutPrefix(plain, "0b"); ok {
		if i, err := strconv.ParseInt(rest, 2, 64); err == nil {
			return resolved{kind: kInt, i: i}
		}
		if u, err := strconv.ParseUint(rest, 2, 64); err == nil {
			return resolved{kind: kUint, u: u}
		}
	} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
		if i, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
			return resolved{kind: kInt, i: i}
		}
	}
	return resolved{}
}

// yamlStyleFloat matches go-yaml's
// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ without regexp.
func yamlStyleFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		if i = digits(s, i+1); i < 0 {
			return false
		}
	} else {
		if i = digits(s, i); i < 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i = digits(s, i); i < 0 {
			return false
		}
	}
	return i == len(s)
}

// digits skips one or more decimal digits from i; -1 if there is none.
func digits(s string, i int) int {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// resolveValue is a plain scalar's value after sigs.k8s.io/yaml's JSON
// round trip. That round trip turns an integer into the nearest float64,
// exactly like Go's conversion.
func resolveValue(s string) (any, bool) {
	r := resolve(s)
	switch r.kind {
	case kNull:
		return nil, true
	case kBool:
		return r.b, true
	case kInt:
		return float64(r.i), true
	case kUint:
		return float64(r.u), true
	case kFloat:
		return r.f, true
	case kInfNaN:
		return nil, false
	}
	return s, true
}

// keyString is a plain key as sigs.k8s.io/yaml turns it into a JSON
// object key. Null and uint64 keys make it fail; float keys it formats
// oddly; the merge key "<<" is special: all are left to it.
func keyString(s string) (string, bool) {
	if s == "<<" {
		return "", false
	}
	r := resolve(s)
	switch r.kind {
	case kString:
		return s, true
	case kBool:
		return strconv.FormatBool(r.b), true
	case kInt:
		return strconv.FormatInt(r.i, 10), true
	}
	return "", false
}
