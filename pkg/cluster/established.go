package cluster

import (
	"context"
	"fmt"
	"io"
	"time"

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
	// Deleting is when the definition's deletion began, or its CRD's
	// (an MRD's or XRD's, of the same name); zero while neither is being
	// deleted.
	Deleting time.Time
	// stale: its conditions are about an older generation than its spec.
	stale bool
	// crdDeleting: its CRD is being deleted, not the definition itself.
	crdDeleting bool
	// crd is the CRD of its kind, when known: what counts its objects.
	crd *definitionDoc
}

// WaitEstablished waits until every definition (CRD, MRD, XRD) the
// package's current revision installed is established (an MRD may be
// Inactive by choice; an XRD with claims must offer them too). Healthy
// conditions alone do not say so: a revision can be Healthy while its MRD
// cannot be applied. A Warning event on a definition since the wait began
// that will not go away by itself (terminalWarning) ends it as a failure,
// with the event's message. A definition being deleted, or whose CRD is,
// is never established (markDeleting): the wait waits on, and a time-out
// says how many objects of its kind hold the deletion.
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

func (c *Cluster) waitEstablished(parent context.Context, p *installed.Package, d time.Duration, since time.Time, rewrite time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(parent, d)
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
		if w.unnamed > 0 {
			// The package manager records a revision's objects by name
			// first and their kinds in a later update: not all known yet
			// (a tick reads them again).
			done = false
			w.pending = append(w.pending, fmt.Sprintf("%d of the revision's objects not yet named by kind", w.unnamed))
		}
		for _, d := range w.deleting {
			pr.say("%s: %s; the API server refuses new objects of its kind until it is gone: waiting", w.what, d.def.deletion())
		}
		if done {
			if said := establishedSaid(len(w.refs), w.inactive); said != "" {
				pr.say("%s: %s", w.what, said)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			w.countHolders(parent)
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
	// inactive counts the MRDs left Inactive on purpose (safe-start): no
	// CRD until a policy activates them; unnamed the objects the current
	// revision records without their kind yet.
	inactive, unnamed int
	c                 *Cluster
	t                 *defTracker
	p                 *installed.Package
	since             time.Time
	what              string
	refs              []installed.ObjectRef
	pending           []string
	// deleting are the definitions being deleted, with their index in
	// pending.
	deleting []deletingDef
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
	w.refs, w.unnamed = w.refs[:0], 0
	for _, r := range revs {
		if r.Name != p.CurrentRevision {
			continue
		}
		for _, ref := range r.Objects {
			if ref.Kind == "" || ref.APIVersion == "" {
				w.unnamed++
				continue
			}
			if gvr, ok := definitionResource(ref); ok {
				w.refs = append(w.refs, ref)
				w.t.follow(ctx, gvr)
				// An MRD's or XRD's kind is served by the CRD of its
				// name, which can be being deleted while they are not.
				w.t.follow(ctx, crdResource)
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
	w.pending, w.inactive = w.pending[:0], 0
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
			crd, ok := w.crdOf(ref, doc)
			if !ok {
				synced = false
				continue
			}
			def = definitionState(ref, doc)
			def.markDeleting(doc, crd)
			if def.State == "Inactive" {
				w.inactive++
			}
		}
		if !def.Ready && !def.stale && def.Deleting.IsZero() && w.notRewritten(ref, doc) {
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
	w.deleting = w.deleting[:0]
	for _, def := range unready {
		name := def.Ref.Kind + " " + def.Ref.Name
		switch {
		case !def.Deleting.IsZero():
			// Nothing the package manager does ends it: only the
			// deletion finishing, once every object of the kind is gone.
			w.deleting = append(w.deleting, deletingDef{len(w.pending), def})
			w.pending = append(w.pending, def.deletion())
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

// crdOf is the CRD that serves a definition's kind: the definition
// itself, else the CRD of its name (nil when there is none); false until
// CRDs are listed.
func (w *establishWait) crdOf(ref installed.ObjectRef, doc *definitionDoc) (*definitionDoc, bool) {
	if ref.Kind == "CustomResourceDefinition" {
		return doc, true
	}
	return w.t.get(crdResource, ref.Name)
}

// establishedSaid says how a wait for n definitions ended, inactive of
// them MRDs that stay Inactive; "" for none.
func establishedSaid(n, inactive int) string {
	switch {
	case inactive == 1:
		return fmt.Sprintf("of its %d definitions, %d established and 1 MRD Inactive (no CRD until a ManagedResourceActivationPolicy activates it)", n, n-1)
	case inactive > 1:
		return fmt.Sprintf("of its %d definitions, %d established and %d MRDs Inactive (no CRD until a ManagedResourceActivationPolicy activates them)", n, n-inactive, inactive)
	case n == 1:
		return "its definition is established"
	case n > 1:
		return fmt.Sprintf("its %d definitions are established", n)
	}
	return ""
}
