package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// document is one YAML document of a file, with the lines it spans there.
type document struct {
	// first is the line of the document's first line: YAML errors count
	// from it.
	first int
	// line is the first line with content (not blank, not a comment):
	// where the object is said to be.
	line int
	// last is the document's last line.
	last int
	body []byte
	// broken is set when its separator line was refused: the document is
	// then not read, as its first line is lost, to report one error only.
	broken bool
}

// readContent reads one file's (or standard input's) bytes.
func (r *reader) readContent(source string, data []byte, isJSON bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte order mark would hide a first ---
	if isJSON || startsLikeJSON(data) {
		r.readJSON(source, data)
		return
	}
	for _, d := range r.split(source, data) {
		v, err := yamlValue(d.body)
		if err != nil {
			r.yamlError(source, d, err)
			continue
		}
		r.add(v, source, d.line)
	}
}

// startsLikeJSON sniffs a JSON object, as kubectl does for -f: output of
// kubectl get -o json is then read as JSON, not as YAML.
func startsLikeJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// readJSON reads a file holding one JSON object (a List for several).
func (r *reader) readJSON(source string, data []byte) {
	start := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
	if start == len(data) {
		return // an empty file holds no object, as an empty YAML file
	}
	line := lineAt(data, start)
	v, err := jsonValue(data)
	var syntax *json.SyntaxError
	var more *moreJSONError
	switch {
	case errors.As(err, &syntax):
		r.errorf(source, lineAt(data, int(syntax.Offset)-1), "invalid JSON: %v", err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		end := len(bytes.TrimRight(data, " \t\r\n"))
		r.errorf(source, lineAt(data, end), "invalid JSON: unexpected end of the file")
	case errors.As(err, &more):
		r.errorf(source, lineAt(data, more.offset), "a second JSON value; put the objects in the items of a List")
	case err != nil:
		r.errorf(source, line, "invalid JSON: %v", err)
	case isSlice(v):
		r.errorf(source, line, "a JSON array; put the objects in the items of a List")
	default:
		r.add(v, source, line)
	}
}

// moreJSONError marks a JSON file with something after its first value.
type moreJSONError struct{ offset int }

func (e *moreJSONError) Error() string { return "more than one JSON value" }

// jsonValue decodes one JSON value, keeping integers as int64 (as
// unstructured objects hold them) rather than float64.
func jsonValue(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		rest := data[dec.InputOffset():]
		return nil, &moreJSONError{offset: len(data) - len(bytes.TrimLeft(rest, " \t\r\n"))}
	}
	if err := utiljson.ConvertInterfaceNumbers(&v, 0); err != nil {
		return nil, err
	}
	return v, nil
}

// yamlValue decodes one YAML document as kubectl does: through JSON.
func yamlValue(body []byte) (any, error) {
	j, err := yaml.YAMLToJSON(body)
	if err != nil {
		return nil, err
	}
	return jsonValue(j)
}

// yamlLine finds the line in a YAML parser's error, which counts from the
// document's first line.
var yamlLine = regexp.MustCompile(`yaml: line (\d+): `)

// yamlError reports a YAML error at its line in the file.
func (r *reader) yamlError(source string, d document, err error) {
	msg := err.Error()
	line := d.line
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
		if n, convErr := strconv.Atoi(msg[m[2]:m[3]]); convErr == nil {
			line = min(d.first+n-1, d.last)
		}
		msg = msg[:m[0]] + msg[m[1]:]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	r.errorf(source, line, "invalid YAML: %s", msg)
}

// split cuts a file into its YAML documents at separator lines, as
// kubectl's YAML reader does, keeping each document's lines. It drops
// documents with nothing but blank lines and comments.
func (r *reader) split(source string, data []byte) []document {
	var docs []document
	d := document{first: 1}
	start, n := 0, 0
	flush := func(end int) {
		if d.line > 0 && !d.broken {
			d.body = data[start:end]
			docs = append(docs, d)
		}
	}
	for off := 0; off < len(data); {
		n++
		next := len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		line := bytes.TrimRight(data[off:next], "\r\n")
		switch kind := separator(line); kind {
		case content:
			d.last = n
			if t := bytes.TrimLeft(line, " \t"); d.line == 0 && len(t) > 0 && t[0] != '#' {
				d.line = n
			}
		default:
			// kubectl refuses content after ---, too: the YAML parser
			// would read one document and drop the other quietly.
			if kind == badSeparator {
				r.errorf(source, n, "only a comment may follow a --- document separator on its line")
			}
			flush(off)
			d = document{first: n + 1, broken: kind == badSeparator}
			start = next
		}
		off = next
	}
	flush(len(data))
	return docs
}

type lineKind int

const (
	content lineKind = iota
	goodSeparator
	badSeparator
)

// separator tells a document separator line from content. A "..."
// document end also ends a document here: the parser would drop what
// follows it.
func separator(line []byte) lineKind {
	for _, mark := range []string{"---", "..."} {
		if !bytes.HasPrefix(line, []byte(mark)) {
			continue
		}
		rest := bytes.TrimSpace(line[len(mark):])
		switch {
		case len(rest) == 0 || rest[0] == '#':
			return goodSeparator
		case mark == "---":
			return badSeparator
		}
	}
	return content
}

// lineAt is the 1-based line of a byte offset.
func lineAt(data []byte, offset int) int {
	offset = max(0, min(offset, len(data)))
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

func isSlice(v any) bool {
	_, ok := v.([]any)
	return ok
}
