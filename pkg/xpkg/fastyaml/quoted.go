package fastyaml

import (
	"strings"
	"unicode/utf8"
)

// quoted parses a single- or double-quoted scalar at pos, leaving pos past
// the closing quote. A one-line scalar without escapes is a slice of src;
// others take the port of go-yaml's scanner in quotedSlow.
func (d *decoder) quoted(parent int) (string, bool) {
	q, start := d.src[d.pos], d.pos+1
	for i := start; i < len(d.src); i++ {
		switch c := d.src[i]; {
		case c == q:
			if q == '\'' && i+1 < len(d.src) && d.src[i+1] == '\'' {
				return d.quotedSlow(parent) // an escaped quote
			}
			d.pos = i + 1
			return d.src[start:i], true
		case c == '\n' || c == '\\' && q == '"':
			return d.quotedSlow(parent)
		}
	}
	return "", false // unterminated
}

// quotedSlow ports go-yaml's yaml_parser_scan_flow_scalar: runs of spaces
// inside a line are kept, a line break with the blanks around it folds
// into a space (or one "\n" per blank line that follows), and in double
// quotes an escaped line break folds into nothing.
func (d *decoder) quotedSlow(parent int) (string, bool) {
	src, q := d.src, d.src[d.pos]
	s := d.buf[:0]
	i := d.pos + 1
	for {
		if i >= len(src) {
			return "", false
		}
		var escapedBreak, ok bool
		if s, i, escapedBreak, ok = quotedRun(s, src, i, q); !ok {
			return "", false
		}
		if i < len(src) && src[i] == q {
			break
		}
		s, i = foldBlanks(s, src, i, escapedBreak)
	}
	if !d.indented(d.pos, i, parent) {
		return "", false
	}
	d.buf = s
	d.pos = i + 1
	return string(s), true
}

// quotedRun copies the non-blank characters from src[i] on, decoding
// escapes, up to a blank, the closing quote q, or (escapedBreak) past an
// escaped line break.
func quotedRun(s []byte, src string, i int, q byte) (_ []byte, _ int, escapedBreak, ok bool) {
	for i < len(src) && src[i] != ' ' && src[i] != '\n' {
		c := src[i]
		switch {
		case c == '\'' && q == '\'' && i+1 < len(src) && src[i+1] == '\'':
			s = append(s, '\'')
			i += 2
		case c == q:
			return s, i, false, true
		case c == '\\' && q == '"' && i+1 < len(src) && src[i+1] == '\n':
			return s, i + 2, true, true
		case c == '\\' && q == '"':
			if s, i, ok = escape(s, src, i); !ok {
				return s, i, false, false
			}
		default:
			s = append(s, c)
			i++
		}
	}
	return s, i, false, true
}

// foldBlanks consumes the spaces and line breaks at src[i]. Spaces within
// a line are kept; a line break folds into a space, or into one "\n" for
// each further break; after an escaped line break only the further breaks
// count.
func foldBlanks(s []byte, src string, i int, escapedBreak bool) ([]byte, int) {
	spaces, breaks, leadingBreak := 0, 0, false
	for ; i < len(src) && (src[i] == ' ' || src[i] == '\n'); i++ {
		switch {
		case src[i] == ' ':
			if !escapedBreak && !leadingBreak {
				spaces++
			}
		case escapedBreak || leadingBreak:
			breaks++
		default:
			spaces, leadingBreak = 0, true // trailing spaces are dropped
		}
	}
	switch {
	case leadingBreak:
		return appendBreaks(s, breaks, ' '), i
	case escapedBreak:
		return appendBreaks(s, breaks, 0), i
	}
	for ; spaces > 0; spaces-- {
		s = append(s, ' ')
	}
	return s, i
}

// indented checks the lines a quoted scalar from src[start] to the closing
// quote at src[end] continues on, and moves line to the last one. go-yaml
// does not check their indentation; here each must be blank or indented
// deeper than parent, as YAML requires, and anything else is left to it.
func (d *decoder) indented(start, end, parent int) bool {
	for {
		j := strings.IndexByte(d.src[start:end], '\n')
		if j < 0 {
			return true
		}
		start += j + 1
		d.line = start
		k := start
		for d.src[k] == ' ' {
			k++
		}
		if d.src[k] != '\n' && k-start <= parent {
			return false
		}
	}
}

// escape decodes the double-quoted escape sequence at src[i] ('\\') as
// go-yaml does; it knows no "\/".
func escape(s []byte, src string, i int) ([]byte, int, bool) {
	if i+1 >= len(src) {
		return s, i, false
	}
	n := 0
	switch c := src[i+1]; c {
	case '0':
		s = append(s, 0)
	case 'a':
		s = append(s, '\a')
	case 'b':
		s = append(s, '\b')
	case 't':
		s = append(s, '\t')
	case 'n':
		s = append(s, '\n')
	case 'v':
		s = append(s, '\v')
	case 'f':
		s = append(s, '\f')
	case 'r':
		s = append(s, '\r')
	case 'e':
		s = append(s, 0x1b)
	case ' ', '"', '\'', '\\':
		s = append(s, c)
	case 'N':
		s = append(s, "\u0085"...)
	case '_':
		s = append(s, "\u00a0"...)
	case 'L':
		s = append(s, "\u2028"...)
	case 'P':
		s = append(s, "\u2029"...)
	case 'x':
		n = 2
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return s, i, false
	}
	i += 2
	if n == 0 {
		return s, i, true
	}
	if i+n > len(src) {
		return s, i, false
	}
	v := 0
	for k := i; k < i+n; k++ {
		h := hexValue(src[k])
		if h < 0 {
			return s, i, false
		}
		v = v<<4 | h
	}
	if v >= 0xd800 && v <= 0xdfff || v > 0x10ffff {
		return s, i, false
	}
	return utf8.AppendRune(s, rune(v)), i + n, true
}

func hexValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
