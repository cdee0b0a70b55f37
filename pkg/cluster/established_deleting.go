package cluster

import (
	"context"
	"fmt"
	"time"
)

// What a wait for definitions says of one being deleted: since when, and
// how many objects of its kind hold it.

// markDeleting judges a definition being deleted, or whose CRD is, not
// ready, whatever its conditions say: a CRD keeps Established=True while
// it is Terminating, and an MRD made again over it reports Established,
// but the API server refuses every new object of the kind until the
// deletion finishes.
func (def *Definition) markDeleting(doc, crd *definitionDoc) {
	def.crd = crd
	at := doc.Metadata.DeletionTimestamp
	if at == nil && crd != nil {
		at = crd.Metadata.DeletionTimestamp
	}
	if at == nil {
		return
	}
	def.Ready, def.stale, def.Deleting = false, false, at.Time
	def.crdDeleting = doc.Metadata.DeletionTimestamp == nil
	def.State = "being deleted"
}

// deletion says which definition is being deleted, and since when.
func (def *Definition) deletion() string {
	since := "is being deleted (since " + def.Deleting.UTC().Format(time.RFC3339) + ")"
	if def.crdDeleting {
		return def.Ref.Kind + " " + def.Ref.Name + ": its CustomResourceDefinition " + since
	}
	return def.Ref.Kind + " " + def.Ref.Name + " " + since
}

// countHolders adds to what is pending of each definition being deleted
// how many objects of its kind hold it: one list of at most one object
// per kind, bounded by holdersTimeout (the wait's own time is spent).
func (w *establishWait) countHolders(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, holdersTimeout)
	defer cancel()
	for _, d := range w.deleting {
		w.pending[d.i] = d.def.deletion() + ": " + w.holders(ctx, d.def) + "; kubectl xpkg doctor says what holds it"
	}
}

// deletingDef is a definition being deleted, at index i of what is
// pending.
type deletingDef struct {
	i   int
	def Definition
}

// holdersTimeout bounds the count of what holds a deletion.
const holdersTimeout = 10 * time.Second

// holders says how many objects of a deleting definition's kind exist.
func (w *establishWait) holders(ctx context.Context, def Definition) string {
	if def.crd == nil {
		return "the objects of its kind could not be counted: its CustomResourceDefinition is not found"
	}
	crd := crdOf(def.crd)
	n, err := w.c.CountObjects(ctx, crd)
	if err != nil {
		return "the objects of its kind could not be counted: " + err.Error()
	}
	switch {
	case n.N == 0 && !n.AtLeast:
		return "no object of kind " + crd.Kind + " is left: the API server is finishing the deletion"
	case n.N == 1 && !n.AtLeast:
		return "1 object of kind " + crd.Kind + " still exists, held by its finalizers"
	case n.AtLeast:
		return fmt.Sprintf("at least %d objects of kind %s still exist, held by their finalizers", n.N, crd.Kind)
	}
	return fmt.Sprintf("%d objects of kind %s still exist, held by their finalizers", n.N, crd.Kind)
}
