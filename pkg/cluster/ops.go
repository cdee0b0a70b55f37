package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// Cluster reads and writes a cluster's package objects through its dialect.
type Cluster struct {
	dyn       dynamic.Interface
	dialect   Dialect
	namespace string
	// rest reads lists as server-side tables (nil: through dyn).
	rest *rest.Config
	// shared answers List, LockState, Revisions and waits from one watch
	// while set (Share); crossplane memoizes CrossplaneVersion meanwhile.
	shared     *watcher
	crossplane map[string]deploymentRead
}

// Connect discovers the package API the cluster serves (or the one
// apiGroup forces) and returns a Cluster that speaks it.
func Connect(c *Clients, apiGroup string) (*Cluster, error) {
	apis, err := c.packageAPIs()
	if err != nil {
		return nil, err
	}
	d, err := NewDialect(apis, apiGroup)
	if err != nil {
		// The discovery cache (--cache-dir) may predate the group asked
		// for: ask the server again before giving up.
		dc, err := c.Discovery()
		if err != nil {
			return nil, err
		}
		dc.Invalidate()
		if apis, err = DiscoverPackageAPIs(dc); err != nil {
			return nil, err
		}
		if d, err = NewDialect(apis, apiGroup); err != nil {
			return nil, err
		}
	}
	dyn, err := c.Dynamic()
	if err != nil {
		return nil, err
	}
	ns, _, err := c.Namespace()
	if err != nil {
		return nil, err
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return &Cluster{dyn: dyn, dialect: d, namespace: ns, rest: cfg}, nil
}

// packageAPIs discovers the package APIs, or takes them from another
// cluster on the same API server when discovery is shared.
// The discovery client is made only to discover: a fleet's contexts but
// the first of each server never make one.
func (c *Clients) packageAPIs() ([]ServedAPI, error) {
	discover := func() ([]ServedAPI, error) {
		dc, err := c.Discovery()
		if err != nil {
			return nil, err
		}
		return DiscoverPackageAPIsFresh(dc)
	}
	if c.shared == nil {
		return discover()
	}
	cfg, err := c.RESTConfig()
	if err != nil || cfg == nil || cfg.Host == "" {
		return discover()
	}
	return c.shared.apis(cfg.Host, discover)
}

// NewCluster is a Cluster over an existing client and dialect.
func NewCluster(dyn dynamic.Interface, d Dialect, namespace string) *Cluster {
	return &Cluster{dyn: dyn, dialect: d, namespace: namespace}
}

// Dialect is the package API generation the cluster speaks.
func (c *Cluster) Dialect() Dialect { return c.dialect }

func (c *Cluster) client(kind string) (dynamic.ResourceInterface, error) {
	gvr, err := c.dialect.Resource(kind)
	if err != nil {
		return nil, err
	}
	if c.dialect.Namespaced(kind) {
		return c.dyn.Resource(gvr).Namespace(c.namespace), nil
	}
	return c.dyn.Resource(gvr), nil
}

// List returns the packages of kind ("" for every kind) that match the
// label selector, sorted by kind and name.
func (c *Cluster) List(ctx context.Context, kind, selector string) ([]*installed.Package, error) {
	kinds := c.dialect.Kinds()
	if kind != "" {
		kinds = []string{kind}
	}
	if c.shared != nil {
		return c.sharedList(kinds, selector)
	}
	var out []*installed.Package
	for _, k := range kinds {
		items, err := c.listObjects(ctx, k, selector)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", strings.ToLower(k)+"s", err)
		}
		for i := range items {
			out = append(out, c.dialect.Decode(&items[i]))
		}
	}
	return out, nil
}

// Get reads one package.
func (c *Cluster) Get(ctx context.Context, kind, name string) (*installed.Package, error) {
	rc, err := c.client(kind)
	if err != nil {
		return nil, err
	}
	u, err := rc.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return c.dialect.Decode(u), nil
}

