// Package diff compares two parsed packages semantically: which objects
// were added, removed or changed (matched by kind and name), and for CRDs
// and XRDs which API versions appeared, disappeared, or stopped being
// served or stored. Every change is classified breaking or compatible, with
// the rule that decided it.
package diff

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// Severity of a change for an upgrade from the old package to the new.
type Severity string

// Severities.
const (
	Breaking   Severity = "breaking"
	Compatible Severity = "compatible"
)

// Change is one difference between the packages.
type Change struct {
	// Object is "Kind name" of the object changed ("" for the package).
	Object   string   `json:"object"`
	Path     string   `json:"path,omitempty"`
	Message  string   `json:"message"`
	Severity Severity `json:"severity"`
	// Rule names the rule that classified the change.
	Rule string `json:"rule"`
}

func (c Change) String() string {
	where := c.Object
	if c.Path != "" {
		where += " " + c.Path
	}
	return fmt.Sprintf("%s: %s [%s, %s]", where, c.Message, c.Severity, c.Rule)
}

// Report is the comparison of two packages.
type Report struct {
	Changes []Change `json:"changes"`
}

// Breaking tells whether any change breaks an upgrade.
func (r *Report) Breaking() bool {
	return slices.ContainsFunc(r.Changes, func(c Change) bool { return c.Severity == Breaking })
}

// Rules, as Change.Rule names them.
const (
	RuleObjectAdded      = "object-added"
	RuleObjectRemoved    = "object-removed"
	RuleObjectChanged    = "object-changed"
	RuleVersionAdded     = "version-added"
	RuleVersionRemoved   = "version-removed"
	RuleVersionUnserved  = "version-no-longer-served"
	RuleVersionServed    = "version-served-again"
	RuleStorageMoved     = "storage-version-moved"
	RuleDefinitionRemove = "definition-removed"
)

// key identifies an object across the two packages.
func key(o *xpkg.Object) string {
	return o.GVK().GroupKind().String() + "/" + o.Name()
}

func label(o *xpkg.Object) string {
	return strings.TrimSpace(o.GVK().Kind + " " + o.Name())
}

// Compare diffs old against new.
func Compare(old, new *xpkg.Package) *Report {
	r := &Report{}
	olds, news := index(old), index(new)
	for _, k := range sortedKeys(olds) {
		o := olds[k]
		n, ok := news[k]
		switch {
		case !ok:
			r.Changes = append(r.Changes, removed(o))
		case bytes.Equal(o.Raw, n.Raw):
			// Byte-identical documents: nothing to compare.
		default:
			r.Changes = append(r.Changes, changed(o, n)...)
		}
	}
	for _, k := range sortedKeys(news) {
		if _, ok := olds[k]; !ok {
			r.Changes = append(r.Changes, Change{Object: label(news[k]), Message: "added", Severity: Compatible, Rule: RuleObjectAdded})
		}
	}
	return r
}

func index(p *xpkg.Package) map[string]*xpkg.Object {
	m := map[string]*xpkg.Object{}
	for _, o := range p.Objects {
		m[key(o)] = o
	}
	return m
}

func sortedKeys(m map[string]*xpkg.Object) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// removed: a definition that goes takes its API, and every object of it,
// with it; other objects going is compatible for the package manager.
func removed(o *xpkg.Object) Change {
	c := Change{Object: label(o), Message: "removed", Severity: Compatible, Rule: RuleObjectRemoved}
	if isDefinition(o) {
		c.Severity, c.Rule = Breaking, RuleDefinitionRemove
		c.Message = "removed: the API it defines goes, with any object of it in the cluster"
	}
	return c
}

func changed(o, n *xpkg.Object) []Change {
	if isDefinition(o) && isDefinition(n) {
		if cs := compareVersions(o, n); len(cs) > 0 {
			return cs
		}
	}
	return []Change{{Object: label(o), Message: "changed", Severity: Compatible, Rule: RuleObjectChanged}}
}

func isDefinition(o *xpkg.Object) bool {
	k := o.GVK().Kind
	return k == "CustomResourceDefinition" || k == "CompositeResourceDefinition"
}
