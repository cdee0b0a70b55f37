package diff

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func lines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	return l[:len(l)-1]
}

func TestUnified(t *testing.T) {
	a := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	b := "a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\n"
	got := Unified("old", "new", lines(a), lines(b), 1)
	want := "--- old\n+++ new\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -10 +10,2 @@\n j\n+k\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if d := Unified("old", "new", lines(a), lines(a), 3); d != "" {
		t.Errorf("equal inputs: %q", d)
	}
}

// TestUnifiedAppliesLikePatch checks random edits by applying the diff
// with patch(1), when it is installed: the result must be the new text.
func TestUnifiedAppliesLikePatch(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		// make test (which sets XPKG_BINARY) must run it: .ci/run installs patch.
		if os.Getenv("XPKG_BINARY") != "" {
			t.Fatal("patch(1) is not installed: apt-get install patch")
		}
		t.Skip("patch(1) is not installed")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		var a, b []string
		for range r.IntN(60) {
			l := string(rune('a'+r.IntN(6))) + "\n"
			a = append(a, l)
			switch r.IntN(4) {
			case 0: // dropped
			case 1:
				b = append(b, "x"+l)
			default:
				b = append(b, l)
			}
		}
		dir := t.TempDir()
		f := filepath.Join(dir, "f")
		os.WriteFile(f, []byte(strings.Join(a, "")), 0o644)
		d := Unified("f", "f", a, b, 3)
		if d == "" {
			continue
		}
		cmd := exec.Command(patch, "-s", f)
		cmd.Stdin = strings.NewReader(d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: patch: %v: %s\n%s", i, err, out, d)
		}
		got, _ := os.ReadFile(f)
		if string(got) != strings.Join(b, "") {
			t.Fatalf("case %d: patched text differs\n%s", i, d)
		}
	}
}
