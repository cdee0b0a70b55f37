package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/releases"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRD is what a plan needs of a CustomResourceDefinition in the cluster.
type CRD struct {
	Name       string
	Group      string
	Plural     string
	Kind       string
	Namespaced bool
	// Served are the versions the API server serves; Storage the one it
	// writes; Stored every version objects may still be stored at
	// (status.storedVersions).
	Served  []string
	Storage string
	Stored  []string
	// Deleting is when its deletion began (metadata.deletionTimestamp);
	// zero while it is not being deleted. Until every object of its kind
	// is gone, the API server refuses to create any.
	Deleting time.Time
}

// fewCRDs is up to how many CRDs are read one GET each (at once): for
// more, one list of every CRD, read as a stream, costs the API server
// less than a request per CRD, and its requests do not grow with them.
const fewCRDs = 16

// CRDs reads the named CRDs; CRDs that do not exist are left out. A few
// are read one by one; more with one paged list of the cluster's CRDs,
// decoded a CRD at a time and without their schemas, so that a provider
// of 2,000 CRDs costs five requests (pages of 500) and megabytes, not gigabytes. An
// identity allowed to get CRDs but not to list them (RBAC that names the
// package's CRDs) reads them one by one as well.
func (c *Cluster) CRDs(ctx context.Context, names []string) (map[string]*CRD, error) {
	if len(names) <= fewCRDs {
		return c.crdsOneByOne(ctx, names)
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	src, err := c.definitions()
	if err != nil {
		return nil, err
	}
	out := map[string]*CRD{}
	_, err = src.list(ctx, crdResource, func(d *definitionDoc) {
		if want[d.Metadata.Name] {
			out[d.Metadata.Name] = crdOf(d)
		}
	})
	if apierrors.IsForbidden(err) {
		return c.crdsOneByOne(ctx, names)
	}
	if err != nil {
		return nil, fmt.Errorf("list CustomResourceDefinitions: %w", err)
	}
	return out, nil
}

// ReadDeletions sets each revision's Deleting: the CRDs among its
// definitions (CRDs, and the CRDs of its MRDs and XRDs, which carry their
// names) that are being deleted, with one CRDs read for every revision.
// An identity that may not read CRDs (RBAC) learns nothing, as it learns
// nothing of events.
func (c *Cluster) ReadDeletions(ctx context.Context, revs ...*installed.Revision) error {
	var names []string
	for _, r := range revs {
		if r == nil {
			continue
		}
		for _, o := range r.Objects {
			if _, ok := definitionResources[o.Kind]; ok {
				names = append(names, o.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	crds, err := c.CRDs(ctx, slices.Compact(names))
	switch {
	case apierrors.IsForbidden(err):
		return nil
	case err != nil:
		return err
	}
	for _, r := range revs {
		if r == nil {
			continue
		}
		r.Deleting = nil
		for _, o := range r.Objects {
			crd := crds[o.Name]
			if _, ok := definitionResources[o.Kind]; ok && crd != nil && !crd.Deleting.IsZero() && r.DeletionOf(o.Name) == nil {
				r.Deleting = append(r.Deleting, installed.Deletion{CRD: o.Name, Since: crd.Deleting})
			}
		}
	}
	return nil
}

// crdsOneByOne reads the named CRDs with a GET each, fewCRDs at a time.
func (c *Cluster) crdsOneByOne(ctx context.Context, names []string) (map[string]*CRD, error) {
	out := map[string]*CRD{}
	var mu sync.Mutex
	err := forEach(len(names), fewCRDs, func(i int) error {
		u, err := c.dyn.Resource(crdResource).Get(ctx, names[i], metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("read CustomResourceDefinition %s: %w", names[i], err)
		}
		d, err := toDefinition(u)
		if err != nil {
			return err
		}
		mu.Lock()
		out[d.Metadata.Name] = crdOf(d)
		mu.Unlock()
		return nil
	})
	return out, err
}

func crdOf(d *definitionDoc) *CRD {
	crd := &CRD{Name: d.Metadata.Name, Group: d.Spec.Group, Plural: d.Spec.Names.Plural, Kind: d.Spec.Names.Kind,
		Namespaced: d.Spec.Scope == "Namespaced", Stored: d.Status.StoredVersions}
	if t := d.Metadata.DeletionTimestamp; t != nil {
		crd.Deleting = t.Time
	}
	for _, v := range d.Spec.Versions {
		if v.Served {
			crd.Served = append(crd.Served, v.Name)
		}
		if v.Storage {
			crd.Storage = v.Name
		}
	}
	return crd
}

// ObjectCount is how many objects of a kind exist.
type ObjectCount struct {
	N int64
	// AtLeast is set when the API server gave no total, only that there
	// are more than N.
	AtLeast bool
}

// CountObjects counts the objects of a CRD's kind in every namespace with
// one LIST of at most one object: the API server reports how many remain.
func (c *Cluster) CountObjects(ctx context.Context, crd *CRD) (ObjectCount, error) {
	if len(crd.Served) == 0 {
		return ObjectCount{}, nil // nothing can be read, nor written
	}
	version := crd.Storage
	if !slices.Contains(crd.Served, version) {
		version = crd.Served[0]
	}
	gvr := schema.GroupVersionResource{Group: crd.Group, Version: version, Resource: crd.Plural}
	l, err := c.dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsNotFound(err) {
		return ObjectCount{}, nil
	}
	if err != nil {
		return ObjectCount{}, fmt.Errorf("count %s: %w", crd.Name, err)
	}
	n := ObjectCount{N: int64(len(l.Items))}
	if rest := l.GetRemainingItemCount(); rest != nil {
		n.N += *rest
	} else if l.GetContinue() != "" {
		n.AtLeast = true
	}
	return n, nil
}

// CountAll counts the objects of each CRD's kind, as CountObjects does,
// many kinds at once: a provider of 2,000 kinds is 2,000 requests, which
// the API server's priority and fairness paces (client-go sends a 429
// again when the server says), not a client-side limiter of five a second.
func (c *Cluster) CountAll(ctx context.Context, crds []*CRD) ([]ObjectCount, error) {
	out := make([]ObjectCount, len(crds))
	err := forEach(len(crds), countConcurrency, func(i int) error {
		var err error
		out[i], err = c.CountObjects(ctx, crds[i])
		return err
	})
	return out, err
}

// countConcurrency is how many counting requests are in flight at once:
// each is a LIST of at most one object, answered in a millisecond or two.
const countConcurrency = 16

// forEach runs f for 0..n-1, at most limit at a time, and returns the
// first error (by index); after an error, the calls not yet started are
// skipped.
func forEach(n, limit int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, limit)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		if failed.Load() {
			<-sem
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if errs[i] = f(i); errs[i] != nil {
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

var deploymentResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// CrossplaneVersion finds the running Crossplane's version the way an
// operator would: the Deployment "crossplane" in its namespace, by its
// image's tag, else its app.kubernetes.io/version label (Crossplane's Helm
// chart sets both), as releases.Running reads them: "v2.4.2" also where
// the chart labels it "2.4.2". "" with the reason when it cannot: the
// Deployment could not be read (not found, forbidden: the error says
// which) or names no version.
func (c *Cluster) CrossplaneVersion(ctx context.Context, namespace string) (string, error) {
	d, err := c.Crossplane(ctx, namespace)
	if err != nil {
		return "", err
	}
	return d.Version, d.VersionErr
}

// CrossplaneDeployment is what the Deployment crossplane says of the
// Crossplane it runs.
type CrossplaneDeployment struct {
	// Version is the release (CrossplaneVersion); "" with VersionErr when
	// the Deployment names none.
	Version    string
	VersionErr error
	// Args and Env are its crossplane container's arguments and
	// environment values (a value from a ConfigMap or Secret is left out).
	Args []string
	Env  map[string]string
}

// Crossplane reads the Deployment crossplane in namespace; the error
// says why it could not (not found, forbidden). While the cluster is
// shared (Share) what was read is kept.
func (c *Cluster) Crossplane(ctx context.Context, namespace string) (*CrossplaneDeployment, error) {
	if c.shared == nil {
		return c.crossplaneDeployment(ctx, namespace)
	}
	w := c.shared
	w.mu.Lock()
	r, ok := c.crossplane[namespace]
	w.mu.Unlock()
	if ok {
		return r.d, r.err
	}
	d, err := c.crossplaneDeployment(ctx, namespace)
	if ctx.Err() == nil {
		w.mu.Lock()
		c.crossplane[namespace] = deploymentRead{d, err}
		w.mu.Unlock()
	}
	return d, err
}

// deploymentRead is what reading Crossplane's Deployment found.
type deploymentRead struct {
	d   *CrossplaneDeployment
	err error
}

func (c *Cluster) crossplaneDeployment(ctx context.Context, namespace string) (*CrossplaneDeployment, error) {
	u, err := c.dyn.Resource(deploymentResource).Namespace(namespace).Get(ctx, "crossplane", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	d := &CrossplaneDeployment{Env: map[string]string{}}
	var images []string
	for _, field := range []string{"containers", "initContainers"} {
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", field)
		for _, ct := range containers {
			m, _ := ct.(map[string]any)
			if image, _ := m["image"].(string); image != "" {
				images = append(images, image)
			}
			if name, _ := m["name"].(string); field == "containers" && (name == "crossplane" || len(containers) == 1) {
				d.Args, d.Env = containerArgs(m)
			}
		}
	}
	if v, ok := releases.Running(u.GetLabels(), images); ok {
		d.Version = v
	} else {
		d.VersionErr = fmt.Errorf("deployment %s/crossplane names no version: no image tag and no %s label", namespace, releases.VersionLabel)
	}
	return d, nil
}

// containerArgs are a container's command-line arguments (command, then
// args) and its literal environment values.
func containerArgs(m map[string]any) ([]string, map[string]string) {
	var args []string
	for _, k := range []string{"command", "args"} {
		list, _ := m[k].([]any)
		for _, a := range list {
			if s, ok := a.(string); ok {
				args = append(args, s)
			}
		}
	}
	env := map[string]string{}
	list, _ := m["env"].([]any)
	for _, e := range list {
		em, _ := e.(map[string]any)
		name, _ := em["name"].(string)
		if value, ok := em["value"].(string); ok && name != "" {
			env[name] = value
		}
	}
	return args, env
}
