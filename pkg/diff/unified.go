package diff

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// unified is a unified diff (3 lines of context) of the two objects'
// normalised YAML: keys sorted, comments and formatting gone, so that only
// changes of meaning show.
func unified(o, n *xpkg.Object) string {
	a, b := normalise(o), normalise(n)
	label := o.GVK().Kind + "/" + o.Name()
	return Unified("old/"+label, "new/"+label, a, b, 3)
}

func normalise(o *xpkg.Object) []string {
	b, err := yaml.Marshal(o.Content)
	if err != nil {
		b = o.Raw
	}
	return strings.SplitAfter(strings.TrimSuffix(string(b), "\n")+"\n", "\n")
}

// op is one line of an edit script.
type op struct {
	kind byte // ' ', '-' or '+'
	line string
}

// Unified renders the edit script from a to b (lines ending in "\n") as
// a unified diff with ctx lines of context; "" when they are equal.
func Unified(aName, bName string, a, b []string, ctx int) string {
	ops := editScript(a, b)
	var sb strings.Builder
	for start := 0; start < len(ops); {
		// Find the next change, then the hunk around it.
		for start < len(ops) && ops[start].kind == ' ' {
			start++
		}
		if start == len(ops) {
			break
		}
		from := max(start-ctx, 0)
		end := start
		for i := start; i < len(ops); i++ {
			if ops[i].kind != ' ' {
				end = i
			} else if i-end > 2*ctx {
				break
			}
		}
		to := min(end+ctx+1, len(ops))
		if sb.Len() == 0 {
			fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
		}
		writeHunk(&sb, ops, from, to)
		start = to
	}
	return sb.String()
}

func writeHunk(sb *strings.Builder, ops []op, from, to int) {
	aStart, bStart := 1, 1
	for _, o := range ops[:from] {
		if o.kind != '+' {
			aStart++
		}
		if o.kind != '-' {
			bStart++
		}
	}
	aLen, bLen := 0, 0
	for _, o := range ops[from:to] {
		if o.kind != '+' {
			aLen++
		}
		if o.kind != '-' {
			bLen++
		}
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, o := range ops[from:to] {
		sb.WriteByte(o.kind)
		sb.WriteString(o.line)
		if !strings.HasSuffix(o.line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// editScript is a shortest edit script from a to b, by Myers' O(ND)
// algorithm, with the common prefix and suffix taken off first.
func editScript(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []op
	for _, l := range a[:pre] {
		ops = append(ops, op{' ', l})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, op{' ', l})
	}
	return ops
}

// maxEdits bounds the edit distance searched: the frontiers saved cost
// O(D²) memory. Beyond it the diff replaces the lines wholesale.
const maxEdits = 2000

func myers(a, b []string) []op {
	n, m := len(a), len(b)
	offset := n + m + 1
	v := make([]int, 2*offset+2)
	var trace [][]int
	for d := 0; d <= n+m && d <= maxEdits; d++ {
		// Keep the frontier for k in [-d-1, d+1], what round d reads.
		trace = append(trace, append([]int(nil), v[offset-d-1:offset+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[offset+k-1] < v[offset+k+1] {
				x = v[offset+k+1]
			} else {
				x = v[offset+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[offset+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, d)
			}
		}
	}
	var ops []op
	for _, l := range a {
		ops = append(ops, op{'-', l})
	}
	for _, l := range b {
		ops = append(ops, op{'+', l})
	}
	return ops
}

// backtrack walks the saved frontiers from the end to the start.
func backtrack(trace [][]int, a, b []string, d int) []op {
	x, y := len(a), len(b)
	var rev []op
	for ; d > 0; d-- {
		frontier := trace[d]
		v := func(k int) int { return frontier[k+d+1] }
		k := x - y
		var prevK int
		if k == -d || k != d && v(k-1) < v(k+1) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := v(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, op{' ', a[x]})
		}
		if x == prevX {
			y--
			rev = append(rev, op{'+', b[y]})
		} else {
			x--
			rev = append(rev, op{'-', a[x]})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{' ', a[x]})
	}
	out := make([]op, len(rev))
	for i, o := range rev {
		out[len(rev)-1-i] = o
	}
	return out
}
