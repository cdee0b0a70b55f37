package cluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
)

// ObjectMeta is what doctor reads of an object of a definition's kind:
// which it is, whether it is being deleted and what its deletion waits for.
type ObjectMeta struct {
	Namespace, Name, UID string
	// Deleting is when its deletion started (nil: it is not being deleted).
	Deleting   *time.Time
	Finalizers []string
}

// EachObject calls each for every object of crd's kind, in every
// namespace, with one paged list of their metadata alone (the metadata
// client's PartialObjectMetadataList: a managed resource's spec and status
// never cross the wire); through the dynamic client where there is no REST
// configuration. A kind the API server no longer serves has no objects.
func (c *Cluster) EachObject(ctx context.Context, crd *CRD, each func(ObjectMeta)) error {
	gvr, ok := servedGVR(crd)
	if !ok {
		return nil
	}
	list := c.dynObjects
	if c.rest != nil {
		mc, err := metadata.NewForConfig(c.rest)
		if err != nil {
			return err
		}
		list = metaObjects(mc)
	}
	opts := metav1.ListOptions{Limit: listPage}
	for {
		cont, err := list(ctx, gvr, opts, each)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("list the objects of CRD %s: %w", crd.Name, err)
		}
		if opts.Continue = cont; cont == "" {
			return nil
		}
	}
}

// servedGVR is the resource crd's objects are read at: its storage
// version when served, else the first it serves.
func servedGVR(crd *CRD) (schema.GroupVersionResource, bool) {
	if len(crd.Served) == 0 {
		return schema.GroupVersionResource{}, false
	}
	version := crd.Storage
	if !slices.Contains(crd.Served, version) {
		version = crd.Served[0]
	}
	return schema.GroupVersionResource{Group: crd.Group, Version: version, Resource: crd.Plural}, true
}

// objectPage lists one page of objects, calls each for every one and
// returns the list's continue token.
type objectPage func(context.Context, schema.GroupVersionResource, metav1.ListOptions, func(ObjectMeta)) (string, error)

func metaObjects(mc metadata.Interface) objectPage {
	return func(ctx context.Context, gvr schema.GroupVersionResource, opts metav1.ListOptions, each func(ObjectMeta)) (string, error) {
		l, err := mc.Resource(gvr).List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range l.Items {
			each(objectMeta(&l.Items[i].ObjectMeta))
		}
		return l.Continue, nil
	}
}

func (c *Cluster) dynObjects(ctx context.Context, gvr schema.GroupVersionResource, opts metav1.ListOptions, each func(ObjectMeta)) (string, error) {
	l, err := c.dyn.Resource(gvr).List(ctx, opts)
	if err != nil {
		return "", err
	}
	for i := range l.Items {
		u := &l.Items[i]
		each(objectMeta(&metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID(),
			DeletionTimestamp: u.GetDeletionTimestamp(), Finalizers: u.GetFinalizers()}))
	}
	return l.GetContinue(), nil
}

func objectMeta(m *metav1.ObjectMeta) ObjectMeta {
	o := ObjectMeta{Namespace: m.Namespace, Name: m.Name, UID: string(m.UID), Finalizers: m.Finalizers}
	if m.DeletionTimestamp != nil {
		o.Deleting = &m.DeletionTimestamp.Time
	}
	return o
}

var compositionGVR = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1", Resource: "compositions"}

// Composition is what doctor reads of a Composition: the kinds it
// composes.
type Composition struct {
	Name string
	// Composes are the kinds of the resource templates it holds: in a
	// pipeline's function inputs (function-patch-and-transform's
	// resources[].base, or any other input's objects that name an
	// apiVersion and kind), and in the resources[].base of Crossplane v1's
	// Resources mode.
	Composes []schema.GroupKind
}

// Compositions reads every Composition with one paged list; none, with
// no error, where Crossplane serves none.
func (c *Cluster) Compositions(ctx context.Context) ([]Composition, error) {
	var out []Composition
	opts := metav1.ListOptions{Limit: listPage}
	for {
		l, err := c.dyn.Resource(compositionGVR).List(ctx, opts)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("list Compositions: %w", err)
		}
		for i := range l.Items {
			out = append(out, composition(&l.Items[i]))
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

func composition(u *unstructured.Unstructured) Composition {
	comp := Composition{Name: u.GetName()}
	add := func(gk schema.GroupKind) {
		if !slices.Contains(comp.Composes, gk) {
			comp.Composes = append(comp.Composes, gk)
		}
	}
	steps, _, _ := unstructured.NestedSlice(u.Object, "spec", "pipeline")
	for _, st := range steps {
		if m, ok := st.(map[string]any); ok {
			// The input's own apiVersion and kind name the function's
			// input type, not a composed resource.
			if in, ok := m["input"].(map[string]any); ok {
				for k, v := range in {
					if k != "apiVersion" && k != "kind" {
						kinds(v, add)
					}
				}
			}
		}
	}
	resources, _, _ := unstructured.NestedSlice(u.Object, "spec", "resources")
	kinds(resources, add)
	return comp
}

// kinds calls add for the group and kind of every object in v (and
// within them) that names an apiVersion and a kind.
func kinds(v any, add func(schema.GroupKind)) {
	switch t := v.(type) {
	case map[string]any:
		av, _ := t["apiVersion"].(string)
		if k, _ := t["kind"].(string); av != "" && k != "" {
			add(schema.FromAPIVersionAndKind(av, k).GroupKind())
		}
		for _, x := range t {
			kinds(x, add)
		}
	case []any:
		for _, x := range t {
			kinds(x, add)
		}
	}
}