// Find reads the package called name, whatever its kind; a name that
// several kinds use is ambiguous.
func (c *Cluster) Find(ctx context.Context, name string) (*installed.Package, error) {
	var found []*installed.Package
	for _, k := range c.dialect.Kinds() {
		p, err := c.Get(ctx, k, name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = append(found, p)
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no package named %q: see kubectl xpkg get", name)
	case 1:
		return found[0], nil
	}
	var kinds []string
	for _, p := range found {
		kinds = append(kinds, installed.KindName(p.Kind, name))
	}
	return nil, fmt.Errorf("%q names several packages (%s): name the kind, e.g. %s", name, strings.Join(kinds, ", "), kinds[0])
}

// Create creates a package object; dryRun is "" or "All" (server-side).
func (c *Cluster) Create(ctx context.Context, u *unstructured.Unstructured, dryRun bool) (*installed.Package, error) {
	rc, err := c.client(u.GetKind())
	if err != nil {
		return nil, err
	}
	opts := metav1.CreateOptions{FieldManager: FieldManager}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	created, err := rc.Create(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	return c.dialect.Decode(created), nil
}

// FieldManager names the plugin in managedFields.
const FieldManager = "kubectl-xpkg"

// Revisions lists a package's revisions, newest first.
func (c *Cluster) Revisions(ctx context.Context, p *installed.Package) ([]*installed.Revision, error) {
	kind := c.dialect.RevisionKind(p.Kind)
	if kind == "" {
		return nil, nil
	}
	if c.shared != nil {
		return c.sharedRevisions(kind, p), nil
	}
	rc, err := c.client(kind)
	if err != nil {
		return nil, err
	}
	l, err := rc.List(ctx, c.dialect.RevisionList(p))
	if err != nil {
		return nil, fmt.Errorf("list revisions of %s: %w", p.KindName(), err)
	}
	out := make([]*installed.Revision, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, c.dialect.DecodeRevision(&l.Items[i]))
	}
	return newestFirst(out), nil
}

// Lock reads the dependency Lock; a generation without one has none.
func (c *Cluster) Lock(ctx context.Context) ([]installed.LockPackage, error) {
	lock, _, err := c.LockState(ctx)
	return lock, err
}

// DeleteExactly deletes the package as it was read (its revisions
// follow by garbage collection): the API server refuses (409 Conflict)
// when it is another object since (its UID) or has changed (its
// resourceVersion). A change of its status, labels or annotations alone
// (the package manager writes its status at any time) is no change of
// what was planned: read again, the delete is sent again with the new
// resourceVersion, while the object, its spec (generation) and its
// reference are those read.
func (c *Cluster) DeleteExactly(ctx context.Context, p *installed.Package, dryRun bool) error {
	rc, err := c.client(p.Kind)
	if err != nil {
		return err
	}
	return deleteExactly(ctx, rc, p.Object, p.KindName(), dryRun, func(now *unstructured.Unstructured, _, conflict error) error {
		if now == nil || now.GetUID() != p.Object.GetUID() || now.GetGeneration() != p.Object.GetGeneration() ||
			c.dialect.Decode(now).Source != p.Source {
			return conflict // what was planned for is gone
		}
		return nil
	})
}

// deleteExactly deletes read with its UID and resourceVersion as
// preconditions. On a conflict the object is read again (nil when it
// cannot be) and judged: an error from judge ends it, else the delete is
// sent again with the new resourceVersion, a few times at most.
func deleteExactly(ctx context.Context, rc resourceClient, read *unstructured.Unstructured, what string, dryRun bool,
	judge func(now *unstructured.Unstructured, readErr, conflict error) error) error {
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{}}
	if uid := read.GetUID(); uid != "" {
		opts.Preconditions.UID = &uid
	}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	rv := read.GetResourceVersion()
	b := patchRetry
	for {
		if rv != "" {
			opts.Preconditions.ResourceVersion = &rv
		}
		err := rc.Delete(ctx, read.GetName(), opts)
		if !apierrors.IsConflict(err) || b.Steps <= 1 {
			return unanswered(err, "deletion of "+what, what)
		}
		now, gerr := rc.Get(ctx, read.GetName(), metav1.GetOptions{})
		if gerr != nil {
			now = nil
		}
		if jerr := judge(now, gerr, err); jerr != nil {
			return jerr
		}
		rv = now.GetResourceVersion()
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after: %w)", ctx.Err(), err)
		case <-time.After(b.Step()):
		}
	}
}

// KindName reads the kind and name an argument names: KIND/NAME as
// typed, or the one package of any kind called NAME.
func (c *Cluster) KindName(ctx context.Context, arg string) (kind, name string, err error) {
	if k, n, ok := strings.Cut(arg, "/"); ok {
		kind, err := ResolveKind(c.dialect, strings.Split(k, ".")[0])
		return kind, n, err
	}
	p, err := c.Find(ctx, arg)
	if err != nil {
		return "", "", err
	}
	return p.Kind, p.Name, nil
}

// Lookup reads the package an argument names (see KindName).
func (c *Cluster) Lookup(ctx context.Context, arg string) (*installed.Package, error) {
	if !strings.Contains(arg, "/") {
		return c.Find(ctx, arg)
	}
	kind, name, err := c.KindName(ctx, arg)
	if err != nil {
		return nil, err
	}
	return c.Get(ctx, kind, name)
}
