package diff

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
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

// TestUnifiedAppliesLikePatch checks random edits by applying each diff
// with applyUnified, a strict patch(1) for unified diffs written apart from
// Unified: the result must be the new text.
func TestUnifiedAppliesLikePatch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	applied := 0
	for i := range 200 {
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
		for range r.IntN(3) { // lines added at the end
			b = append(b, "y\n")
		}
		d := Unified("f", "f", a, b, r.IntN(4))
		if d == "" {
			if !slices.Equal(a, b) {
				t.Fatalf("case %d: no diff for different texts", i)
			}
			continue
		}
		got, err := applyUnified(a, d)
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, d)
		}
		if !slices.Equal(got, b) {
			t.Fatalf("case %d: patched text differs\n%s", i, d)
		}
		applied++
	}
	if applied < 150 {
		t.Fatalf("only %d of 200 random cases had a diff to apply", applied)
	}
}

// TestApplyUnifiedRefuses keeps the checker honest: it must refuse what
// patch(1) refuses, or TestUnifiedAppliesLikePatch could pass on wrong diffs.
func TestApplyUnifiedRefuses(t *testing.T) {
	a := lines("a\nb\nc\n")
	for name, d := range map[string]string{
		"context differs":    "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-x\n+y\n",
		"count too small":    "--- f\n+++ f\n@@ -1,1 +1,1 @@\n a\n-b\n+y\n",
		"new start wrong":    "--- f\n+++ f\n@@ -2 +3 @@\n-b\n+y\n",
		"past the end":       "--- f\n+++ f\n@@ -3,2 +3,2 @@\n c\n-d\n+e\n",
		"hunks out of order": "--- f\n+++ f\n@@ -3 +3 @@\n-c\n+z\n@@ -1 +1 @@\n-a\n+z\n",
		"no header":          "@@ -1 +1 @@\n-a\n+z\n",
		"bad line":           "--- f\n+++ f\n@@ -1 +1 @@\n?a\n",
	} {
		if _, err := applyUnified(a, d); err == nil {
			t.Errorf("%s: applied\n%s", name, d)
		}
	}
	got, err := applyUnified(a, "--- f\n+++ f\n@@ -0,0 +1 @@\n+z\n@@ -3 +4,2 @@\n c\n+d\n")
	if err != nil || strings.Join(got, "") != "z\na\nb\nc\nd\n" {
		t.Errorf("insertions at both ends: %q, %v", got, err)
	}
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)

// applyUnified applies a unified diff to a the way `patch` does with no
// fuzz and no offset: every hunk must sit exactly where its header says,
// its context and removed lines must match a, and its line counts must
// match its body.
func applyUnified(a []string, d string) ([]string, error) {
	ls := lines(d)
	if len(ls) < 2 || !strings.HasPrefix(ls[0], "--- ") || !strings.HasPrefix(ls[1], "+++ ") {
		return nil, fmt.Errorf("no ---/+++ header")
	}
	var out []string
	next, delta := 0, 0 // next unread line of a; new minus old lines so far
	for i := 2; i < len(ls); {
		m := hunkHeader.FindStringSubmatch(ls[i])
		if m == nil {
			return nil, fmt.Errorf("line %d: not a hunk header: %q", i+1, ls[i])
		}
		oldStart, oldN := parseRange(m[1], m[2])
		newStart, newN := parseRange(m[3], m[4])
		at := oldStart - 1 // 0-based index of the hunk's first old line
		if oldN == 0 {
			at = oldStart // an empty old range names the line it follows
		}
		wantNew := at + delta + 1
		if newN == 0 {
			wantNew--
		}
		if at < next || at > len(a) || newStart != wantNew {
			return nil, fmt.Errorf("hunk %q out of place (next line %d, new start %d)", ls[i], next+1, wantNew)
		}
		out = append(out, a[next:at]...)
		next = at
		i++
		var gotOld, gotNew int
		for ; i < len(ls) && !strings.HasPrefix(ls[i], "@@"); i++ {
			l := ls[i]
			switch l[0] {
			case ' ', '-':
				if next >= len(a) || a[next] != l[1:] {
					return nil, fmt.Errorf("hunk line %q does not match the text", l)
				}
				if l[0] == ' ' {
					out = append(out, a[next])
					gotNew++
				}
				next++
				gotOld++
			case '+':
				out = append(out, l[1:])
				gotNew++
			default:
				return nil, fmt.Errorf("not a hunk line: %q", l)
			}
		}
		if gotOld != oldN || gotNew != newN {
			return nil, fmt.Errorf("hunk %q has %d old and %d new lines", m[0], gotOld, gotNew)
		}
		delta += newN - oldN
	}
	return append(out, a[next:]...), nil
}

func parseRange(start, n string) (int, int) {
	s, _ := strconv.Atoi(start)
	if n == "" {
		return s, 1
	}
	c, _ := strconv.Atoi(n)
	return s, c
}
