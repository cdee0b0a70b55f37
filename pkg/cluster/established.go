package cluster

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// definitionResources are the kinds a revision installs that must be
// established before the package works, by resource name.
var definitionResources = map[string]string{
	"CustomResourceDefinition":    "customresourcedefinitions",
	"ManagedResourceDefinition":   "managedresourcedefinitions",
	"CompositeResourceDefinition": "compositeresourcedefinitions",
}

var eventResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// Definition is the state of one definition a revision installed.
type Definition struct {
	Ref installed.ObjectRef
	// State is Established, Inactive (an MRD left inactive on purpose),
	// or what is still missing.
	State string
	Ready bool
	// Warning is the newest Warning event on it; Failure is set when that
	// says it cannot get there (see terminalWarning).
	Warning, Failure string
	// stale: its conditions are about an older generation than its spec.
	stale bool
}

// WaitEstablished waits until every definition (CRD, MRD, XRD) the
// package's current revision installed is established (an MRD may be
// Inactive by choice; an XRD with claims must offer them too). Healthy
// conditions alone do not say so: a revision can be Healthy while its MRD
// cannot be applied. A Warning event on a definition since the wait began
// that will not go away by itself (terminalWarning) ends it as a failure,
// with the event's message.
//
// The definitions are followed with a list and a watch of each kind, not
// read one by one: a revision of 2,000 definitions is seen established as
// the last one is, with a few requests. The package and its revisions are
// read again every second (the current revision may change), and the
// events of a kind only while some definition of it is not ready.
func (c *Cluster) WaitEstablished(ctx context.Context, p *installed.Package, d time.Duration, since time.Time, out io.Writer) error {
	return c.waitEstablished(ctx, p, d, since, 0, out)
}

// RewriteGrace is how long WaitReestablished gives the package manager to
// rewrite a definition before judging it.
const RewriteGrace = 30 * time.Second

// WaitReestablished is WaitEstablished after a rollback: the revision
// gone back to can be Healthy (its conditions from before) before the
// package manager has rewritten the definitions the failed version broke,
// whose conditions and warnings, still about the failed spec, are current
// until it has. A definition not ready whose generation has not moved
// since the wait began is pending, never failed, for up to RewriteGrace
// (one the failed version did not change is never rewritten).
func (c *Cluster) WaitReestablished(ctx context.Context, p *installed.Package, d time.Duration, since time.Time, out io.Writer) error {
	return c.waitEstablished(ctx, p, d, since, RewriteGrace, out)
}

