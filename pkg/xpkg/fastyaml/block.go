package fastyaml

// block parses a literal ('|') or folded ('>') block scalar at pos, in a
// collection at column parent. It ports go-yaml's
// yaml_parser_scan_block_scalar so that indentation detection, folding
// and chomping match it exactly, quirks included.
func (d *decoder) block(parent int) (any, bool) {
	literal := d.src[d.pos] == '|'
	chomp, indent, ok := d.blockHeader(parent)
	if !ok {
		return nil, false
	}
	s := d.buf[:0]
	col, trailing := d.blockBreaks(&indent, parent)
	leadingBreak, leadingBlank := false, false
	for col == indent && d.pos < len(d.src) {
		trailingBlank := d.src[d.pos] == ' '
		if !literal && !leadingBlank && !trailingBlank && leadingBreak {
			if trailing == 0 {
				s = append(s, ' ')
			}
		} else if leadingBreak {
			s = append(s, '\n')
		}
		s = appendBreaks(s, trailing, 0)
		leadingBlank = trailingBlank
		start := d.pos
		d.skipLine() // to the next line, or the end
		end := d.pos
		if leadingBreak = d.src[end-1] == '\n'; leadingBreak {
			end--
		}
		s = append(s, d.src[start:end]...)
		col, trailing = d.blockBreaks(&indent, parent)
	}
	if chomp != '-' && leadingBreak {
		s = append(s, '\n')
	}
	if chomp == '+' {
		s = appendBreaks(s, trailing, 0)
	}
	d.buf = s
	d.pos = d.line // the line that ended the scalar is not consumed
	return string(s), true
}

// blockHeader reads the indicators after '|' or '>' and the rest of the
// line. It returns the chomping indicator ('-', '+' or 0) and the content
// indentation the indentation indicator fixes (0 when there is none).
func (d *decoder) blockHeader(parent int) (chomp byte, indent int, ok bool) {
	i := d.pos + 1
	digit := func() bool {
		if i < len(d.src) && d.src[i] >= '0' && d.src[i] <= '9' {
			indent = int(d.src[i] - '0')
			i++
			return indent > 0 // go-yaml rejects 0
		}
		return true
	}
	if i < len(d.src) && (d.src[i] == '-' || d.src[i] == '+') {
		chomp = d.src[i]
		i++
		ok = digit()
	} else if ok = digit(); i < len(d.src) && (d.src[i] == '-' || d.src[i] == '+') {
		chomp = d.src[i]
		i++
	}
	d.pos = i
	if !ok || !d.endLine() {
		return 0, 0, false
	}
	if indent > 0 && parent >= 0 {
		indent += parent
	}
	return chomp, indent, true
}

// blockBreaks ports yaml_parser_scan_block_scalar_breaks: from the start
// of a line it skips empty lines and indentation (up to indent, or all of
// it while indent is still 0), counting the line breaks, and returns the
// column it stopped at. The first call fixes indent if the header did not:
// the deepest indentation seen, at least parent+1 and at least 1.
func (d *decoder) blockBreaks(indent *int, parent int) (col, breaks int) {
	maxIndent := 0
	for {
		d.line, col = d.pos, 0
		for (*indent == 0 || col < *indent) && d.pos < len(d.src) && d.src[d.pos] == ' ' {
			d.pos++
			col++
		}
		maxIndent = max(maxIndent, col)
		if d.pos == len(d.src) || d.src[d.pos] != '\n' {
			break
		}
		d.pos++
		breaks++
	}
	if *indent == 0 {
		*indent = max(maxIndent, parent+1, 1)
	}
	return col, breaks
}
