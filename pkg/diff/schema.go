package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// schemaWalker compares two OpenAPI v3 schemas of one API version field by
// field, collecting classified changes. Paths name fields the way kubectl
// explain does (spec.forProvider.region), with [*] for list items and .*
// for map values.
type schemaWalker struct {
	version      string
	changes      []Change
	descriptions int
}

func (w *schemaWalker) add(rule, path, format string, args ...any) {
	c := newChange(rule, path, fmt.Sprintf(format, args...))
	c.Version = w.version
	w.changes = append(w.changes, c)
}

// handled are the keywords the walker classifies itself; any other
// keyword that differs is reported as schema-changed.
var handled = map[string]bool{
	"type": true, "enum": true, "default": true, "required": true, "properties": true, "items": true,
	"additionalProperties": true, "description": true, "x-kubernetes-preserve-unknown-fields": true,
	"x-kubernetes-int-or-string": true, "nullable": true, "pattern": true, "format": true,
	"x-kubernetes-validations": true, "maxLength": true, "maxItems": true, "maxProperties": true,
	"maximum": true, "minLength": true, "minItems": true, "minProperties": true, "minimum": true,
}

// walk compares two schemas node by node. It does not test whole subtrees
// for equality first: that would cost each subtree's size at every level
// above it, where the walk itself visits each node once.
func (w *schemaWalker) walk(path string, o, n map[string]any) {
	if o == nil || n == nil {
		return
	}
	at := path
	if at == "" {
		at = "."
	}
	if !equalJSON(o["description"], n["description"]) {
		w.descriptions++
	}
	w.compareType(at, o, n)
	w.compareEnum(at, o["enum"], n["enum"])
	w.compareDefault(at, o, n)
	w.compareBounds(at, o, n)
	w.compareRules(at, o["x-kubernetes-validations"], n["x-kubernetes-validations"])
	w.compareProperties(path, o, n)
	w.walkSub(at, path+"[*]", "items", o, n)
	w.walkSub(at, join2(path, "*"), "additionalProperties", o, n)
	var other []string
	for k := range o {
		if !handled[k] && !equalJSON(o[k], n[k]) {
			other = append(other, k)
		}
	}
	for k := range n {
		if _, inOld := o[k]; !inOld && !handled[k] {
			other = append(other, k)
		}
	}
	slices.Sort(other)
	for _, k := range other {
		w.add(RuleSchemaChanged, at, "%s changed from %s to %s", k, briefOrNone(o[k]), briefOrNone(n[k]))
	}
}

// walkSub descends into the item or map-value schema when both sides
// have one; a schema that appears, goes or turns into a boolean is a
// keyword change.
func (w *schemaWalker) walkSub(at, path, key string, o, n map[string]any) {
	os, ok1 := o[key].(map[string]any)
	ns, ok2 := n[key].(map[string]any)
	switch {
	case ok1 && ok2:
		w.walk(path, os, ns)
	case !equalJSON(o[key], n[key]):
		w.add(RuleSchemaChanged, at, "%s changed from %s to %s", key, briefOrNone(o[key]), briefOrNone(n[key]))
	}
}

func (w *schemaWalker) compareType(at string, o, n map[string]any) {
	ot, nt := schemaType(o), schemaType(n)
	switch {
	case ot == nt:
	case ot == "":
		w.add(RuleTypeChanged, at, "type %s imposed", nt)
	case nt == "":
		w.add(RuleSchemaChanged, at, "type %s lifted", ot)
	case nt == intOrString && (ot == "string" || ot == "integer"):
		w.add(RuleSchemaChanged, at, "type %s widened to %s", ot, nt)
	default:
		w.add(RuleTypeChanged, at, "type changed from %s to %s", ot, nt)
	}
	if o["x-kubernetes-preserve-unknown-fields"] == true && n["x-kubernetes-preserve-unknown-fields"] != true {
		w.add(RuleUnknownFieldsPruned, at, "no longer preserves unknown fields")
	}
	if o["nullable"] == true && n["nullable"] != true {
		w.add(RuleValidationTightened, at, "no longer nullable")
	} else if o["nullable"] != true && n["nullable"] == true {
		w.add(RuleValidationRelaxed, at, "became nullable")
	}
}

func (w *schemaWalker) compareEnum(at string, o, n any) {
	ol, _ := o.([]any)
	nl, _ := n.([]any)
	gone, came := setDiff(ol, nl), setDiff(nl, ol)
	switch {
	case len(nl) == 0 && len(ol) > 0:
		w.add(RuleEnumWidened, at, "enum lifted")
	case len(ol) == 0 && len(nl) > 0:
		w.add(RuleEnumNarrowed, at, "enum imposed: %s", briefList(nl))
	default:
		if len(gone) > 0 {
			w.add(RuleEnumNarrowed, at, "enum values removed: %s", briefList(gone))
		}
		if len(came) > 0 {
			w.add(RuleEnumWidened, at, "enum values added: %s", briefList(came))
		}
	}
}

