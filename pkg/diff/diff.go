// Package diff compares two parsed packages semantically: the package
// metadata (Crossplane constraint, dependencies, controller image,
// permission requests, annotations) and every object, matched by kind and
// name. Definitions (CRDs, XRDs, MRDs) are compared per API version down to
// single schema fields; Compositions and webhook configurations also get a
// unified diff of their normalised YAML. Every change is classified
// breaking or compatible by a named rule (see Rules).
package diff

import (
	"cmp"
	"reflect"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// key identifies an object across the two packages: group, kind and name,
// so that a CRD read as apiextensions.k8s.io/v1beta1 matches its v1 form.
func key(o *xpkg.Object) string {
	return o.GVK().GroupKind().String() + "/" + o.Name()
}

// Compare diffs old against new.
func Compare(old, new *xpkg.Package) *Report {
	r := &Report{Old: sideOf(old), New: sideOf(new)}
	if old.Meta != nil && new.Meta != nil {
		r.Package = compareMeta(old.Meta, new.Meta)
	}
	olds, news := index(old), index(new)
	var pairs [][2]*xpkg.Object
	for _, k := range sortedKeys(olds) {
		o := olds[k]
		if n, ok := news[k]; ok {
			pairs = append(pairs, [2]*xpkg.Object{o, n})
		} else {
			r.Objects = append(r.Objects, removed(o))
		}
	}
	changed := compareAll(pairs)
	r.Objects = append(r.Objects, changed...)
	slices.SortStableFunc(r.Objects, func(a, b ObjectDiff) int {
		return cmpLabel(a, b)
	})
	for _, k := range sortedKeys(news) {
		if _, ok := olds[k]; !ok {
			r.Objects = append(r.Objects, added(news[k]))
		}
	}
	r.summarize(len(pairs) - len(changed))
	return r
}

func cmpLabel(a, b ObjectDiff) int {
	return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name))
}

func sideOf(p *xpkg.Package) Side {
	if p.Meta == nil {
		return Side{}
	}
	return Side{Kind: p.Meta.Kind, Name: p.Meta.Name()}
}

// compareAll compares the pairs on every CPU, keeping their order; it
// returns only the objects that changed.
func compareAll(pairs [][2]*xpkg.Object) []ObjectDiff {
	results := make([]*ObjectDiff, len(pairs))
	parallel(len(pairs), func(i int) {
		results[i] = compareObject(pairs[i][0], pairs[i][1])
	})
	var out []ObjectDiff
	for _, d := range results {
		if d != nil {
			out = append(out, *d)
		}
	}
	return out
}

// compareObject returns nil when the objects mean the same.
func compareObject(o, n *xpkg.Object) *ObjectDiff {
	if o == n || string(o.Raw) == string(n.Raw) {
		return nil
	}
	d := newObjectDiff(n, Changed)
	d.Changes = metadataChanges(o, n)
	// The definition rules read every field; the others need a whole
	// comparison first, to leave unchanged objects without a unified diff.
	definitions := isDefinition(o) && isDefinition(n)
	if !definitions && reflect.DeepEqual(o.Content, n.Content) {
		return nil
	}
	switch {
	case definitions:
		d.Changes = append(d.Changes, compareDefinition(o, n)...)
	case isComposition(n):
		d.Changes = append(d.Changes, compareComposition(o, n)...)
		d.Diff = unified(o, n)
	case isWebhook(n):
		if paths := changedPaths(o.Content, n.Content, ignoreMetadata); len(paths) > 0 {
			d.Changes = append(d.Changes, newChange(RuleWebhookChanged, "", "changed: "+list(paths, 6)))
		}
		d.Diff = unified(o, n)
	default:
		if paths := changedPaths(o.Content, n.Content, ignoreMetadata); len(paths) > 0 {
			d.Changes = append(d.Changes, newChange(RuleObjectChanged, "", "changed: "+list(paths, 6)))
		}
		d.Diff = unified(o, n)
	}
	if len(d.Changes) == 0 {
		// Only fields no rule reads (status, creationTimestamp) differ.
		return nil
	}
	return d
}

func newObjectDiff(o *xpkg.Object, status string) *ObjectDiff {
	gvk := o.GVK()
	return &ObjectDiff{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: o.Name(), Status: status}
}

func newChange(rule, path, msg string) Change {
	return Change{Path: path, Message: msg, Severity: RuleSeverity(rule), Rule: rule}
}

// index maps the package's objects, its meta object excepted, by key.
func index(p *xpkg.Package) map[string]*xpkg.Object {
	m := map[string]*xpkg.Object{}
	for _, o := range p.Objects {
		if !xpkg.IsMeta(o) {
			m[key(o)] = o
		}
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

func added(o *xpkg.Object) ObjectDiff {
	d := newObjectDiff(o, Added)
	d.Changes = []Change{newChange(RuleObjectAdded, "", "added")}
	return *d
}

// removed: a definition that goes takes its API, and every object of it,
// with it; a Composition that goes strands the composites that select it.
func removed(o *xpkg.Object) ObjectDiff {
	d := newObjectDiff(o, Removed)
	c := newChange(RuleObjectRemoved, "", "removed")
	switch {
	case isDefinition(o):
		c = newChange(RuleDefinitionRemoved, "", "removed: the API it defines goes, with every object of it in the cluster")
	case isComposition(o):
		c = newChange(RuleCompositionRemoved, "", "removed: composite resources that select it by name lose it")
	}
	d.Changes = []Change{c}
	return *d
}

func isDefinition(o *xpkg.Object) bool {
	switch o.GVK().Kind {
	case "CustomResourceDefinition", "CompositeResourceDefinition", "ManagedResourceDefinition":
		return true
	}
	return false
}

func isComposition(o *xpkg.Object) bool { return o.GVK().Kind == "Composition" }

func isWebhook(o *xpkg.Object) bool {
	k := o.GVK().Kind
	return k == "ValidatingWebhookConfiguration" || k == "MutatingWebhookConfiguration"
}
