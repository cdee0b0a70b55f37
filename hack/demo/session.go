package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// console is the demo's output: commands' stdout and stderr arrive on it
// from several goroutines, as on a terminal. It remembers whether the last
// line was finished, so that a verdict never trails a command's output.
type console struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	atBOL  *bool
}

func newConsole(w io.Writer) *console {
	bol := true
	return &console{mu: &sync.Mutex{}, w: w, atBOL: &bol}
}

// indented is the same console with every line prefixed.
func (c *console) indented(prefix string) *console {
	d := *c
	d.prefix = prefix
	return &d
}

func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b []byte
	for _, ch := range p {
		if *c.atBOL && c.prefix != "" && ch != '\n' {
			b = append(b, c.prefix...)
		}
		b = append(b, ch)
		*c.atBOL = ch == '\n'
	}
	if _, err := c.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// endLine finishes a line a command left open.
func (c *console) endLine() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !*c.atBOL {
		fmt.Fprintln(c.w)
		*c.atBOL = true
	}
}

// session runs the plugin as a user would and keeps the score.
type session struct {
	ctx     context.Context
	out     *console
	env     []string
	kubectl string // runs `kubectl xpkg`; "" runs the plugin binary itself
	plugin  string
	results []outcome
}

type outcome struct {
	title  string
	passed bool
	why    string
}

// result is what one command did; err says it could not run or was
// stopped (timeout, Ctrl-C).
type result struct {
	stdout, stderr string
	code           int
	err            error
}

func newSession(ctx context.Context, out *console, l *lab, plugin string) *session {
	s := &session{ctx: ctx, out: out, plugin: plugin, env: l.environ(filepath.Dir(plugin))}
	// kubectl finds plugins by their file name on PATH.
	if filepath.Base(plugin) == "kubectl-xpkg" && l.env.Kubectl != "" {
		s.kubectl = l.env.Kubectl
	}
	return s
}

// xpkg shows and runs `kubectl xpkg ARGS`, streaming its output.
func (s *session) xpkg(timeout time.Duration, args ...string) *result {
	if s.kubectl != "" {
		return s.run(timeout, "kubectl", s.kubectl, append([]string{"xpkg"}, args...))
	}
	fmt.Fprintf(s.out, "$ kubectl xpkg %s\n", shellJoin(args))
	return s.exec(timeout, s.plugin, args)
}

// run shows `name ARGS` and runs bin with args.
func (s *session) run(timeout time.Duration, name, bin string, args []string) *result {
	fmt.Fprintf(s.out, "$ %s %s\n", name, shellJoin(args))
	return s.exec(timeout, bin, args)
}

func (s *session) exec(timeout time.Duration, bin string, args []string) *result {
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = s.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout = io.MultiWriter(s.out, &stdout)
	cmd.Stderr = io.MultiWriter(s.out, &stderr)
	err := cmd.Run()
	s.out.endLine()
	r := &result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.err = fmt.Errorf("stopped after %s: %w", timeout, ctx.Err())
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		r.err = err
	}
	return r
}

// shellJoin quotes the arguments that a shell would otherwise split or
// expand, so that the commands shown can be pasted.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// step shows a step's title and narration, runs it, and prints and records
// its verdict. It returns whether the step passed; after Ctrl-C it runs
// nothing more.
func (s *session) step(title, narration string, body func(v *verdict)) bool {
	if s.ctx.Err() != nil {
		return false
	}
	fmt.Fprintf(s.out, "\n── %d. %s\n# %s\n", len(s.results)+1, title, narration)
	v := &verdict{}
	body(v)
	s.out.endLine()
	if s.ctx.Err() != nil {
		fmt.Fprintln(s.out, "– interrupted")
		return false
	}
	o := outcome{title: title, passed: len(v.bad) == 0}
	if o.passed {
		o.why = strings.Join(v.ok, "; ")
		fmt.Fprintf(s.out, "✔ %s\n", o.why)
	} else {
		o.why = strings.Join(v.bad, "; ")
		fmt.Fprintf(s.out, "✘ %s\n", o.why)
	}
	s.results = append(s.results, o)
	return o.passed
}

// skip records a step that cannot run because an earlier one failed.
func (s *session) skip(title, why string) {
	if s.ctx.Err() != nil {
		return
	}
	fmt.Fprintf(s.out, "\n── %d. %s\n✘ skipped: %s\n", len(s.results)+1, title, why)
	s.results = append(s.results, outcome{title: title, why: "skipped: " + why})
}

// passed says whether there were steps and every one passed.
func (s *session) passed() bool {
	for _, o := range s.results {
		if !o.passed {
			return false
		}
	}
	return len(s.results) > 0
}

// summary prints the failed steps, if any, and the score: the last line.
func (s *session) summary(took time.Duration) {
	failed := 0
	for _, o := range s.results {
		if !o.passed {
			failed++
		}
	}
	fmt.Fprintln(s.out)
	if failed > 0 {
		fmt.Fprintln(s.out, "Failed steps:")
		for i, o := range s.results {
			if !o.passed {
				fmt.Fprintf(s.out, "  %d. %s: %s\n", i+1, o.title, o.why)
			}
		}
	}
	fmt.Fprintf(s.out, "demo: took %s\n", took.Round(time.Second))
	fmt.Fprintf(s.out, "demo: %d steps, %d passed, %d failed\n", len(s.results), len(s.results)-failed, failed)
}

// verdict collects what a step's checks found: what it did as it says,
// and what it did not.
type verdict struct{ ok, bad []string }

func (v *verdict) pass(format string, a ...any) { v.ok = append(v.ok, fmt.Sprintf(format, a...)) }
func (v *verdict) fail(format string, a ...any) { v.bad = append(v.bad, fmt.Sprintf(format, a...)) }

// exit checks the exit status; meaning says what the wanted one means.
func (v *verdict) exit(r *result, want int, meaning string) bool {
	switch {
	case r.err != nil:
		v.fail("%v", r.err)
		return false
	case r.code != want:
		v.fail("exit %d, want %d (%s)", r.code, want, meaning)
		return false
	}
	v.pass("exit %d (%s)", want, meaning)
	return true
}

// says checks that an output (named by what) holds every one of wants;
// claim says what that shows.
func (v *verdict) says(what, got, claim string, wants ...string) bool {
	var missing []string
	for _, w := range wants {
		if !strings.Contains(got, w) {
			missing = append(missing, fmt.Sprintf("%q", w))
		}
	}
	if len(missing) > 0 {
		v.fail("%s lacks %s", what, strings.Join(missing, ", "))
		return false
	}
	v.pass("%s", claim)
	return true
}

// cluster records a check of the cluster's state: err is what is wrong.
func (v *verdict) cluster(err error, claim string) bool {
	if err != nil {
		v.fail("cluster: %v", err)
		return false
	}
	v.pass("cluster: %s", claim)
	return true
}
