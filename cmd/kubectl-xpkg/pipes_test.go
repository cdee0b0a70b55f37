package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode"
)

// pipePrograms do in Go what the programs the examples pipe into do, so
// an example's output is checked the same way on every machine, whatever is
// installed on it. Each takes the program's arguments and its input and
// returns what the check compares.
var pipePrograms = map[string]func(args []string, in string) (string, error){
	"jq":  jqPaths,
	"dot": dotListing,
}

// jqPaths runs a jq filter made of a path such as .items[].metadata.name
// (the only kind the examples use) and prints each result as jq does: one
// JSON value per line, indented by two spaces.
func jqPaths(args []string, in string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("jq stand-in: want one filter, got %q", args)
	}
	steps, err := parseJQPath(args[0])
	if err != nil {
		return "", err
	}
	dec := json.NewDecoder(strings.NewReader(in))
	dec.UseNumber()
	var out bytes.Buffer
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", fmt.Errorf("jq stand-in: input is not JSON: %w", err)
		}
		results, err := jqEval(steps, []any{v})
		if err != nil {
			return "", err
		}
		for _, r := range results {
			b, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				return "", err
			}
			out.Write(b)
			out.WriteByte('\n')
		}
	}
	return out.String(), nil
}

// A jq path step: a field name, or "" for [] (every element).
func parseJQPath(filter string) ([]string, error) {
	if !strings.HasPrefix(filter, ".") {
		return nil, fmt.Errorf("jq stand-in: %q is not a path", filter)
	}
	var steps []string
	for rest := filter; rest != ""; {
		switch {
		case strings.HasPrefix(rest, "[]"):
			steps, rest = append(steps, ""), rest[2:]
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
			n := strings.IndexFunc(rest, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			if n < 0 {
				n = len(rest)
			}
			if n > 0 {
				steps, rest = append(steps, rest[:n]), rest[n:]
			}
		default:
			return nil, fmt.Errorf("jq stand-in: %q: only paths like .a[].b are done here", filter)
		}
	}
	return steps, nil
}

func jqEval(steps []string, vs []any) ([]any, error) {
	for _, s := range steps {
		var next []any
		for _, v := range vs {
			switch t := v.(type) {
			case map[string]any:
				if s == "" {
					return nil, errors.New("jq stand-in: cannot iterate over an object here")
				}
				next = append(next, t[s])
			case []any:
				if s != "" {
					return nil, fmt.Errorf("jq: error: Cannot index array with %q", s)
				}
				next = append(next, t...)
			case nil:
				if s == "" {
					return nil, errors.New("jq: error: Cannot iterate over null")
				}
				next = append(next, nil)
			default:
				return nil, fmt.Errorf("jq: error: Cannot index %T with %q", v, s)
			}
		}
		vs = next
	}
	return vs, nil
}

// dotListing parses a Graphviz graph the way dot's own reader does (the
// subset without subgraphs and HTML labels) and lists what dot would draw:
// "node NAME: LABEL" with the label's lines joined by " | ", and
// "edge FROM -> TO: LABEL". The output format argument (-Tsvg, …) is not
// rendered; a graph dot would not read fails here too.
func dotListing(_ []string, in string) (string, error) {
	p := &dotParser{toks: dotTokens(in)}
	g, err := p.graph()
	if err != nil {
		return "", fmt.Errorf("dot stand-in: %w", err)
	}
	return g.String(), nil
}

type dotToken struct {
	s      string
	quoted bool
}

type dotGraph struct {
	lines []string
}

func (g *dotGraph) String() string { return strings.Join(g.lines, "\n") + "\n" }

type dotParser struct {
	toks []dotToken
	pos  int
	err  error
}

func (p *dotParser) peek() dotToken {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return dotToken{}
}

func (p *dotParser) next() dotToken { t := p.peek(); p.pos++; return t }

func (p *dotParser) expect(s string) error {
	if t := p.next(); t.s != s || t.quoted {
		return fmt.Errorf("want %q, got %q", s, t.s)
	}
	return nil
}

func (p *dotParser) graph() (*dotGraph, error) {
	if t := p.peek(); t.s == "strict" && !t.quoted {
		p.next()
	}
	if t := p.next(); t.s != "digraph" && t.s != "graph" {
		return nil, fmt.Errorf("want digraph or graph, got %q", t.s)
	}
	if t := p.peek(); t.s != "{" || t.quoted {
		p.next() // the graph's ID
	}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	g := &dotGraph{}
	for t := p.peek(); t.s != "}" || t.quoted; t = p.peek() {
		if t.s == "" && p.pos >= len(p.toks) {
			return nil, errors.New("graph not closed with }")
		}
		if err := p.stmt(g); err != nil {
			return nil, err
		}
	}
	p.next()
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("text after the graph: %q", p.peek().s)
	}
	return g, nil
}

