package repair

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
)

// await reads the definition every Interval until the old one is gone
// and the package manager has made it again, established; Wait bounds it
// (a WaitTimeoutError, exit status 124).
func (e *Executor) await(ctx context.Context, h *diagnose.Held) error {
	deadline := time.Now().Add(e.Wait)
	for {
		r, err := e.Cluster.DefinitionRemade(ctx, h.CRD.Name, h.CRDUID)
		if err != nil {
			return err
		}
		if r.Made {
			if e.remade == nil {
				e.remade = map[string]*cluster.CRD{}
			}
			e.remade[h.CRD.Name] = r.CRD
			return nil
		}
		if !time.Now().Add(e.Interval).Before(deadline) {
			return &cluster.WaitTimeoutError{What: "CRD " + h.CRD.Name + " to be made again (--wait)", After: e.Wait, Pending: []string{r.Why}}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(e.Interval):
		}
	}
}

// recreate makes the held object again from what was read of it, with
// its external name, policies, labels and spec, and reads it back; it
// returns why it could not ("" when it is back). An object of its name
// already there is back when it carries the same external name.
func (e *Executor) recreate(ctx context.Context, rp *Plan, h *diagnose.Held) string {
	crd := e.remade[h.CRD.Name]
	if crd == nil {
		return "its CRD was not made again"
	}
	u := Recreatable(h.Object)
	dropped, err := e.keepLiveOwners(ctx, u)
	if err != nil {
		return exit.Message(err)
	}
	made, exists, err := e.Cluster.CreateObject(ctx, crd, u, e.DryRun)
	if err != nil {
		return exit.Message(err)
	}
	want := h.Object.GetAnnotations()[diagnose.ExternalNameAnnotation]
	if got := made.GetAnnotations()[diagnose.ExternalNameAnnotation]; exists && got != want {
		return fmt.Sprintf("an object of its name exists already, with external name %q, not %q", got, want)
	}
	if e.DryRun {
		return ""
	}
	back, err := e.Cluster.GetObject(ctx, crd, u.GetNamespace(), u.GetName())
	switch {
	case err != nil:
		return "made again, but it could not be read back: " + exit.Message(err)
	case back == nil:
		return "made again, then deleted at once (by the garbage collector, or another writer)"
	case back.GetAnnotations()[diagnose.ExternalNameAnnotation] != want:
		return fmt.Sprintf("made again, but its external name now reads %q, not %q", back.GetAnnotations()[diagnose.ExternalNameAnnotation], want)
	}
	if len(dropped) > 0 {
		// Back, but no longer owned: said, as a step done with a change.
		rp.Notes = append(rp.Notes, fmt.Sprintf("%s: made again without its owner reference to %s, which is gone", diagnose.HeldName(h.CRD, h.Object), strings.Join(dropped, ", ")))
	}
	return ""
}

// keepLiveOwners drops from u the owner references to owners that are
// gone (the garbage collector would delete it again at once), and
// returns them.
func (e *Executor) keepLiveOwners(ctx context.Context, u *unstructured.Unstructured) ([]string, error) {
	refs := u.GetOwnerReferences()
	if len(refs) == 0 {
		return nil, nil
	}
	if e.mapper == nil {
		m, err := e.Mapper()
		if err != nil {
			return nil, err
		}
		e.mapper = m
	}
	var keep []metav1.OwnerReference
	var dropped []string
	for _, ref := range refs {
		ok, err := e.Cluster.OwnerExists(ctx, e.mapper, ref, u.GetNamespace())
		if err != nil {
			return nil, err
		}
		if ok {
			keep = append(keep, ref)
		} else {
			dropped = append(dropped, ref.Kind+" "+ref.Name)
		}
	}
	u.SetOwnerReferences(keep)
	return dropped, nil
}

// Recreatable is an object read whole as it is made again: without what
// the API server sets, its status (which its controller writes again)
// and its finalizers (which its controller adds again).
func Recreatable(u *unstructured.Unstructured) *unstructured.Unstructured {
	v := Whole(u)
	delete(v.Object, "status")
	unstructured.RemoveNestedField(v.Object, "metadata", "finalizers")
	return v
}

// Whole is an object as a backup keeps it: everything but what only the
// API server sets (identity, versions, times, field managers), so that
// kubectl apply -f makes it again.
func Whole(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	return u
}
