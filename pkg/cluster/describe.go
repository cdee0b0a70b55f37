package cluster

import (
	"cmp"
	"context"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubectl/pkg/util/event"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

var eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// EventsNamespace is where the API server keeps events of cluster-scoped
// objects such as packages.
const EventsNamespace = "default"

// Describe reads a package, its revisions, the Lock and recent events in
// four concurrent requests, however many revisions there are; for a
// provider that installed MRDs, their states and the activation policies
// in two more.
func (c *Cluster) Describe(ctx context.Context, kind, name string) (*installed.Description, error) {
	d := &installed.Description{}
	var lock []installed.LockPackage
	var events []unstructured.Unstructured
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { d.Package, err = c.Get(gctx, kind, name); return err })
	g.Go(func() (err error) {
		d.Revisions, err = c.Revisions(gctx, &installed.Package{Kind: kind, Name: name})
		return err
	})
	g.Go(func() (err error) { lock, d.LockUnresolved, err = c.LockState(gctx); return err })
	g.Go(func() error {
		gv, err := c.dialect.Resource(kind)
		if err != nil {
			return err
		}
		l, err := c.dyn.Resource(eventsGVR).Namespace(EventsNamespace).List(gctx, metav1.ListOptions{
			FieldSelector: "involvedObject.apiVersion=" + gv.GroupVersion().String(),
		})
		if err == nil {
			events = l.Items
		}
		return nil // events are a courtesy: RBAC may hide them
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	d.Dependencies, d.Dependents = dependencies(lock, d.Package)
	d.Events = packageEvents(events, d)
	if err := c.describeMRDs(ctx, d); err != nil {
		return nil, err
	}
	return d, nil
}

// describeMRDs reads the state of the MRDs the current revision installed
// and the policies that activated them: two more concurrent requests, for
// a provider of Crossplane v2 only.
func (c *Cluster) describeMRDs(ctx context.Context, d *installed.Description) error {
	var names []string
	if r := d.Current(); r != nil {
		for _, o := range r.Objects {
			if o.Kind == "ManagedResourceDefinition" {
				names = append(names, o.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	var mraps []installed.MRAP
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		if d.MRDs, err = c.MRDs(gctx, names); apierrors.IsForbidden(err) {
			return nil // a courtesy, as events are: RBAC may hide them
		}
		return err
	})
	g.Go(func() error {
		var err error
		if mraps, err = c.MRAPs(gctx); apierrors.IsForbidden(err) {
			return nil // a courtesy, as events are
		}
		return err
	})
	if err := g.Wait(); err != nil {
		return err
	}
	mine := map[string]bool{}
	for _, n := range names {
		mine[n] = true
	}
	for _, m := range mraps {
		var acts []string
		for _, a := range m.Activated {
			if mine[a] {
				acts = append(acts, a)
			}
		}
		if len(acts) > 0 {
			m.Activated = acts
			d.MRAPs = append(d.MRAPs, m)
		}
	}
	return nil
}

func dependencies(lock []installed.LockPackage, p *installed.Package) ([]installed.DependencyStatus, []string) {
	var deps []installed.DependencyStatus
	if entry, ok := installed.LockEntry(lock, p); ok {
		for _, dep := range entry.Dependencies {
			ds := installed.DependencyStatus{Package: dep.Package, Constraints: dep.Constraints, Kind: firstNonEmpty(dep.Kind, dep.Type)}
			for _, lp := range lock {
				if installed.SameRepo(lp.Source, dep.Package) {
					ds.Resolved = lp.Version
				}
			}
			deps = append(deps, ds)
		}
	}
	var dependents []string
	for _, lp := range installed.Dependents(lock, reference.Repository(p.Source)) {
		dependents = append(dependents, lp.Source+" "+lp.Version)
	}
	return deps, dependents
}

// maxEvents is how many of the newest events describe keeps.
const maxEvents = 20

// packageEvents keeps the events of the package and its revisions in
// kubectl describe's order (kubectl's SortableEvents: oldest first by last
// timestamp), the newest 20 of them.
func packageEvents(items []unstructured.Unstructured, d *installed.Description) []installed.Event {
	names := map[string]bool{d.Package.Kind + "/" + d.Package.Name: true}
	for _, r := range d.Revisions {
		names[r.Kind+"/"+r.Name] = true
	}
	var sorted event.SortableEvents
	for _, u := range items {
		var e corev1.Event
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &e) != nil {
			continue
		}
		if !names[e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name] {
			continue
		}
		// An events.k8s.io writer sets eventTime and no timestamps; the
		// sort and the ages go by lastTimestamp, as kubectl's do.
		if e.LastTimestamp.IsZero() {
			e.LastTimestamp = metav1.Time{Time: cmp.Or(e.EventTime.Time, e.CreationTimestamp.Time)}
		}
		if e.FirstTimestamp.IsZero() {
			e.FirstTimestamp = e.LastTimestamp
		}
		sorted = append(sorted, e)
	}
	sort.Stable(sorted)
	if len(sorted) > maxEvents {
		sorted = sorted[len(sorted)-maxEvents:]
	}
	out := make([]installed.Event, 0, len(sorted))
	for _, e := range sorted {
		out = append(out, installed.Event{
			Type:    e.Type,
			Reason:  e.Reason,
			Object:  e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name,
			Message: strings.TrimSpace(e.Message),
			From:    cmp.Or(e.Source.Component, e.ReportingController),
			Count:   int64(e.Count),
			First:   e.FirstTimestamp.Time,
			Last:    e.LastTimestamp.Time,
		})
	}
	return out
}

// eventTime is when an event was last seen, whichever API wrote it.
func eventTime(u *unstructured.Unstructured) time.Time {
	for _, f := range []string{"lastTimestamp", "eventTime", "firstTimestamp"} {
		if s, _, _ := unstructured.NestedString(u.Object, f); s != "" {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				return t
			}
		}
	}
	return u.GetCreationTimestamp().Time
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
