package cluster

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	Ref ObjectRef
	// State is Established, Inactive (an MRD left inactive on purpose),
	// or what is still missing.
	State string
	Ready bool
	// Warning is the newest Warning event on it; Failure is set when that
	// says it cannot get there (see terminalWarning).
	Warning, Failure string
}

// WaitEstablished waits until every definition (CRD, MRD, XRD) the
// package's current revision installed is established (an MRD may be
// Inactive by choice; an XRD with claims must offer them too). Healthy
// conditions alone do not say so: a revision can be Healthy while its MRD
// cannot be applied. A Warning event on a definition since the wait began
// that will not go away by itself (terminalWarning) ends it as a failure,
// with the event's message.
func (c *Cluster) WaitEstablished(ctx context.Context, p *Package, d time.Duration, since time.Time, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	what := strings.ToLower(p.Kind) + "/" + p.Name
	pr := &progress{out: out, start: time.Now()}
	var pending []string
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		defs, err := c.Definitions(ctx, p, since)
		if err != nil {
			return timeout(err, "the definitions of "+what, d, pending)
		}
		pending = pending[:0]
		for _, def := range defs {
			name := def.Ref.Kind + " " + def.Ref.Name
			switch {
			case def.Failure != "":
				return fmt.Errorf("%s is %s: %s", name, def.State, def.Failure)
			case !def.Ready && def.Warning != "":
				pending = append(pending, name+": "+def.State+"; last warning: "+def.Warning)
			case !def.Ready:
				pending = append(pending, name+": "+def.State)
			}
		}
		if len(pending) == 0 {
			switch len(defs) {
			case 0:
			case 1:
				pr.say("%s: its definition is established", what)
			default:
				pr.say("%s: its %d definitions are established", what, len(defs))
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return timeout(ctx.Err(), "the definitions of "+what, d, pending)
		case <-tick.C:
		}
	}
}

// Definitions reads the state of the definitions the package's current
// revision installed; failures are Warning events since the given time.
func (c *Cluster) Definitions(ctx context.Context, p *Package, since time.Time) ([]Definition, error) {
	p, err := c.Get(ctx, p.Kind, p.Name)
	if err != nil {
		return nil, err
	}
	revs, err := c.Revisions(ctx, p)
	if err != nil {
		return nil, err
	}
	var refs []ObjectRef
	for _, r := range revs {
		if r.Name == p.CurrentRevision {
			refs = r.Objects
		}
	}
	var out []Definition
	for _, ref := range refs {
		resource, ok := definitionResources[ref.Kind]
		if !ok {
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			continue
		}
		u, err := c.dyn.Resource(gv.WithResource(resource)).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("read %s %s: %w", ref.Kind, ref.Name, err)
		}
		def := definitionState(ref, u)
		if !def.Ready {
			var terminal bool
			def.Warning, terminal = c.warning(ctx, ref, since)
			if terminal {
				def.Failure = def.Warning
			}
		}
		out = append(out, def)
	}
	return out, nil
}

// definitionState judges one definition by its conditions.
func definitionState(ref ObjectRef, u *unstructured.Unstructured) Definition {
	def := Definition{Ref: ref, State: "Established", Ready: true}
	if ref.Kind == "ManagedResourceDefinition" {
		if state, _, _ := unstructured.NestedString(u.Object, "spec", "state"); state == "Inactive" {
			def.State = "Inactive"
			return def
		}
	}
	want := []string{"Established"}
	if _, claims, _ := unstructured.NestedMap(u.Object, "spec", "claimNames"); claims && ref.Kind == "CompositeResourceDefinition" {
		want = append(want, "Offered")
	}
	cs := conditions(u)
	for _, t := range want {
		cnd := findCondition(cs, t)
		switch {
		case cnd == nil:
			def.Ready, def.State = false, t+" not reported yet"
			return def
		case cnd.Status != "True":
			def.Ready, def.State = false, describeCondition(cnd)
			return def
		}
	}
	return def
}

// warning is the newest Warning event on the object since the given time
// ("" when none), and whether it is terminal.
func (c *Cluster) warning(ctx context.Context, ref ObjectRef, since time.Time) (string, bool) {
	sel := fmt.Sprintf("involvedObject.kind=%s,involvedObject.name=%s,type=Warning", ref.Kind, ref.Name)
	l, err := c.dyn.Resource(eventResource).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return "", false // events are a hint; a wait goes on without them
	}
	var newest *unstructured.Unstructured
	for i := range l.Items {
		e := &l.Items[i]
		if t := eventTime(e); !t.Before(since.Truncate(time.Second)) && (newest == nil || t.After(eventTime(newest))) {
			newest = e
		}
	}
	if newest == nil {
		return "", false
	}
	reason, _, _ := unstructured.NestedString(newest.Object, "reason")
	msg, _, _ := unstructured.NestedString(newest.Object, "message")
	return reason + ": " + msg, terminalWarning(newest)
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
func (c *Cluster) DefinedCRDs(ctx context.Context, p *Package) ([]string, error) {
	revs, err := c.Revisions(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []string
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
				if claim := c.claimCRD(ctx, ref); claim != "" {
					out = append(out, claim)
				}
			}
		}
	}
	return out, nil
}

// claimCRD is the name of an XRD's claim CRD, or "".
func (c *Cluster) claimCRD(ctx context.Context, ref ObjectRef) string {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ""
	}
	u, err := c.dyn.Resource(gv.WithResource("compositeresourcedefinitions")).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	plural, _, _ := unstructured.NestedString(u.Object, "spec", "claimNames", "plural")
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	if plural == "" || group == "" {
		return ""
	}
	return plural + "." + group
}
