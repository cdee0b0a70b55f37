//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// TestDiffColourOnATerminal: colour on a terminal by default, none with
// NO_COLOR set or TERM=dumb, and --color=never beats the terminal.
func TestDiffColourOnATerminal(t *testing.T) {
	a, b := sampleDir(t, "provider-nop", "v0.2.1"), sampleDir(t, "provider-nop", "v0.4.0")
	x := clitest.New(t).Setenv("TERM", "xterm").Setenv("NO_COLOR", "")
	r := x.RunTTY("diff", a, b).Fails(t, 3)
	if !strings.Contains(r.Stdout, "\x1b[31mBREAKING") {
		t.Errorf("no colour on a terminal:\n%q", r.Stdout)
	}
	if r := x.RunTTY("diff", a, b, "--color=never").Fails(t, 3); strings.Contains(r.Stdout, "\x1b[") {
		t.Error("--color=never coloured")
	}
	if r := x.Setenv("NO_COLOR", "1").RunTTY("diff", a, b).Fails(t, 3); strings.Contains(r.Stdout, "\x1b[") || !strings.Contains(r.Stdout, "BREAKING") {
		t.Errorf("NO_COLOR ignored:\n%q", r.Stdout)
	}
	if r := x.Setenv("NO_COLOR", "").Setenv("TERM", "dumb").RunTTY("diff", a, b).Fails(t, 3); strings.Contains(r.Stdout, "\x1b[") {
		t.Error("TERM=dumb coloured")
	}
}
