// Package composition reads what a Composition composes: the kinds of the
// resources its templates make, as Crossplane's own functions and its v1
// Resources mode name them, and what it cannot tell (a function input it
// does not understand, a kind that is itself templated). It is pure: it
// reads an object, never a cluster.
package composition

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Composition is what one Composition composes, as far as it can be read.
type Composition struct {
	Name string
	// Source is where it was read: "" for the cluster, else a file's
	// path and line.
	Source string
	// Composes are the kinds of the resource templates it holds, in the
	// order first met.
	Composes []schema.GroupKind
	// Unread say what could not be read fully, one sentence each: the
	// kinds in Composes are then the ones it could see.
	Unread []string
}

// Where names the Composition for messages: "Composition NAME" and, for
// one read from a file, where.
func (c Composition) Where() string {
	if c.Source == "" {
		return "Composition " + c.Name
	}
	return "Composition " + c.Name + " (" + c.Source + ")"
}

// Function input groups whose resources this reads exactly, and those of
// functions that compose nothing (they read or order what others make).
const (
	patchAndTransform = "pt.fn.crossplane.io"
	goTemplating      = "gotemplating.fn.crossplane.io"
)

var composeNothing = map[string]bool{
	"environmentconfigs.fn.crossplane.io": true, // function-environment-configs
	"extra-resources.fn.crossplane.io":    true, // function-extra-resources
	"sequencer.fn.crossplane.io":          true, // function-sequencer
	"auto-ready.fn.crossplane.io":         true, // function-auto-ready
}

// Read reads the Composition obj (a decoded object) found at source.
func Read(obj map[string]any, source string) Composition {
	u := &unstructured.Unstructured{Object: obj}
	c := Composition{Name: u.GetName(), Source: source}
	steps, _, _ := unstructured.NestedSlice(obj, "spec", "pipeline")
	for i, st := range steps {
		m, _ := st.(map[string]any)
		c.step(i, m)
	}
	// Crossplane v1's Resources mode: each resource's base.
	resources, _, _ := unstructured.NestedSlice(obj, "spec", "resources")
	c.bases("spec.resources", resources)
	return c
}

func (c *Composition) add(gk schema.GroupKind) {
	if !slices.Contains(c.Composes, gk) {
		c.Composes = append(c.Composes, gk)
	}
}

// step reads one pipeline step's input.
func (c *Composition) step(i int, m map[string]any) {
	name, _ := m["step"].(string)
	if name == "" {
		name = fmt.Sprint(i)
	}
	in, ok := m["input"].(map[string]any)
	if !ok {
		return // a function without input composes from its own code: none of Crossplane's does
	}
	av, _ := in["apiVersion"].(string)
	kind, _ := in["kind"].(string)
	group := schema.FromAPIVersionAndKind(av, kind).Group
	switch {
	case group == patchAndTransform:
		resources, _ := in["resources"].([]any)
		c.bases("step "+name, resources)
	case group == goTemplating:
		c.template(name, in)
	case composeNothing[group]:
	default:
		seen := len(c.Composes)
		for k, v := range in {
			if k != "apiVersion" && k != "kind" {
				kinds(v, c.add)
			}
		}
		c.Unread = append(c.Unread, fmt.Sprintf("step %s: its function's input %s is not one this reads%s", name, inputName(kind, group), sawKinds(c.Composes[seen:])))
	}
}

func inputName(kind, group string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}

func sawKinds(gks []schema.GroupKind) string {
	if len(gks) == 0 {
		return ""
	}
	var names []string
	for _, gk := range gks {
		names = append(names, gk.String())
	}
	return "; the kinds seen in it: " + strings.Join(names, ", ")
}

// bases reads the base of each resource template; one without an
// apiVersion and kind is unread.
func (c *Composition) bases(where string, resources []any) {
	for j, r := range resources {
		m, _ := r.(map[string]any)
		base, _ := m["base"].(map[string]any)
		av, _ := base["apiVersion"].(string)
		kind, _ := base["kind"].(string)
		if av == "" || kind == "" {
			name, _ := m["name"].(string)
			if name == "" {
				name = fmt.Sprint(j)
			}
			c.Unread = append(c.Unread, fmt.Sprintf("%s: resource %s has no base apiVersion and kind", where, name))
			continue
		}
		c.add(schema.FromAPIVersionAndKind(av, kind).GroupKind())
	}
}

// template reads function-go-templating's inline template: the apiVersion
// and kind at the top of each YAML document it writes, when they are
// written out; a templated one, or a template read from elsewhere, is
// unread.
func (c *Composition) template(step string, in map[string]any) {
	source, _ := in["source"].(string)
	text, _, _ := unstructured.NestedString(in, "inline", "template")
	if (source != "" && source != "Inline") || text == "" {
		c.Unread = append(c.Unread, fmt.Sprintf("step %s: its go-templating input reads its template from %s, not inline", step, cmp.Or(source, "elsewhere")))
		return
	}
	templated := false
	for _, doc := range strings.Split("\n"+text, "\n---") {
		var av, kind string
		for _, line := range strings.Split(doc, "\n") {
			// Only unindented keys: a document's own, not those of objects
			// nested in it.
			k, v, ok := strings.Cut(line, ":")
			if !ok || strings.HasPrefix(k, " ") || strings.HasPrefix(k, "\t") {
				continue
			}
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			switch strings.TrimSpace(k) {
			case "apiVersion":
				av = v
			case "kind":
				kind = v
			}
		}
		switch {
		case av == "" && kind == "":
		case strings.Contains(av+kind, "{{") || av == "" || kind == "":
			templated = true
		default:
			c.add(schema.FromAPIVersionAndKind(av, kind).GroupKind())
		}
	}
	if templated {
		c.Unread = append(c.Unread, fmt.Sprintf("step %s: its go-templating template writes a kind or apiVersion that is itself templated", step))
	}
}

// kinds calls add for the group and kind of every object in v (and
// within them) that names an apiVersion and a kind.
func kinds(v any, add func(schema.GroupKind)) {
	switch t := v.(type) {
	case map[string]any:
		av, _ := t["apiVersion"].(string)
		if k, _ := t["kind"].(string); av != "" && k != "" {
			add(schema.FromAPIVersionAndKind(av, k).GroupKind())
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range t {
				if !yield(k) {
					return
				}
			}
		}) {
			kinds(t[k], add)
		}
	case []any:
		for _, x := range t {
			kinds(x, add)
		}
	}
}
