package plugin

import (
	"bytes"
	"strings"
	"testing"
)

// TestMirrorProgress: the progress line counts what was sent, a package's
// line clears it first, and stopping clears what is shown; without a
// terminal nothing is drawn.
func TestMirrorProgress(t *testing.T) {
	var term, out bytes.Buffer
	p := startMirrorProgress(&term, 2)
	p.add(1536)
	p.add(-512) // a blob that failed is taken back
	p.draw()
	if !strings.HasSuffix(term.String(), "\r\x1b[KMirroring: 0 of 2 package(s) done, 1.0 KiB sent") {
		t.Errorf("progress: %q", term.String())
	}
	p.line(&term, "Mirrored a")
	p.draw()
	p.stop()
	if want := "\r\x1b[KMirrored a\n\r\x1b[KMirroring: 1 of 2 package(s) done, 1.0 KiB sent\r\x1b[K"; !strings.HasSuffix(term.String(), want) {
		t.Errorf("after a package and the stop: %q, want it to end %q", term.String(), want)
	}
	quiet := startMirrorProgress(nil, 1)
	quiet.add(10)
	quiet.line(&out, "Mirrored b")
	quiet.stop()
	if out.String() != "Mirrored b\n" {
		t.Errorf("without a terminal: %q", out.String())
	}
}
