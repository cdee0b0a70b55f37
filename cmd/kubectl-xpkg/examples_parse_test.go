package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// This file reads the Example text of a verb into runnable examples. A
// block is one or more `#` comment lines and the command lines under them,
// blocks are separated by blank lines, and every command line is
//
//	kubectl xpkg VERB ARGS... [| PROGRAM ARGS...] [> FILE] [|| [ $? -eq N ]]
//
// with sh quoting. A comment saying "(exit status N" documents that its
// commands exit N; without one they exit 0.

// example is one command line of a verb's Example.
type example struct {
	verb    string
	line    string // as documented
	comment string // the comment of its block
	want    int    // the documented exit status
	args    []string
	pipe    []string // | PROGRAM ARGS...
	out     string   // > FILE: where the last program's output goes
	orEq    int      // || [ $? -eq N ]: N, else -1
}

var exitStatus = regexp.MustCompile(`\(exit status (\d+)`)

// parseExamples reads the Example of the command whose path (as kubectl
// users type it) is path, e.g. "kubectl xpkg get".
func parseExamples(path, text string) ([]example, error) {
	var out []example
	var comment []string
	lastWasCommand := false
	for l := range strings.Lines(text) {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			comment, lastWasCommand = nil, false
		case strings.HasPrefix(l, "#"):
			if lastWasCommand {
				comment, lastWasCommand = nil, false
			}
			comment = append(comment, strings.TrimSpace(strings.TrimPrefix(l, "#")))
		default:
			ex, err := parseLine(path, l)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", l, err)
			}
			ex.comment = strings.Join(comment, " ")
			if m := exitStatus.FindStringSubmatch(ex.comment); m != nil {
				ex.want, _ = strconv.Atoi(m[1])
			}
			out = append(out, ex)
			lastWasCommand = true
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no command lines")
	}
	return out, nil
}

// parseLine reads one command line into the xpkg arguments and what the
// shell does around them.
func parseLine(path, line string) (example, error) {
	ex := example{verb: path, line: line, orEq: -1}
	toks, err := shellWords(line)
	if err != nil {
		return ex, err
	}
	words := &ex.args
	for i := 0; i < len(toks); i++ {
		switch tk := toks[i]; {
		case !tk.op && ex.out == "":
			*words = append(*words, tk.s)
		case tk.s == "|" && ex.pipe == nil && ex.out == "":
			ex.pipe, words = []string{}, &ex.pipe
		case tk.s == ">" && ex.out == "" && i+1 < len(toks) && !toks[i+1].op:
			ex.out, i = toks[i+1].s, i+1
		case tk.s == "||":
			if ex.orEq, err = orTest(toks[i+1:]); err != nil {
				return ex, err
			}
			i = len(toks)
		default:
			return ex, fmt.Errorf("unsupported shell construct at %q: rewrite the example", tk.s)
		}
	}
	if !strings.HasPrefix(strings.Join(ex.args, " ")+" ", path+" ") {
		return ex, fmt.Errorf("does not run %q", path)
	}
	if len(ex.pipe) == 0 && ex.pipe != nil {
		return ex, errors.New("| without a program")
	}
	ex.args = ex.args[2:] // drop "kubectl xpkg"
	return ex, nil
}

// orTest reads the one right-hand side of || the examples use,
// `[ $? -eq N ]`, and returns N.
func orTest(toks []token) (int, error) {
	var w []string
	for _, tk := range toks {
		w = append(w, tk.s)
	}
	if len(w) != 5 || w[0] != "[" || w[1] != "$?" || w[2] != "-eq" || w[4] != "]" {
		return 0, fmt.Errorf("unsupported right-hand side of ||: %q (only `[ $? -eq N ]`)", strings.Join(w, " "))
	}
	return strconv.Atoi(w[3])
}

// token is a shell word, or an operator when op.
type token struct {
	s  string
	op bool
}

// shellWords splits a line as sh does: single and double quotes,
// backslashes, and the unquoted operators |, || and > as tokens of their
// own. Other operators, command substitution and unbalanced quotes are
// errors: an example that needs them must be rewritten.
func shellWords(line string) ([]token, error) {
	var toks []token
	var cur strings.Builder
	inWord, quote := false, byte(0)
	flush := func() {
		if inWord {
			toks = append(toks, token{s: cur.String()})
		}
		cur.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'' && c == '\'', quote == '"' && c == '"':
			quote = 0
		case quote == '\'':
			cur.WriteByte(c)
		case quote == '"' && c == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0:
			i++
			cur.WriteByte(line[i])
		case c == '`' || c == '$' && strings.HasPrefix(line[i:], "$("):
			return nil, errors.New("command substitution: rewrite the example")
		case quote == '"':
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t':
			flush()
		case strings.HasPrefix(line[i:], "||"):
			flush()
			toks = append(toks, token{s: "||", op: true})
			i++
		case c == '|' || c == '>':
			flush()
			if i+1 < len(line) && strings.IndexByte("|>&", line[i+1]) >= 0 {
				return nil, fmt.Errorf("unsupported operator %q", line[i:i+2])
			}
			toks = append(toks, token{s: string(c), op: true})
		case strings.IndexByte(";&<(){}", c) >= 0:
			return nil, fmt.Errorf("unsupported operator %q", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unbalanced quote")
	}
	flush()
	return toks, nil
}

func TestParseExampleLine(t *testing.T) {
	for line, want := range map[string]string{
		`kubectl xpkg get provider p -o jsonpath='{.status.currentRevision}'`: `[get provider p -o jsonpath={.status.currentRevision}] [] "" -1`,
		`kubectl xpkg diff "a b" c\ d || [ $? -eq 1 ]`:                        `[diff a b c d] [] "" 1`,
		`kubectl xpkg tree x -o dot | dot -Tsvg > deps.svg`:                   `[tree x -o dot] [dot -Tsvg] "deps.svg" -1`,
		`kubectl xpkg extract x -o json|jq ".items[]|.kind"`:                  `[extract x -o json] [jq .items[]|.kind] "" -1`,
		`kubectl xpkg get $(cat names)`:                                       `command substitution`,
		`kubectl xpkg get 'x`:                                                 `unbalanced quote`,
		`kubectl xpkg get x && echo ok`:                                       `unsupported operator '&'`,
		`kubectl xpkg get x || true`:                                          `unsupported right-hand side of ||`,
		`kubectl xpkg describe x`:                                             `does not run "kubectl xpkg diff"`,
	} {
		path := strings.Join(strings.Fields(line)[:3], " ")
		if strings.Contains(line, "describe") {
			path = "kubectl xpkg diff"
		}
		ex, err := parseLine(path, line)
		got := fmt.Sprintf("%v %v %q %d", ex.args, ex.pipe, ex.out, ex.orEq)
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s\ngot  %s\nwant %s", line, got, want)
		}
	}
}
