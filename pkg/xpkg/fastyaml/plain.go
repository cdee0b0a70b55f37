package fastyaml

// How a plain scalar's text on one line ended.
const (
	atEOL     = iota // the line (or document) ended
	atComment        // " #" started a comment
	atColon          // ": " or a final ':' – a mapping value indicator
)

// notPlain marks the characters a plain scalar may not start with in
// go-yaml: blanks and indicators. '-' is handled apart; "?x" and ":x",
// which go-yaml does accept, are left to it.
var notPlain = func() (t [256]bool) {
	for _, c := range " \n-?:,[]{}#&*!|>'\"%@`" {
		t[c] = true
	}
	return t
}()

// plainStart reports whether a plain scalar starts at i.
func (d *decoder) plainStart(i int) bool {
	if c := d.src[i]; c != '-' {
		return !notPlain[c]
	}
	return !d.blankAt(i + 1)
}

// plainLine scans a plain scalar's text on one line from i, the way
// go-yaml's block-context scanner does: it ends at a line break, at '#'
// after a space, or at ':' before a blank. It returns the end of the text
// (trailing spaces excluded), where scanning stopped, and why.
func (d *decoder) plainLine(i int) (end, stop, kind int) {
	src := d.src
	end = i
	for ; i < len(src); i++ {
		c := src[i]
		if !plainSpecial[c] {
			end = i + 1
			continue
		}
		switch {
		case c == '\n':
			return end, i, atEOL
		case c == ':' && d.blankAt(i+1):
			return end, i, atColon
		case c == '#' && i > 0 && src[i-1] == ' ':
			return end, i, atComment
		case c != ' ':
			end = i + 1
		}
	}
	return end, i, atEOL
}

// plainSpecial marks the bytes plainLine must look at.
var plainSpecial = [256]bool{' ': true, '\n': true, ':': true, '#': true}

// plain parses a plain scalar at pos, in a collection at column parent,
// and resolves it.
func (d *decoder) plain(parent int) (any, bool) {
	start := d.pos
	end, stop, kind := d.plainLine(start)
	if kind == atColon {
		return nil, false // "key: a: b" and the like
	}
	text := d.src[start:end]
	d.pos = stop
	d.skipLine()
	if kind == atEOL {
		var ok bool
		if text, ok = d.plainMore(text, parent); !ok {
			return nil, false
		}
	}
	return resolveValue(text)
}

// plainMore adds a plain scalar's continuation lines to its first line's
// text: the lines indented deeper than parent up to a comment line. Lines
// join with a space, or with one "\n" per blank line between them.
func (d *decoder) plainMore(text string, parent int) (string, bool) {
	src := d.src
	built := false
	for {
		p, breaks := d.pos, 0
		i := p
		for {
			for i < len(src) && src[i] == ' ' {
				i++
			}
			if i == len(src) || src[i] != '\n' {
				break
			}
			breaks++
			i++
			p = i
		}
		if i == len(src) || i-p <= parent || src[i] == '#' {
			break // pos stays at the first line not taken
		}
		end, stop, kind := d.plainLine(i)
		if kind == atColon {
			return "", false // a multi-line key: go-yaml fails
		}
		if !built {
			d.buf = append(d.buf[:0], text...)
			built = true
		}
		d.buf = appendBreaks(d.buf, breaks, ' ')
		d.buf = append(d.buf, src[i:end]...)
		d.pos = stop
		d.skipLine()
		if kind == atComment {
			break
		}
	}
	if built {
		text = string(d.buf)
	}
	return text, true
}

// appendBreaks folds n line breaks: none becomes fold (a space, or nothing
// for an escaped line break), n become n newlines.
func appendBreaks(b []byte, n int, fold byte) []byte {
	if n == 0 {
		if fold != 0 {
			b = append(b, fold)
		}
		return b
	}
	for ; n > 0; n-- {
		b = append(b, '\n')
	}
	return b
}
