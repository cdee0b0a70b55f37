//go:build linux

package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// TestHelpWrapsToTheTerminal: on a terminal, help's description is wrapped
// as kubectl wraps its own (at 100 columns on a terminal 100 to 119 wide);
// into a pipe each paragraph stays one line, for scripts.
func TestHelpWrapsToTheTerminal(t *testing.T) {
	x := clitest.New(t)
	desc := func(out string) []string {
		before, _, ok := strings.Cut(out, "\nUsage:")
		if !ok {
			t.Fatalf("no Usage: in help:\n%s", out)
		}
		return strings.Split(strings.TrimSpace(before), "\n")
	}
	longest := func(lines []string) int {
		n := 0
		for _, l := range lines {
			n = max(n, utf8.RuneCountInString(strings.TrimRight(l, "\r")))
		}
		return n
	}
	tty := desc(x.RunTTYColumns(110, "upgrade", "--help").Succeeds(t).Stdout)
	if n := longest(tty); n > 100 || n < 80 {
		t.Errorf("on a 110-column terminal the longest line of the description is %d columns, want 80 to 100:\n%s", n, strings.Join(tty, "\n"))
	}
	piped := desc(x.Run("upgrade", "--help").Succeeds(t).Stdout)
	if n := longest(piped); n <= 100 {
		t.Errorf("piped, the longest line is %d columns: paragraphs were broken", n)
	}
	if len(tty) <= len(piped) {
		t.Errorf("the terminal's description has %d lines, the pipe's %d", len(tty), len(piped))
	}
}