func (p *dotParser) stmt(g *dotGraph) error {
	id := p.next()
	if !isDotID(id) {
		return fmt.Errorf("want a statement, got %q", id.s)
	}
	switch t := p.peek(); {
	case t.s == "=" && !t.quoted:
		p.next()
		if v := p.next(); !isDotID(v) {
			return fmt.Errorf("%s = %q: not an ID", id.s, v.s)
		}
	case !id.quoted && (id.s == "graph" || id.s == "node" || id.s == "edge"):
		if _, err := p.attrs(); err != nil {
			return err
		}
	case t.s == "->" && !t.quoted:
		p.next()
		to := p.next()
		if !isDotID(to) {
			return fmt.Errorf("edge %s -> %q: not a node ID", id.s, to.s)
		}
		a, err := p.attrs()
		if err != nil {
			return err
		}
		g.lines = append(g.lines, fmt.Sprintf("edge %s -> %s: %s", id.s, to.s, dotLabel(a["label"], id.s)))
	default:
		a, err := p.attrs()
		if err != nil {
			return err
		}
		label, ok := a["label"]
		if !ok {
			label = `\N`
		}
		g.lines = append(g.lines, fmt.Sprintf("node %s: %s", id.s, dotLabel(label, id.s)))
	}
	if t := p.peek(); t.s == ";" && !t.quoted {
		p.next()
	}
	return nil
}

// attrs reads an optional [a=b, c=d] list.
func (p *dotParser) attrs() (map[string]string, error) {
	a := map[string]string{}
	if t := p.peek(); t.s != "[" || t.quoted {
		return a, nil
	}
	p.next()
	for t := p.peek(); t.s != "]" || t.quoted; t = p.peek() {
		k := p.next()
		if !isDotID(k) {
			return nil, fmt.Errorf("attribute: want a name, got %q", k.s)
		}
		if err := p.expect("="); err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k.s, err)
		}
		v := p.next()
		if !isDotID(v) {
			return nil, fmt.Errorf("attribute %s: want a value, got %q", k.s, v.s)
		}
		a[k.s] = v.s
		if t := p.peek(); (t.s == "," || t.s == ";") && !t.quoted {
			p.next()
		}
	}
	p.next()
	return a, nil
}

// isDotID reports whether t is an ID: a quoted string, a name or a numeral.
func isDotID(t dotToken) bool {
	if t.quoted {
		return true
	}
	if t.s == "" {
		return false
	}
	for _, r := range t.s {
		if r != '_' && r != '.' && r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// dotTokens splits DOT text into tokens. In a quoted string only \" is an
// escape (and a backslash before a newline joins lines): every other
// backslash stays, for the label's own escapes.
func dotTokens(s string) []dotToken {
	var toks []dotToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\n') {
					if s[j+1] == '"' {
						b.WriteByte('"')
					}
					j++
					continue
				}
				b.WriteByte(s[j])
			}
			if j == len(s) {
				return append(toks, dotToken{s: "unterminated string " + s[i:]})
			}
			toks, i = append(toks, dotToken{s: b.String(), quoted: true}), j+1
		case strings.HasPrefix(s[i:], "->"):
			toks, i = append(toks, dotToken{s: "->"}), i+2
		case strings.ContainsRune("{}[];,=", rune(c)):
			toks, i = append(toks, dotToken{s: string(c)}), i+1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n\"{}[];,=", rune(s[j])) && !strings.HasPrefix(s[j:], "->") {
				j++
			}
			toks, i = append(toks, dotToken{s: s[i:j]}), j
		}
	}
	return toks
}

// dotLabel applies a label's escapes as dot draws it: \n, \l and \r end a
// line, \N is the node's name, \\ is a backslash.
func dotLabel(label, node string) string {
	var lines []string
	var b strings.Builder
	for i := 0; i < len(label); i++ {
		if label[i] != '\\' || i+1 == len(label) {
			b.WriteByte(label[i])
			continue
		}
		i++
		switch label[i] {
		case 'n', 'l', 'r':
			lines = append(lines, b.String())
			b.Reset()
		case 'N':
			b.WriteString(node)
		default:
			b.WriteByte(label[i])
		}
	}
	return strings.Join(append(lines, b.String()), " | ")
}

func TestPipePrograms(t *testing.T) {
	in := `{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b\"c"}},{"metadata":{}}]}`
	got, err := jqPaths([]string{".items[].metadata.name"}, in)
	if want := "\"a\"\n\"b\\\"c\"\nnull\n"; err != nil || got != want {
		t.Errorf("jq: %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{".items[] | .x", "items", ".items[0]"} {
		if _, err := jqPaths([]string{bad}, in); err == nil {
			t.Errorf("jq %q: no error", bad)
		}
	}
	if _, err := jqPaths([]string{".items"}, "{"); err == nil {
		t.Error("jq: broken JSON read without error")
	}

	g := "digraph packages {\n  rankdir=LR;\n  node [shape=box];\n" +
		`  "r/a" [label="r/a\nv1", color=black];` + "\n" +
		`  "r/a" -> "r/b\"q" [label=">=v1"];` + "\n" +
		`  "r/b\"q" [label="one\\ntwo"];` + "\n}\n"
	got, err = dotListing(nil, g)
	want := "node r/a: r/a | v1\nedge r/a -> r/b\"q: >=v1\nnode r/b\"q: one\\ntwo\n"
	if err != nil || got != want {
		t.Errorf("dot:\n%s%v\nwant:\n%s", got, err, want)
	}
	for _, bad := range []string{
		"digraph g {\n  a -> ;\n}\n",
		"digraph g {\n  a [label=\"x];\n}\n",
		"digraph g {\n  a [label];\n}\n",
		"digraph g {\n  a;\n",
		"digraph g {\n  a;\n}\n}\n",
		"grph g { a; }",
	} {
		if _, err := dotListing(nil, bad); err == nil {
			t.Errorf("dot read %q without error", bad)
		}
	}
}
