package fastyaml

import (
	"encoding/binary"
	"unicode/utf8"
)

// valid reports whether doc is free of everything the decoder leaves to the
// general parser wherever it occurs: bytes go-yaml rejects or reads as line
// breaks or indentation (tabs, CR, NEL, U+2028, U+2029), invalid UTF-8, the
// BOM, and lines starting with a directive or a document marker. Checking
// once up front keeps the scanners simple: they see only spaces, '\n' and
// printable characters.
func valid(doc []byte) bool {
	if !lineStartOK(doc, 0) {
		return false
	}
	for i := 0; i < len(doc); {
		// Skip eight printable ASCII bytes at a time: the common case.
		if i+8 <= len(doc) && plainWord(binary.LittleEndian.Uint64(doc[i:])) {
			i += 8
			continue
		}
		c := doc[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			i++
		case c == '\n':
			i++
			if !lineStartOK(doc, i) {
				return false
			}
		case c < 0x80:
			return false
		default:
			r, n := utf8.DecodeRune(doc[i:])
			if n == 1 || !printable(r) { // n == 1: invalid UTF-8
				return false
			}
			i += n
		}
	}
	return true
}

// plainWord reports whether all eight bytes of w are in 0x20..0x7e. False
// positives are impossible; false negatives only cost the slow path.
func plainWord(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (w - 0x20*ones) &^ w & highs // some byte < 0x20
	above := (w | (w + ones)) & highs     // some byte >= 0x7f
	return below|above == 0
}

// printable reports whether r is a non-ASCII character go-yaml accepts and
// treats as neither a line break nor a byte order mark.
func printable(r rune) bool {
	switch {
	case r == 0x2028, r == 0x2029, r == 0xfeff:
		return false
	case r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd:
		return true
	}
	return r >= 0x10000 && r <= 0x10ffff
}

// lineStartOK rejects a line at i that starts with a directive ("%") or a
// document marker ("---" or "..." followed by a blank or the end).
func lineStartOK(doc []byte, i int) bool {
	if i >= len(doc) {
		return true
	}
	if doc[i] == '%' {
		return false
	}
	if i+3 > len(doc) || (doc[i] != '-' && doc[i] != '.') || doc[i+1] != doc[i] || doc[i+2] != doc[i] {
		return true
	}
	return i+3 < len(doc) && doc[i+3] != ' ' && doc[i+3] != '\n'
}
