package fastyaml

import "strings"

// decoder walks a document line by line. In this subset block structure
// follows from indentation alone, so each collection parser only needs the
// column it starts at and compares it with the next content line's.
//
// Invariant between nodes: pos is at the start of a line (line == pos),
// every byte before it consumed.
type decoder struct {
	src   string // the document
	pos   int    // read position
	line  int    // start of the line holding pos
	depth int    // collections open
	buf   []byte // scratch for scalars that are not verbatim slices of src
}

// document parses the whole document: one node, or none (nil) when it
// holds only comments and blank lines, as go-yaml decodes it.
func (d *decoder) document() (any, bool) {
	col := d.skipToContent()
	if col < 0 {
		return nil, true
	}
	v, ok := d.node(col, -1)
	if !ok || d.skipToContent() >= 0 {
		return nil, false
	}
	return v, true
}

// node parses the node starting at column col of the current line. parent
// is the indentation of the enclosing collection (go-yaml's parser.indent,
// -1 at the top): multi-line scalars continue only on deeper lines.
func (d *decoder) node(col, parent int) (any, bool) {
	d.pos = d.line + col
	if d.entryAt(d.pos) {
		return d.sequence(col)
	}
	if d.keyAhead() {
		return d.mapping(col)
	}
	return d.scalar(parent)
}

// mapping parses a block mapping whose keys sit at column col, the first
// one at pos.
func (d *decoder) mapping(col int) (any, bool) {
	if d.depth++; d.depth > maxDepth {
		return nil, false
	}
	m := make(map[string]any)
	for {
		k, ok := d.key()
		if !ok {
			return nil, false
		}
		v, ok := d.value(col, false)
		if !ok {
			return nil, false
		}
		n := len(m)
		if m[k] = v; len(m) == n {
			return nil, false // a duplicate key: left to go-yaml, which keeps the last
		}
		c := d.skipToContent()
		if c != col {
			if c > col {
				return nil, false
			}
			break
		}
		d.pos = d.line + col
	}
	d.depth--
	return m, true
}

// sequence parses a block sequence whose "-" indicators sit at column col,
// the first one at pos.
func (d *decoder) sequence(col int) (any, bool) {
	if d.depth++; d.depth > maxDepth {
		return nil, false
	}
	var s []any
	for {
		d.pos++ // the "-"
		v, ok := d.value(col, true)
		if !ok {
			return nil, false
		}
		s = append(s, v)
		c := d.skipToContent()
		if c != col || !d.entryAt(d.line+c) {
			if c > col {
				return nil, false
			}
			break
		}
		d.pos = d.line + col
	}
	d.depth--
	return s, true
}

// value parses the node after a "key:" or (entry) "-" indicator, pos just
// past it, in a collection at column parent. After "-" a collection may
// start on the same line; after "key:" only a scalar may. A value on the
// following lines must be indented deeper, except a sequence under a key,
// which may sit at the key's column.
func (d *decoder) value(parent int, entry bool) (any, bool) {
	i := d.pos
	for i < len(d.src) && d.src[i] == ' ' {
		i++
	}
	d.pos = i
	if i < len(d.src) && d.src[i] != '\n' && d.src[i] != '#' {
		if entry {
			return d.node(i-d.line, parent)
		}
		return d.scalar(parent)
	}
	d.skipLine() // a '#' here follows a blank: the indicator needs one
	c := d.skipToContent()
	switch {
	case c > parent:
		return d.node(c, parent)
	case c == parent && !entry && d.entryAt(d.line+c):
		d.pos = d.line + c
		return d.sequence(c)
	}
	return nil, true
}

// scalar parses a scalar (or "[]" or "{}") at pos and the rest of its line.
func (d *decoder) scalar(parent int) (any, bool) {
	switch d.src[d.pos] {
	case '\'', '"':
		s, ok := d.quoted(parent)
		if !ok || !d.endLine() {
			return nil, false
		}
		return s, true
	case '|', '>':
		return d.block(parent)
	case '[', '{':
		return d.emptyFlow()
	}
	if !d.plainStart(d.pos) {
		return nil, false
	}
	return d.plain(parent)
}

// emptyFlow parses "[]" or "{}": flow collections with content are left
// to go-yaml.
func (d *decoder) emptyFlow() (any, bool) {
	var v any
	switch {
	case strings.HasPrefix(d.src[d.pos:], "[]"):
		v = []any{}
	case strings.HasPrefix(d.src[d.pos:], "{}"):
		v = map[string]any{}
	default:
		return nil, false
	}
	d.pos += 2
	return v, d.endLine()
}

// key reads a one-line key and its ':' at pos, leaving pos past the ':'.
// It fails if there is none or the key is outside the subset.
func (d *decoder) key() (string, bool) {
	start, line := d.pos, d.line
	var k string
	var colon int
	if c := d.src[start]; c == '\'' || c == '"' {
		s, ok := d.quoted(-1)
		if !ok || d.line != line {
			return "", false // a simple key must fit on one line
		}
		colon = d.pos
		for colon < len(d.src) && d.src[colon] == ' ' {
			colon++
		}
		if colon == len(d.src) || d.src[colon] != ':' || !d.blankAt(colon+1) {
			return "", false
		}
		k = s
	} else {
		if !d.plainStart(start) {
			return "", false
		}
		end, stop, kind := d.plainLine(start)
		if kind != atColon {
			return "", false
		}
		var ok bool
		if k, ok = keyString(d.src[start:end]); !ok {
			return "", false
		}
		colon = stop
	}
	// go-yaml looks at most 1024 characters ahead for the ':'.
	if colon-start > 1000 {
		return "", false
	}
	d.pos = colon + 1
	return k, true
}

// keyAhead reports whether a key starts at pos, without moving.
func (d *decoder) keyAhead() bool {
	pos, line := d.pos, d.line
	_, ok := d.key()
	d.pos, d.line = pos, line
	return ok
}

// entryAt reports whether a block sequence entry indicator is at i.
func (d *decoder) entryAt(i int) bool {
	return d.src[i] == '-' && d.blankAt(i+1)
}

// blankAt reports whether i is a space, a line break or the end.
func (d *decoder) blankAt(i int) bool {
	return i >= len(d.src) || d.src[i] == ' ' || d.src[i] == '\n'
}

// skipToContent moves from the start of a line to the start of the next
// line that holds more than spaces or a comment, and returns the column of
// its first character, or -1 at the end of the document.
func (d *decoder) skipToContent() int {
	p := d.pos
	for p < len(d.src) {
		i := p
		for i < len(d.src) && d.src[i] == ' ' {
			i++
		}
		if i < len(d.src) && d.src[i] != '\n' && d.src[i] != '#' {
			d.pos, d.line = p, p
			return i - p
		}
		j := strings.IndexByte(d.src[i:], '\n')
		if j < 0 {
			break
		}
		p = i + j + 1
	}
	d.pos, d.line = len(d.src), len(d.src)
	return -1
}

// endLine accepts the rest of the line after a value only if it is spaces
// and perhaps a comment after a space, and moves to the next line.
func (d *decoder) endLine() bool {
	i := d.pos
	for i < len(d.src) && d.src[i] == ' ' {
		i++
	}
	if i < len(d.src) && d.src[i] != '\n' && (d.src[i] != '#' || i == d.pos) {
		return false
	}
	d.pos = i
	d.skipLine()
	return true
}

// skipLine moves to the start of the next line.
func (d *decoder) skipLine() {
	if j := strings.IndexByte(d.src[d.pos:], '\n'); j >= 0 {
		d.pos += j + 1
	} else {
		d.pos = len(d.src)
	}
	d.line = d.pos
}
