package cluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Compositions reads every Composition with one paged list, decoded a
// Composition at a time and kept as what it composes (200 Compositions
// are a megabyte of JSON, ten as decoded maps); none, with no error,
// where Crossplane serves none.
func (c *Cluster) Compositions(ctx context.Context) ([]composition.Composition, error) {
	var out []composition.Composition
	src, err := c.definitions()
	if err != nil {
		return nil, err
	}
	if h, ok := src.(*httpDefinitions); ok {
		_, err := streamList(ctx, h, compositionGVR, func(m *map[string]any) { out = append(out, composition.Read(*m, "")) })
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("list Compositions: %w", err)
		}
		return out, nil
	}
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
			out = append(out, composition.Read(l.Items[i].Object, ""))
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}
