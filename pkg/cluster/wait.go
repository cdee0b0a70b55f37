package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// WaitTimeoutError is a wait that ran out of time; Pending says what was
// still missing.
type WaitTimeoutError struct {
	What    string
	After   time.Duration
	Pending []string
}

func (e *WaitTimeoutError) Error() string {
	return fmt.Sprintf("timed out after %s waiting for %s: still pending: %s", Round(e.After), e.What, strings.Join(e.Pending, "; "))
}

// Round is a duration as people read it: whole seconds from a second up
// (what is left of a wait is 29.99999995s, which says 30s), else
// milliseconds.
func Round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// watcher keeps informer caches of the package objects, revisions and Lock,
// and wakes its owner on every change. Informers re-list and re-watch on
// their own when a watch drops (an API server restart), so a wait survives.
type watcher struct {
	c       *Cluster
	factory dynamicinformer.DynamicSharedInformerFactory
	changed chan struct{}
	// denied receives the first list or watch that RBAC refused.
	denied chan error
	// shared: the cluster's shared watcher (Share), started already.
	shared bool
	// made memoizes what was read of each cached object's version.
	mu   sync.Mutex
	made map[memoKey]any
}

// newWatcher is a watcher for one wait: the cluster's shared one while it
// has one (Share), else a new one.
func (c *Cluster) newWatcher() *watcher {
	if w := c.shared; w != nil {
		select { // changes before this wait are read by its first check
		case <-w.changed:
		default:
		}
		return w
	}
	w := &watcher{c: c, factory: dynamicinformer.NewDynamicSharedInformerFactory(c.dyn, 0), changed: make(chan struct{}, 1), denied: make(chan error, 1)}
	kinds := c.dialect.Kinds()
	for _, k := range kinds {
		if rk := c.dialect.RevisionKind(k); rk != "" {
			kinds = append(kinds, rk)
		}
	}
	for _, k := range kinds {
		gvr, err := c.dialect.Resource(k)
		if err != nil {
			continue // e.g. no Function kind on an old Crossplane
		}
		w.watch(gvr, w.factory.ForResource(gvr).Informer())
	}
	if gvr, _, ok := c.dialect.LockResource(); ok {
		w.watch(gvr, w.factory.ForResource(gvr).Informer())
	}
	return w
}

func (w *watcher) watch(gvr schema.GroupVersionResource, inf cache.SharedIndexInformer) {
	// client-go retries a list or watch that fails, for ever and quietly:
	// one RBAC denies will never succeed, so it ends the wait at once.
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		if apierrors.IsForbidden(err) {
			select {
			case w.denied <- fmt.Errorf("cannot watch %s: %w", gvr.GroupResource(), err):
			default:
			}
			return
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	notify := func(any) {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: notify, DeleteFunc: notify, UpdateFunc: func(_, n any) { notify(n) },
	})
}

// run starts the informers (unless the watcher is the cluster's shared
// one, running already) and calls check on every change until check says
// done, or ctx ends.
func (w *watcher) run(ctx context.Context, check func() (bool, error)) error {
	if !w.shared {
		stop, err := w.start(ctx, 0)
		if err != nil {
			return err
		}
		defer stop()
	}
	for {
		done, err := check()
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-w.denied:
			return err
		case <-w.changed:
		case <-time.After(2 * time.Second): // a condition may turn terminal by lasting
		}
	}
}

// start starts the informers and waits for their caches, at most within
// (0: until ctx ends); stop ends them.
func (w *watcher) start(ctx context.Context, within time.Duration) (stop func(), err error) {
	// The informers stop with their own context: Shutdown waits for them.
	ictx, cancel := context.WithCancel(ctx)
	w.factory.Start(ictx.Done())
	stop = func() {
		cancel()
		w.factory.Shutdown()
	}
	// A denied list ends the wait instead of the cache sync.
	synced := make(chan bool, 1)
	var late <-chan time.Time
	if within > 0 {
		t := time.NewTimer(within)
		defer t.Stop()
		late = t.C
	}
	go func() {
		ok := true
		for _, s := range w.factory.WaitForCacheSync(ictx.Done()) {
			ok = ok && s
		}
		synced <- ok
	}()
	select {
	case err = <-w.denied:
	case <-late:
		err = fmt.Errorf("the package objects, their revisions and the Lock could not be listed within %s", within)
	case ok := <-synced:
		if !ok {
			select {
			case err = <-w.denied:
			default:
				// The context ended first: its deadline, or an interruption.
				err = cmp.Or(ctx.Err(), context.DeadlineExceeded)
			}
		}
	}
	if err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// cached reads an object of kind from the informer cache; nil if absent.
func (w *watcher) cached(kind, name string) *unstructured.Unstructured {
	gvr, err := w.c.dialect.Resource(kind)
	if err != nil {
		return nil
	}
	lister := w.factory.ForResource(gvr).Lister()
	var obj runtime.Object
	if w.c.dialect.Namespaced(kind) {
		obj, err = lister.ByNamespace(w.c.namespace).Get(name)
	} else {
		obj, err = lister.Get(name)
	}
	if err != nil {
		return nil
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

func (w *watcher) list(kind string) []*unstructured.Unstructured {
	gvr, err := w.c.dialect.Resource(kind)
	if err != nil {
		return nil
	}
	objs, _ := w.factory.ForResource(gvr).Lister().List(everything())
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// timeout turns a context deadline into a WaitTimeoutError.
func timeout(err error, what string, d time.Duration, pending []string) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &WaitTimeoutError{What: what, After: d, Pending: pending}
	}
	return err
}

// progress prints each line once.
type progress struct {
	out  io.Writer
	seen map[string]bool
	// start is when the wait began; revisions maps the revisions reported
	// to their last desired state.
	start     time.Time
	revisions map[string]string
}

func (p *progress) say(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if !p.seen[line] {
		p.seen[line] = true
		fmt.Fprintln(p.out, line)
	}
}

// WaitCRDsGone waits, reading them every interval, until none of the
// named CRDs is left: after wait, a WaitTimeoutError names those left,
// one left Terminating with how long.
func (c *Cluster) WaitCRDsGone(ctx context.Context, names []string, wait, interval time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		crds, err := c.CRDs(ctx, names)
		if err != nil || len(crds) == 0 {
			return err
		}
		if !time.Now().Add(interval).Before(deadline) {
			var left []string
			for name, crd := range crds {
				if !crd.Deleting.IsZero() {
					name += fmt.Sprintf(" (Terminating for %s: kubectl xpkg doctor says what holds it)", Round(time.Since(crd.Deleting)))
				}
				left = append(left, name)
			}
			slices.Sort(left)
			return &WaitTimeoutError{What: "the packages' definitions to go", After: wait, Pending: left}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
