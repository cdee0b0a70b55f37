package pkgmanager

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
)

var lockGVR = schema.GroupVersionResource{Group: group, Version: "v1beta1", Resource: "locks"}

// lock records an active revision in the Lock, replacing the package's
// earlier entry.
func (m *Manager) lock(ctx context.Context, kind, rev, image string, deps []Dependency) error {
	source, version := splitRef(image)
	entry := map[string]any{"name": rev, "source": source, "version": version, "type": kind, "dependencies": []any{}}
	for _, d := range deps {
		entry["dependencies"] = append(entry["dependencies"].([]any), map[string]any{
			"package": d.Package, "constraints": d.Constraints, "type": d.Type,
		})
	}
	return m.editLock(ctx, func(pkgs []any) []any {
		var out []any
		for _, p := range pkgs {
			if e, _ := p.(map[string]any); e["source"] != source {
				out = append(out, p)
			}
		}
		return append(out, entry)
	})
}

func (m *Manager) unlock(ctx context.Context, rev string) error {
	return m.editLock(ctx, func(pkgs []any) []any {
		var out []any
		for _, p := range pkgs {
			if e, _ := p.(map[string]any); e["name"] != rev {
				out = append(out, p)
			}
		}
		return out
	})
}

func (m *Manager) editLock(ctx context.Context, edit func([]any) []any) error {
	rc := m.dyn.Resource(lockGVR)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := rc.Get(ctx, "lock", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			u = &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": group + "/v1beta1", "kind": "Lock", "metadata": map[string]any{"name": "lock"}, "packages": []any{}}}
			u.Object["packages"] = edit(nil)
			_, err = rc.Create(ctx, u, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		pkgs, _, _ := unstructured.NestedSlice(u.Object, "packages")
		u.Object["packages"] = edit(pkgs)
		_, err = rc.Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
}

// splitRef cuts an image reference into repository and tag, or digest
// when one pins it (repository:tag@digest records the digest, as the
// package manager does).
func splitRef(ref string) (string, string) {
	if i := strings.LastIndex(ref, "@"); i > 0 {
		repo, _ := splitRef(ref[:i])
		return repo, ref[i+1:]
	}
	slash := strings.LastIndex(ref, "/")
	if i := strings.LastIndex(ref, ":"); i > slash {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}
