package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// defTracker keeps the state of the definitions of some resources (CRDs,
// MRDs, XRDs) current, each resource with one list and then one watch,
// whatever the number of definitions: a revision of 2,000 CRDs costs a
// few requests, not 2,000 per look. It keeps only what definitionDoc
// reads of each definition.
type defTracker struct {
	src     definitionSource
	mu      sync.Mutex
	kinds   map[schema.GroupVersionResource]*trackedKind
	changed chan struct{}
	// failed receives the first error no list again will cure (RBAC).
	failed chan error
	wg     sync.WaitGroup
}

type trackedKind struct {
	synced bool
	objs   map[string]*definitionDoc
}

func newDefTracker(src definitionSource) *defTracker {
	return &defTracker{src: src, kinds: map[schema.GroupVersionResource]*trackedKind{},
		changed: make(chan struct{}, 1), failed: make(chan error, 1)}
}

// follow starts tracking gvr, once, until ctx ends.
func (t *defTracker) follow(ctx context.Context, gvr schema.GroupVersionResource) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.kinds[gvr]; ok {
		return
	}
	t.kinds[gvr] = &trackedKind{}
	t.wg.Go(func() { t.run(ctx, gvr) })
}

// wait waits for the tracking goroutines, once ctx has ended.
func (t *defTracker) wait() { t.wg.Wait() }

// get is the tracked state of one definition: synced is false until the
// resource's first list is in; d is nil when no such definition exists.
func (t *defTracker) get(gvr schema.GroupVersionResource, name string) (d *definitionDoc, synced bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.kinds[gvr]
	if k == nil || !k.synced {
		return nil, false
	}
	return k.objs[name], true
}

// run lists, then watches from the list's resourceVersion, and lists
// again whenever the watch ends: the server closed it, or the version
// is too old to resume from.
func (t *defTracker) run(ctx context.Context, gvr schema.GroupVersionResource) {
	for ctx.Err() == nil {
		start := time.Now()
		objs := map[string]*definitionDoc{}
		rv, err := t.src.list(ctx, gvr, func(d *definitionDoc) { objs[d.Metadata.Name] = d })
		if err == nil {
			t.replace(gvr, objs)
			err = t.src.watch(ctx, gvr, rv, func(typ watch.EventType, d *definitionDoc) { t.update(gvr, typ, d) })
		}
		if ctx.Err() != nil {
			return
		}
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			select {
			case t.failed <- fmt.Errorf("cannot list and watch %s: %w", gvr.GroupResource(), err):
			default:
			}
			return
		}
		// A server away for a moment, or closing watches at once: list
		// again, but not more than once a second.
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second - time.Since(start)):
		}
	}
}

func (t *defTracker) replace(gvr schema.GroupVersionResource, objs map[string]*definitionDoc) {
	t.mu.Lock()
	t.kinds[gvr].objs, t.kinds[gvr].synced = objs, true
	t.mu.Unlock()
	t.notify()
}

func (t *defTracker) update(gvr schema.GroupVersionResource, typ watch.EventType, d *definitionDoc) {
	t.mu.Lock()
	k := t.kinds[gvr]
	if typ == watch.Deleted {
		delete(k.objs, d.Metadata.Name)
	} else {
		k.objs[d.Metadata.Name] = d
	}
	t.mu.Unlock()
	t.notify()
}

func (t *defTracker) notify() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}
