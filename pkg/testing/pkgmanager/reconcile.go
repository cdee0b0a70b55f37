package pkgmanager

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
)

// reconcile answers a package whose status does not yet describe its spec.
func (m *Manager) reconcile(ctx context.Context, o any) {
	u := asObject(o)
	if u == nil || u.GetDeletionTimestamp() != nil {
		return
	}
	image, _, _ := unstructured.NestedString(u.Object, "spec", "package")
	ident, _, _ := unstructured.NestedString(u.Object, "status", "currentIdentifier")
	observed := observedGeneration(u)
	if ident == image && observed == u.GetGeneration() {
		return
	}
	b, ok := m.script(u.GetName())
	if !ok {
		return
	}
	go func() {
		if b.Delay > 0 {
			time.Sleep(b.Delay)
		}
		// Retry while the API server is away, as a controller would.
		for ctx.Err() == nil && m.answer(ctx, u, image, b) != nil {
			time.Sleep(500 * time.Millisecond)
		}
	}()
}

func observedGeneration(u *unstructured.Unstructured) int64 {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Installed" {
			g, _ := m["observedGeneration"].(int64)
			return g
		}
	}
	return 0
}

func (m *Manager) answer(ctx context.Context, u *unstructured.Unstructured, image string, b Behaviour) error {
	rev := m.revisionName(u.GetName(), image)
	if b.Fail == "" {
		if err := m.ensureRevision(ctx, u, rev, image); err != nil {
			return err
		}
		if err := m.lock(ctx, u.GetKind(), rev, image, b.DependsOn); err != nil {
			return err
		}
		if err := m.installDependencies(ctx, b.DependsOn); err != nil {
			return err
		}
	}
	return m.setStatus(ctx, u, rev, image, b)
}

func resource(kind string) schema.GroupVersionResource {
	plural := map[string]string{
		"Provider": "providers", "Configuration": "configurations", "Function": "functions",
		"ProviderRevision": "providerrevisions", "ConfigurationRevision": "configurationrevisions", "FunctionRevision": "functionrevisions",
	}[kind]
	return schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}
}

// ensureRevision creates the revision for image and makes it the only
// active one, numbering it after the package's earlier revisions.
func (m *Manager) ensureRevision(ctx context.Context, pkg *unstructured.Unstructured, name, image string) error {
	rc := m.dyn.Resource(resource(pkg.GetKind() + "Revision"))
	sel := metav1.ListOptions{LabelSelector: group + "/package=" + pkg.GetName()}
	list, err := rc.List(ctx, sel)
	if err != nil {
		return err
	}
	var n int64
	var existing *unstructured.Unstructured
	for i := range list.Items {
		r := &list.Items[i]
		v, _, _ := unstructured.NestedInt64(r.Object, "spec", "revision")
		n = max(n, v)
		if r.GetName() == name {
			existing = r
			continue
		}
		_ = unstructured.SetNestedField(r.Object, "Inactive", "spec", "desiredState")
		if _, err := rc.Update(ctx, r, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	state := "Active"
	if p, _, _ := unstructured.NestedString(pkg.Object, "spec", "revisionActivationPolicy"); p == "Manual" {
		state = "Inactive"
	}
	if existing != nil {
		// As Crossplane does when a package goes back to an image it had:
		// the revision becomes the newest (and, under Automatic
		// activation, the active) one again.
		changed := false
		if v, _, _ := unstructured.NestedInt64(existing.Object, "spec", "revision"); v < n {
			_ = unstructured.SetNestedField(existing.Object, n+1, "spec", "revision")
			changed = true
		}
		if cur, _, _ := unstructured.NestedString(existing.Object, "spec", "desiredState"); state == "Active" && cur != "Active" {
			_ = unstructured.SetNestedField(existing.Object, "Active", "spec", "desiredState")
			changed = true
		}
		if changed {
			_, err = rc.Update(ctx, existing, metav1.UpdateOptions{})
		}
		return err
	}
	r := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": pkg.GetKind() + "Revision",
		"metadata": map[string]any{"name": name, "labels": map[string]any{group + "/package": pkg.GetName()}},
		"spec":     map[string]any{"image": image, "revision": n + 1, "desiredState": state},
	}}
	r.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: pkg.GetAPIVersion(), Kind: pkg.GetKind(), Name: pkg.GetName(), UID: pkg.GetUID(), Controller: ptr(true)}})
	_, err = rc.Create(ctx, r, metav1.CreateOptions{})
	return err
}

func ptr[T any](v T) *T { return &v }

// setStatus writes the package's status as the package manager does.
func (m *Manager) setStatus(ctx context.Context, pkg *unstructured.Unstructured, rev, image string, b Behaviour) error {
	rc := m.dyn.Resource(resource(pkg.GetKind()))
	cur, err := rc.Get(ctx, pkg.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	gen := cur.GetGeneration()
	installed := condition("Installed", "True", "ActivePackageRevision", "", gen)
	healthy := condition("Healthy", "True", "HealthyPackageRevision", "", gen)
	switch {
	case b.Fail != "":
		installed = condition("Installed", "False", "UnpackingPackage", b.Fail, gen)
		healthy = condition("Healthy", "Unknown", "UnknownPackageRevisionHealth", "", gen)
	case b.Unhealthy:
		healthy = condition("Healthy", "False", "UnhealthyPackageRevision", "runtime is not ready", gen)
	}
	status := map[string]any{"conditions": []any{installed, healthy}, "currentIdentifier": image}
	if b.Fail == "" {
		status["currentRevision"] = rev
	}
	cur.Object["status"] = status
	_, err = rc.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	return err
}

func condition(t, status, reason, message string, gen int64) map[string]any {
	return map[string]any{
		"type": t, "status": status, "reason": reason, "message": message, "observedGeneration": gen,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}
}

// collect deletes the revisions of a deleted package and its Lock entry, as
// garbage collection and the package manager would.
func (m *Manager) collect(ctx context.Context, o any) {
	u := asObject(o)
	if u == nil {
		return
	}
	if _, ok := m.script(u.GetName()); !ok {
		return
	}
	rc := m.dyn.Resource(resource(u.GetKind() + "Revision"))
	_ = rc.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: group + "/package=" + u.GetName()})
	image, _, _ := unstructured.NestedString(u.Object, "spec", "package")
	_ = m.unlock(ctx, m.revisionName(u.GetName(), image))
}

// installDependencies creates the dependencies to install that no package
// provides, as Crossplane's resolver does: a package of the dependency's
// kind with only spec.package set, under the package manager's field
// manager, which is all that records who installed it.
func (m *Manager) installDependencies(ctx context.Context, deps []Dependency) error {
	for _, d := range deps {
		if d.Install == "" {
			continue
		}
		rc := m.dyn.Resource(resource(d.Type))
		list, err := rc.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		provided := false
		for _, p := range list.Items {
			ref, _, _ := unstructured.NestedString(p.Object, "spec", "package")
			repo, _ := splitRef(ref)
			provided = provided || repo == d.Package
		}
		if provided {
			continue
		}
		pkg := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": d.Type, "metadata": map[string]any{"name": d.As},
			"spec": map[string]any{"package": d.Install},
		}}
		_, err = rc.Create(ctx, pkg, metav1.CreateOptions{FieldManager: cluster.PackageManagerFieldManager})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