func (w *schemaWalker) compareDefault(at string, o, n map[string]any) {
	od, hadOld := o["default"]
	nd, hasNew := n["default"]
	switch {
	case hadOld && !hasNew:
		w.add(RuleDefaultChanged, at, "default %s removed", brief(od))
	case !hadOld && hasNew:
		w.add(RuleDefaultAdded, at, "default %s added", brief(nd))
	case hadOld && !equalJSON(od, nd):
		w.add(RuleDefaultChanged, at, "default changed from %s to %s", brief(od), brief(nd))
	}
}

// Bounds: an upper bound that is added or lowered tightens, as does a
// lower bound that is added or raised; the reverse relaxes.
var (
	upperBounds = []string{"maxLength", "maxItems", "maxProperties", "maximum"}
	lowerBounds = []string{"minLength", "minItems", "minProperties", "minimum"}
	bounds      = append(slices.Clone(upperBounds), lowerBounds...)
)

func (w *schemaWalker) compareBounds(at string, o, n map[string]any) {
	for _, k := range bounds {
		ov, hadOld := number(o[k])
		nv, hasNew := number(n[k])
		if hadOld == hasNew && ov == nv {
			continue
		}
		upper := slices.Contains(upperBounds, k)
		tighter := !hadOld || hasNew && (upper && nv < ov || !upper && nv > ov)
		msg := fmt.Sprintf("%s %s → %s", k, briefOrNone(o[k]), briefOrNone(n[k]))
		if hasNew && tighter {
			w.add(RuleValidationTightened, at, "%s", msg)
		} else {
			w.add(RuleValidationRelaxed, at, "%s", msg)
		}
	}
	for _, k := range []string{"pattern", "format"} {
		ov, nv := o[k], n[k]
		switch {
		case equalJSON(ov, nv):
		case nv == nil:
			w.add(RuleValidationRelaxed, at, "%s %s lifted", k, brief(ov))
		default:
			w.add(RuleValidationTightened, at, "%s %s → %s", k, briefOrNone(ov), brief(nv))
		}
	}
}

// compareRules compares CEL rules (x-kubernetes-validations) by their
// rule text: a new rule can refuse objects the old schema accepted.
func (w *schemaWalker) compareRules(at string, o, n any) {
	ruleText := func(v any) []any {
		l, _ := v.([]any)
		var out []any
		for _, r := range l {
			m, _ := r.(map[string]any)
			out = append(out, m["rule"])
		}
		return out
	}
	or, nr := ruleText(o), ruleText(n)
	for _, r := range setDiff(nr, or) {
		w.add(RuleValidationTightened, at, "CEL rule added: %s", brief(r))
	}
	for _, r := range setDiff(or, nr) {
		w.add(RuleValidationRelaxed, at, "CEL rule removed: %s", brief(r))
	}
}

func (w *schemaWalker) compareProperties(path string, o, n map[string]any) {
	op, _ := o["properties"].(map[string]any)
	np, _ := n["properties"].(map[string]any)
	oreq, nreq := stringSet(o["required"]), stringSet(n["required"])
	for _, k := range unionKeys(op, np) {
		field := join2(path, k)
		os, inOld := op[k].(map[string]any)
		ns, inNew := np[k].(map[string]any)
		switch {
		case !inNew:
			w.add(RuleFieldRemoved, field, "field removed")
		case !inOld && nreq[k]:
			w.add(RuleFieldRequired, field, "required field added (%s)", typeOf(ns))
		case !inOld:
			w.add(RuleFieldAdded, field, "field added (%s)", typeOf(ns))
		default:
			if nreq[k] && !oreq[k] {
				w.add(RuleFieldRequired, field, "became required")
			} else if oreq[k] && !nreq[k] {
				w.add(RuleFieldOptional, field, "no longer required")
			}
			w.walk(field, os, ns)
		}
	}
}

const intOrString = "int-or-string"

// schemaType is a schema's type, int-or-string included; "" when untyped.
func schemaType(s map[string]any) string {
	if s["x-kubernetes-int-or-string"] == true {
		return intOrString
	}
	t, _ := s["type"].(string)
	return t
}

func typeOf(s map[string]any) string {
	if t, ok := s["type"].(string); ok {
		if t == "array" {
			if items, ok := s["items"].(map[string]any); ok {
				return "array of " + typeOf(items)
			}
		}
		return t
	}
	if t := schemaType(s); t != "" {
		return t
	}
	return "untyped"
}

func stringSet(v any) map[string]bool {
	l, _ := v.([]any)
	m := map[string]bool{}
	for _, s := range l {
		if s, ok := s.(string); ok {
			m[s] = true
		}
	}
	return m
}

// setDiff is the items of a that are not in b, in a's order.
func setDiff(a, b []any) []any {
	var out []any
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y any) bool { return equalJSON(x, y) }) {
			out = append(out, x)
		}
	}
	return out
}

func briefList(l []any) string {
	s := make([]string, len(l))
	for i, v := range l {
		s[i] = brief(v)
	}
	return list(s, 8)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// equalJSON compares decoded values, treating numbers by value whatever
// their Go type.
func equalJSON(a, b any) bool {
	if an, ok := number(a); ok {
		bn, ok := number(b)
		return ok && an == bn
	}
	return reflect.DeepEqual(a, b)
}
