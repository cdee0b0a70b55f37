package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// SetPackage points a package at ref, provided it still points where p
// (read when the change was planned) says, with the spec it had. The JSON
// patch tests the object's UID, its spec's generation and its reference
// as just read before replacing the reference, and the API server applies
// it to the object as stored, all at once: no write can slip in between
// unseen, and another writer's change of its status or metadata (the
// package manager's status, a user's labels, a controller rewriting them
// in a hot loop) neither conflicts nor is lost. A failed test means the
// object changed: read again, a changed reference, spec or object stops
// the change with a ChangedError, since the plan was made for what it was.
func (c *Cluster) SetPackage(ctx context.Context, p *installed.Package, ref string, dryRun bool) (*installed.Package, error) {
	rc, err := c.client(p.Kind)
	if err != nil {
		return nil, err
	}
	opts := metav1.PatchOptions{FieldManager: FieldManager}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	planned := p.Object.GetUID()
	var updated *unstructured.Unstructured
	err = retryOnConflict(ctx, patchRetry, func() error {
		u, err := rc.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := c.dialect.Decode(u).Source
		changed := &ChangedError{Package: p.KindName(), Planned: p.Source, Now: now}
		switch {
		case now != p.Source:
			return changed
		case planned != "" && u.GetUID() != planned:
			changed.Replaced = true
			return changed
		case p.Generation != 0 && u.GetGeneration() != p.Generation:
			// Its activation policy, runtime config, pull policy: the
			// plan was made for the spec it read.
			changed.Generations = [2]int64{p.Generation, u.GetGeneration()}
			return changed
		}
		// Keep the record that the package manager installed it: the
		// change makes this plugin the field manager of its reference. A
		// merge patch of its own, which no other writer's annotations
		// conflict with; a true record even if the change then stops.
		if origin, _ := installed.PackageOrigin(u); origin == installed.OriginDependency && u.GetAnnotations()[installed.InstalledByAnnotation] == "" {
			mark, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{installed.InstalledByAnnotation: installed.PackageManagerFieldManager}}})
			if _, err := rc.Patch(ctx, p.Name, types.MergePatchType, mark, opts); err != nil {
				return err
			}
		}
		patch, err := referencePatch(u, func(u *unstructured.Unstructured) error { return c.dialect.SetPackage(u, ref) })
		if err != nil {
			return err
		}
		updated, err = rc.Patch(ctx, p.Name, types.JSONPatchType, patch, opts)
		if failedTest(ctx, err, rc, u) {
			// Changed since read: a conflict, read again.
			return apierrors.NewConflict(schema.GroupResource{Resource: strings.ToLower(p.Kind) + "s"}, p.Name, err)
		}
		return unanswered(err, "change of "+p.KindName(), p.KindName())
	})
	if err != nil {
		return nil, err
	}
	return c.dialect.Decode(updated), nil
}

// referenceFields are where the dialects keep a package's reference.
var referenceFields = []string{"package", "source"}

// referencePatch is the JSON patch that makes u's reference what set
// makes it, provided its UID, spec (generation) and reference are still
// u's.
func referencePatch(u *unstructured.Unstructured, set func(*unstructured.Unstructured) error) ([]byte, error) {
	want := u.DeepCopy()
	if err := set(want); err != nil {
		return nil, err
	}
	ops := []map[string]any{}
	if uid := u.GetUID(); uid != "" {
		ops = append(ops, map[string]any{"op": "test", "path": "/metadata/uid", "value": uid})
	}
	if gen := u.GetGeneration(); gen != 0 {
		ops = append(ops, map[string]any{"op": "test", "path": "/metadata/generation", "value": gen})
	}
	for _, f := range referenceFields {
		path := "/spec/" + f
		old, had, _ := unstructured.NestedString(u.Object, "spec", f)
		value, has, _ := unstructured.NestedString(want.Object, "spec", f)
		if had {
			ops = append(ops, map[string]any{"op": "test", "path": path, "value": old})
		}
		switch {
		case has && (!had || value != old):
			ops = append(ops, map[string]any{"op": "add", "path": path, "value": value})
		case had && !has:
			ops = append(ops, map[string]any{"op": "remove", "path": path})
		}
	}
	return json.Marshal(ops)
}

// failedTest reports whether a JSON patch of read, whose tests are its
// UID, generation and reference, failed because the object changed: the
// API server answers a failed test with 422 Invalid and no words to go by
// (kube-apiserver v1.36 names no cause), as it answers a value it refuses,
// so the object is read again and compared with what was read. A change
// not seen on that read is no failed test: the 422 stands.
func failedTest(ctx context.Context, err error, rc dynamic.ResourceInterface, read *unstructured.Unstructured) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	now, gerr := rc.Get(ctx, read.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(gerr) {
		return true
	}
	if gerr != nil {
		return false
	}
	if now.GetUID() != read.GetUID() || now.GetGeneration() != read.GetGeneration() {
		return true
	}
	for _, f := range referenceFields {
		a, _, _ := unstructured.NestedString(now.Object, "spec", f)
		b, _, _ := unstructured.NestedString(read.Object, "spec", f)
		if a != b {
			return true
		}
	}
	return false
}

var patchRetry = wait.Backoff{Steps: 8, Duration: 50 * time.Millisecond, Factor: 1.5, Jitter: 0.5}

// retryOnConflict calls fn again, backing off, while it fails with a
// conflict, and returns its last error. Unlike client-go's
// retry.RetryOnConflict, which turns a context error of fn into the last
// conflict's, nil when there was none, a cancelled or timed-out request
// is never taken for success.
func retryOnConflict(ctx context.Context, b wait.Backoff, fn func() error) error {
	for {
		err := fn()
		if err == nil || !apierrors.IsConflict(err) || b.Steps <= 1 {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after: %w)", ctx.Err(), err)
		case <-time.After(b.Step()):
		}
	}
}

// Activate sets a revision's desired state to Active.
func (c *Cluster) Activate(ctx context.Context, r *installed.Revision) error {
	return c.setDesiredState(ctx, r, "Active", "activation", false)
}

// setDesiredState sets a revision's spec.desiredState; what names the
// write in errors (activation, deactivation).
func (c *Cluster) setDesiredState(ctx context.Context, r *installed.Revision, state, what string, dryRun bool) error {
	rc, err := c.client(r.Kind)
	if err != nil {
		return err
	}
	// The revision read, not one deleted and made again since.
	ops := []map[string]any{{"op": "add", "path": "/spec/desiredState", "value": state}}
	if uid := r.UID(); uid != "" {
		ops = append([]map[string]any{{"op": "test", "path": "/metadata/uid", "value": uid}}, ops...)
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: FieldManager}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = rc.Patch(ctx, r.Name, types.JSONPatchType, patch, opts)
	if apierrors.IsInvalid(err) && r.UID() != "" {
		// The one test is the UID (see failedTest).
		now, gerr := rc.Get(ctx, r.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(gerr) || gerr == nil && string(now.GetUID()) != r.UID() {
			return &ChangedError{Package: "revision " + r.Name, Replaced: true}
		}
	}
	pkg := strings.ToLower(strings.TrimSuffix(r.Kind, "Revision"))
	if r.Object != nil {
		if name := r.Object.GetLabels()[r.Object.GroupVersionKind().Group+labelPackageSuffix]; name != "" {
			pkg += "/" + name
		}
	}
	return unanswered(err, what+" of revision "+r.Name, pkg)
}
