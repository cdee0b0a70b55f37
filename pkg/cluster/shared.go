package cluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// Share answers the reads of a run of many steps from one watch, kept
// current by the API server, until stop is called: List, LockState and
// Revisions read the package objects, their revisions and the Lock from
// it, waits share it, and the running Crossplane's version is read once.
// upgrade --all so lists each once (one LIST and one WATCH a kind) however
// many steps it plans and waits for, instead of every step reading all of
// them again. Get still reads the API server: a step reads the object it
// changes as it is. An identity that may not watch gets the error (the
// caller reads directly instead).
func (c *Cluster) Share(ctx context.Context) (stop func(), err error) {
	if c.shared != nil {
		return func() {}, nil
	}
	w := c.newWatcher()
	stopWatch, err := w.start(ctx, shareWithin)
	if err != nil {
		return nil, err
	}
	w.shared = true
	c.shared, c.crossplane = w, map[string]deploymentRead{}
	return func() {
		c.shared, c.crossplane = nil, nil
		stopWatch()
	}, nil
}

// shareWithin bounds the first list of Share: the informers retry a
// failing list for ever.
const shareWithin = time.Minute

// sharedList is List from the shared watch.
func (c *Cluster) sharedList(kinds []string, selector string) ([]*installed.Package, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("label selector %q: %w", selector, err)
	}
	var out []*installed.Package
	for _, k := range kinds {
		objs := c.shared.list(k)
		slices.SortFunc(objs, byName) // as a LIST returns them
		for _, u := range objs {
			if c.inScope(k, u) && sel.Matches(labels.Set(u.GetLabels())) {
				out = append(out, c.shared.memo(u, func() any { return c.dialect.Decode(u) }).(*installed.Package))
			}
		}
	}
	return out, nil
}

// sharedRevisions is Revisions from the shared watch.
func (c *Cluster) sharedRevisions(kind string, p *installed.Package) []*installed.Revision {
	var out []*installed.Revision
	for _, u := range c.shared.list(kind) {
		if c.inScope(kind, u) && c.dialect.IsRevisionOf(p, u) {
			out = append(out, c.shared.memo(u, func() any { return c.dialect.DecodeRevision(u) }).(*installed.Revision))
		}
	}
	return newestFirst(out)
}

// cachedResource reads a cluster-scoped object of a watched resource from
// the cache; nil if absent. It is the cache's: read it, never change it.
func (w *watcher) cachedResource(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	obj, err := w.factory.ForResource(gvr).Lister().Get(name)
	if err != nil {
		return nil
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

// memo is what read made of a cached object, made once for each version of
// the object (its resourceVersion): a run that reads every package at
// every step converts each once, not once a step. The objects the cache
// holds are never changed (an update replaces them), so what is made of
// them can be shared, as read-only as they are; nothing in this module
// changes a Package's or Revision's Object.
func (w *watcher) memo(u *unstructured.Unstructured, read func() any) any {
	key := memoKey{uid: string(u.GetUID()), rv: u.GetResourceVersion(), kind: u.GetKind(), name: u.GetNamespace() + "/" + u.GetName()}
	if key.rv == "" {
		return read() // no version to know it by
	}
	w.mu.Lock()
	v, ok := w.made[key]
	w.mu.Unlock()
	if ok {
		return v
	}
	v = read()
	w.mu.Lock()
	if w.made == nil {
		w.made = map[memoKey]any{}
	}
	w.made[key] = v
	w.mu.Unlock()
	return v
}

type memoKey struct{ uid, rv, kind, name string }

// inScope: a namespaced kind's objects count in the cluster's namespace
// only, as its LIST reads them.
func (c *Cluster) inScope(kind string, u *unstructured.Unstructured) bool {
	return !c.dialect.Namespaced(kind) || u.GetNamespace() == c.namespace
}

func byName(a, b *unstructured.Unstructured) int {
	if a.GetNamespace() != b.GetNamespace() {
		return strings.Compare(a.GetNamespace(), b.GetNamespace())
	}
	return strings.Compare(a.GetName(), b.GetName())
}

// newestFirst sorts revisions by revision number, newest first.
func newestFirst(revs []*installed.Revision) []*installed.Revision {
	slices.SortFunc(revs, func(a, b *installed.Revision) int { return int(b.Revision - a.Revision) })
	return revs
}

// caughtUp returns, for a wait on the shared watcher, a check that the
// cache holds kind/name at least as new as the API server had it when the
// wait began: the change the wait follows was written a moment ago, and
// the watch may not have delivered it yet, so the cache's older copy
// would tell of the change before. A watcher of the wait's own lists after
// the change: there the check is always true, as it is when the object
// cannot be read now (the wait then judges the cache as it is) or its
// resourceVersion is no number to compare (the API server's always is).
func (w *watcher) caughtUp(ctx context.Context, kind, name string) func(*unstructured.Unstructured) bool {
	always := func(*unstructured.Unstructured) bool { return true }
	if !w.shared {
		return always
	}
	now, err := w.c.Get(ctx, kind, name)
	if err != nil {
		return always
	}
	want, err := strconv.ParseUint(now.Object.GetResourceVersion(), 10, 64)
	if err != nil {
		return always
	}
	done := false
	return func(u *unstructured.Unstructured) bool {
		if !done && u != nil {
			rv, err := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
			done = err != nil || rv >= want
		}
		return done
	}
}