func (c *Cluster) waitEstablished(ctx context.Context, p *installed.Package, d time.Duration, since time.Time, rewrite time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	src, err := c.definitions()
	if err != nil {
		return err
	}
	t := newDefTracker(src)
	defer t.wait()
	defer cancel()
	w := &establishWait{c: c, t: t, p: p, since: since, what: p.KindName()}
	if rewrite > 0 {
		w.rewriteBy, w.firstGen = time.Now().Add(rewrite), map[string]int64{}
	}
	pr := &progress{out: out, start: time.Now()}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	reread := true
	for {
		if reread {
			if err := w.readRefs(ctx); err != nil {
				return timeout(err, "the definitions of "+w.what, d, w.pending)
			}
		}
		if reread {
			w.eventsDue = true
		}
		done, err := w.check(ctx)
		if err != nil {
			return err
		}
		if done {
			switch len(w.refs) {
			case 0:
			case 1:
				pr.say("%s: its definition is established", w.what)
			default:
				pr.say("%s: its %d definitions are established", w.what, len(w.refs))
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return timeout(ctx.Err(), "the definitions of "+w.what, d, w.pending)
		case err := <-t.failed:
			return fmt.Errorf("wait for the definitions of %s: %w", w.what, err)
		case <-t.changed:
			reread = false
		case <-tick.C:
			reread = true
		}
	}
}

// establishWait is one WaitEstablished: the definitions it waits for and
// what is still pending.
type establishWait struct {
	c       *Cluster
	t       *defTracker
	p       *installed.Package
	since   time.Time
	what    string
	refs    []installed.ObjectRef
	pending []string
	// eventsDue: the next check with every kind listed reads events.
	eventsDue bool
	// rewriteBy: until then, a definition whose generation is still the
	// one first seen (firstGen, by kind and name) is not yet rewritten.
	rewriteBy time.Time
	firstGen  map[string]int64
}

// notRewritten: waiting for the package manager to rewrite the
// definition (WaitReestablished), it has not yet.
func (w *establishWait) notRewritten(ref installed.ObjectRef, doc *definitionDoc) bool {
	if w.firstGen == nil || doc == nil || time.Now().After(w.rewriteBy) {
		return false
	}
	key := ref.Kind + "/" + ref.Name
	first, seen := w.firstGen[key]
	if !seen {
		w.firstGen[key] = doc.Metadata.Generation
		return true
	}
	return doc.Metadata.Generation <= first
}

// readRefs reads the definitions of the package's current revision and
// follows their kinds.
func (w *establishWait) readRefs(ctx context.Context) error {
	p, err := w.c.Get(ctx, w.p.Kind, w.p.Name)
	if err != nil {
		return err
	}
	revs, err := w.c.Revisions(ctx, p)
	if err != nil {
		return err
	}
	w.refs = w.refs[:0]
	for _, r := range revs {
		if r.Name != p.CurrentRevision {
			continue
		}
		for _, ref := range r.Objects {
			if gvr, ok := definitionResource(ref); ok {
				w.refs = append(w.refs, ref)
				w.t.follow(ctx, gvr)
			}
		}
	}
	return nil
}

// definitionResource is the resource of a definition a revision names.
func definitionResource(ref installed.ObjectRef) (schema.GroupVersionResource, bool) {
	resource, ok := definitionResources[ref.Kind]
	if !ok {
		return schema.GroupVersionResource{}, false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, false
	}
	return gv.WithResource(resource), true
}

// check judges every definition from the tracked state; when events are
// due, the Warning events of the kinds still pending are read too (one
// list a kind), and a terminal one fails the wait.
func (w *establishWait) check(ctx context.Context) (bool, error) {
	w.pending = w.pending[:0]
	var unready []Definition
	synced := true
	for _, ref := range w.refs {
		gvr, _ := definitionResource(ref)
		doc, ok := w.t.get(gvr, ref.Name)
		if !ok {
			synced = false
			continue
		}
		def := Definition{Ref: ref, State: "not created yet"}
		if doc != nil {
			def = definitionState(ref, doc)
		}
		if !def.Ready && !def.stale && w.notRewritten(ref, doc) {
			def.State, def.stale = def.State+", not yet rewritten since the rollback", true
		}
		if !def.Ready {
			unready = append(unready, def)
		}
	}
	if w.eventsDue && synced && len(unready) > 0 {
		w.c.addWarnings(ctx, unready, w.since)
		w.eventsDue = false
	}
	for _, def := range unready {
		name := def.Ref.Kind + " " + def.Ref.Name
		switch {
		case def.Failure != "":
			return false, fmt.Errorf("%s is %s: %s", name, def.State, def.Failure)
		case def.Warning != "":
			w.pending = append(w.pending, name+": "+def.State+"; last warning: "+def.Warning)
		default:
			w.pending = append(w.pending, name+": "+def.State)
		}
	}
	if !synced {
		w.pending = append(w.pending, "the definitions' state not read yet")
	}
	return synced && len(w.pending) == 0, nil
}

// definitionState judges one definition by its conditions.
func definitionState(ref installed.ObjectRef, d *definitionDoc) Definition {
	def := Definition{Ref: ref, State: "Established", Ready: true}
	if ref.Kind == "ManagedResourceDefinition" && d.Spec.State == "Inactive" {
		def.State = "Inactive"
		return def
	}
	want := []string{"Established"}
	if d.Spec.ClaimNames != nil && ref.Kind == "CompositeResourceDefinition" {
		want = append(want, "Offered")
	}
	cs := d.conditions()
	for _, t := range want {
		cnd := installed.FindCondition(cs, t)
		switch {
		case cnd == nil:
			def.Ready, def.State = false, t+" not reported yet"
			return def
		case cnd.ObservedGeneration != 0 && cnd.ObservedGeneration < d.Metadata.Generation:
			// The controller has not yet seen the latest spec (a rollback
			// just put back what the failed version broke): what it said,
			// and the warnings it made, are about an older one.
			def.Ready, def.State, def.stale = false, fmt.Sprintf("%s not yet reported for generation %d", t, d.Metadata.Generation), true
			return def
		case cnd.Status != "True":
			def.Ready, def.State = false, installed.DescribeCondition(cnd)
			return def
		}
	}
	return def
}

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

// DefinedCRDs names the CRDs the package's current revision defines: its
// CRDs, the CRDs of its MRDs (same name), and of its XRDs the composite's
// and the claim's.
func (c *Cluster) DefinedCRDs(ctx context.Context, p *installed.Package) ([]string, error) {
	revs, err := c.Revisions(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []string
	var xrds []installed.ObjectRef
	for _, r := range revs {
		if r.Name != p.CurrentRevision {
			continue
		}
		for _, ref := range r.Objects {
			switch ref.Kind {
			case "CustomResourceDefinition", "ManagedResourceDefinition":
				out = append(out, ref.Name)
			case "CompositeResourceDefinition":
				out = append(out, ref.Name)
				xrds = append(xrds, ref)
			}
		}
	}
	claims, err := c.claimCRDs(ctx, xrds)
	return append(out, claims...), err
}

// claimCRDs names the claim CRDs of XRDs that offer one: a few XRDs are
// read one GET each, at once; more with one list of XRDs. An XRD that
// cannot be read adds nothing (its claim CRD is then not counted).
func (c *Cluster) claimCRDs(ctx context.Context, xrds []installed.ObjectRef) ([]string, error) {
	claim := func(d *definitionDoc) string {
		if d.Spec.ClaimNames == nil || d.Spec.ClaimNames.Plural == "" || d.Spec.Group == "" {
			return ""
		}
		return d.Spec.ClaimNames.Plural + "." + d.Spec.Group
	}
	names := make([]string, len(xrds))
	if len(xrds) <= fewCRDs {
		_ = forEach(len(xrds), fewCRDs, func(i int) error {
			gvr, _ := definitionResource(xrds[i])
			u, err := c.dyn.Resource(gvr).Get(ctx, xrds[i].Name, metav1.GetOptions{})
			if err == nil {
				if d, err := toDefinition(u); err == nil {
					names[i] = claim(d)
				}
			}
			return nil
		})
		return slices.DeleteFunc(names, func(s string) bool { return s == "" }), nil
	}
	src, err := c.definitions()
	if err != nil {
		return nil, err
	}
	want := map[string]int{}
	for i, x := range xrds {
		want[x.APIVersion+"/"+x.Name] = i
	}
	for _, gv := range uniqueAPIVersions(xrds) {
		gvr, _ := definitionResource(installed.ObjectRef{Kind: "CompositeResourceDefinition", APIVersion: gv})
		_, err := src.list(ctx, gvr, func(d *definitionDoc) {
			if i, ok := want[gv+"/"+d.Metadata.Name]; ok {
				names[i] = claim(d)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("list CompositeResourceDefinitions: %w", err)
		}
	}
	return slices.DeleteFunc(names, func(s string) bool { return s == "" }), nil
}

func uniqueAPIVersions(refs []installed.ObjectRef) []string {
	var out []string
	for _, r := range refs {
		if !slices.Contains(out, r.APIVersion) {
			out = append(out, r.APIVersion)
		}
	}
	return out
}
