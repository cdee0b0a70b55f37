package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// eventResource is where the API server keeps events.
var eventResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// addWarnings sets each definition's newest Warning event since the
// given time, and its Failure when that is terminal: one list of events
// for each kind. Events are a hint: a list that fails adds nothing.
func (c *Cluster) addWarnings(ctx context.Context, defs []Definition, since time.Time) {
	byKind := map[string]map[string]*unstructured.Unstructured{}
	for _, def := range defs {
		if _, ok := byKind[def.Ref.Kind]; !ok {
			byKind[def.Ref.Kind] = c.newestWarnings(ctx, def.Ref.Kind, since)
		}
	}
	for i := range defs {
		e := byKind[defs[i].Ref.Kind][defs[i].Ref.Name]
		if e == nil || defs[i].stale {
			continue
		}
		reason, _, _ := unstructured.NestedString(e.Object, "reason")
		msg, _, _ := unstructured.NestedString(e.Object, "message")
		defs[i].Warning = reason + ": " + msg
		if terminalWarning(e) {
			defs[i].Failure = defs[i].Warning
		}
	}
}

// newestWarnings maps the objects of a kind to their newest Warning
// event since the given time.
func (c *Cluster) newestWarnings(ctx context.Context, kind string, since time.Time) map[string]*unstructured.Unstructured {
	sel := fmt.Sprintf("involvedObject.kind=%s,type=Warning", kind)
	l, err := c.dyn.Resource(eventResource).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range l.Items {
		e := &l.Items[i]
		name, _, _ := unstructured.NestedString(e.Object, "involvedObject", "name")
		t := eventTime(e)
		if t.Before(since.Truncate(time.Second)) {
			continue
		}
		if prev := out[name]; prev == nil || t.After(eventTime(prev)) {
			out[name] = e
		}
	}
	return out
}

// terminalWarning tells a warning that will not go away by itself: the
// API server rejected what the controller applies as invalid (it will
// reject it again), or the controller has failed the same way at least
// three times, backing off in between. A conflict while a definition is
// first created (its CRD "already exists") clears on the next try.
func terminalWarning(e *unstructured.Unstructured) bool {
	msg, _, _ := unstructured.NestedString(e.Object, "message")
	if strings.Contains(msg, "Invalid value") || strings.Contains(msg, " is invalid") {
		return true
	}
	n, _, _ := unstructured.NestedInt64(e.Object, "count")
	if sn, ok, _ := unstructured.NestedInt64(e.Object, "series", "count"); ok {
		n = max(n, sn)
	}
	return n >= 3
}
