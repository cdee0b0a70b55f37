package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// metadataChanges reports an object's labels and annotations that were
// added, removed or changed, one change per map.
func metadataChanges(o, n *xpkg.Object) []Change {
	om, _ := o.Content["metadata"].(map[string]any)
	nm, _ := n.Content["metadata"].(map[string]any)
	var out []Change
	for _, field := range []string{"labels", "annotations"} {
		ol, _ := om[field].(map[string]any)
		nl, _ := nm[field].(map[string]any)
		if notes := mapChanges(ol, nl); len(notes) > 0 {
			out = append(out, newChange(RuleMetadataChanged, "metadata."+field, list(notes, 4)))
		}
	}
	return out
}

// mapChanges describes the keys of two maps that differ, sorted.
func mapChanges(o, n map[string]any) []string {
	var notes []string
	for _, k := range unionKeys(o, n) {
		ov, inOld := o[k]
		nv, inNew := n[k]
		switch {
		case !inOld:
			notes = append(notes, fmt.Sprintf("%s=%s added", k, brief(nv)))
		case !inNew:
			notes = append(notes, k+" removed")
		case !reflect.DeepEqual(ov, nv):
			notes = append(notes, fmt.Sprintf("%s: %s → %s", k, brief(ov), brief(nv)))
		}
	}
	return notes
}

// unionKeys is the sorted keys of either map.
func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// brief renders a value for a message: strings bare, other values as JSON,
// cut to a readable length.
func brief(v any) string {
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "…"
	}
	if ok && (s == "" || strings.ContainsAny(s, " ,:")) {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// list joins items, naming at most max of them.
func list(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}

// ignoreMetadata skips what rules read elsewhere or what never matters to
// an upgrade: the object's metadata (labels and annotations have their own
// rule) and status.
func ignoreMetadata(path string) bool {
	return path == "metadata" || path == "status" || path == "apiVersion"
}

// changedPaths lists where two decoded documents differ, descending at
// most two levels (spec.conversion, spec.versions), skipping paths
// ignore matches. Maps are descended into before anything is compared, so
// that an ignored subtree (spec.versions) is never compared at all.
func changedPaths(o, n map[string]any, ignore func(string) bool) []string {
	var out []string
	var walk func(prefix string, o, n map[string]any, depth int)
	walk = func(prefix string, o, n map[string]any, depth int) {
		for _, k := range unionKeys(o, n) {
			p := join2(prefix, k)
			if ignore != nil && ignore(p) {
				continue
			}
			om, ok1 := o[k].(map[string]any)
			nm, ok2 := n[k].(map[string]any)
			switch {
			case ok1 && ok2 && depth < 2:
				walk(p, om, nm, depth+1)
			case !reflect.DeepEqual(o[k], n[k]):
				out = append(out, p)
			}
		}
	}
	walk("", o, n, 0)
	return out
}

func join2(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}
