package pkgmanager

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// reconcile answers a package whose status does not yet describe its spec
// (or, with again, one whose revision someone else activated or
// deactivated).
func (m *Manager) reconcile(ctx context.Context, o any, again bool) {
	u := asObject(o)
	if u == nil || u.GetDeletionTimestamp() != nil {
		return
	}
	image, _, _ := unstructured.NestedString(u.Object, "spec", "package")
	ident, _, _ := unstructured.NestedString(u.Object, "status", "currentIdentifier")
	observed, reason := installedCondition(u)
	if (ident == image || reason == "UnpackingPackage") && observed == u.GetGeneration() && !again {
		return
	}
	b, ok := m.script(u.GetName())
	if !ok {
		return
	}
	go func() {
		if b.Gate != nil {
			select {
			case <-b.Gate:
			case <-ctx.Done():
				return
			}
		}
		// Retry while the API server is away, as a controller would.
		for ctx.Err() == nil && m.answer(ctx, u, image, b) != nil {
			time.Sleep(500 * time.Millisecond)
		}
	}()
}

// installedCondition is the generation and reason of the package's
// Installed condition.
func installedCondition(u *unstructured.Unstructured) (int64, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Installed" {
			g, _ := m["observedGeneration"].(int64)
			r, _ := m["reason"].(string)
			return g, r
		}
	}
	return 0, ""
}

// revisionChanged answers the package of a revision whose desired state
// someone changed.
func (m *Manager) revisionChanged(ctx context.Context, pkgs schema.GroupVersionResource, old, o any) {
	before, after := asObject(old), asObject(o)
	if before == nil || after == nil {
		return
	}
	was, _, _ := unstructured.NestedString(before.Object, "spec", "desiredState")
	now, _, _ := unstructured.NestedString(after.Object, "spec", "desiredState")
	name := after.GetLabels()[group+"/package"]
	if was == now || name == "" {
		return
	}
	if _, ok := m.script(name); !ok {
		return
	}
	if pkg, err := m.dyn.Resource(pkgs).Get(ctx, name, metav1.GetOptions{}); err == nil {
		m.reconcile(ctx, pkg, true)
	}
}

// answer answers the package as u has it (pointing at image), unless its
// spec has changed since: an answer held back (Gate, a busy machine) or
// tried again (the API server away) is for a spec that may be gone, and
// the package manager answers the present spec, from the event its change
// brought, not an old one stamped with the present generation.
func (m *Manager) answer(ctx context.Context, u *unstructured.Unstructured, image string, b Behaviour) error {
	mu, _ := m.answering.LoadOrStore(u.GetKind()+"/"+u.GetName(), &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	cur, err := m.dyn.Resource(resource(u.GetKind())).Get(ctx, u.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if stale(u, cur) {
		return nil
	}
	b = b.For(image)
	rev := m.RevisionName(u.GetName(), image, u.GetGeneration())
	if b.Fail == "" {
		active, err := m.ensureRevision(ctx, u, rev, image)
		if err != nil {
			return err
		}
		if !active {
			return m.setStatus(ctx, u, rev, image, Behaviour{inactive: true})
		}
		if err := m.setRevisionStatus(ctx, u.GetKind(), rev, b); err != nil {
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
// active one under Automatic activation (under Manual every other one is
// deactivated all the same), numbering it after the package's earlier
// revisions; it reports whether the revision is active. The v2.4 manager
// deletes the oldest revisions past revisionHistoryLimit.
func (m *Manager) ensureRevision(ctx context.Context, pkg *unstructured.Unstructured, name, image string) (bool, error) {
	rc := m.dyn.Resource(resource(pkg.GetKind() + "Revision"))
	sel := metav1.ListOptions{LabelSelector: group + "/package=" + pkg.GetName()}
	list, err := rc.List(ctx, sel)
	if err != nil {
		return false, err
	}
	var n int64
	var existing *unstructured.Unstructured
	for i := range list.Items {
		r := &list.Items[i]
		if orphan(r, pkg) {
			// A revision of an earlier package of that name, which
			// garbage collection would have deleted with it.
			if err := rc.Delete(ctx, r.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			continue
		}
		v, _, _ := unstructured.NestedInt64(r.Object, "spec", "revision")
		n = max(n, v)
		if r.GetName() == name {
			existing = r
			continue
		}
		if s, _, _ := unstructured.NestedString(r.Object, "spec", "desiredState"); s == "Inactive" {
			continue
		}
		_ = unstructured.SetNestedField(r.Object, "Inactive", "spec", "desiredState")
		if _, err := rc.Update(ctx, r, metav1.UpdateOptions{}); err != nil {
			return false, err
		}
	}
	state := "Active"
	if p, _, _ := unstructured.NestedString(pkg.Object, "spec", "revisionActivationPolicy"); p == "Manual" {
		state = "Inactive"
	}
	if existing != nil {
		return m.reuse(ctx, existing, n, state)
	}
	if err := m.collectOldest(ctx, pkg, list.Items); err != nil {
		return false, err
	}
	r := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": pkg.GetKind() + "Revision",
		"metadata": map[string]any{"name": name, "labels": map[string]any{group + "/package": pkg.GetName()}},
		"spec":     map[string]any{"image": image, "revision": n + 1, "desiredState": state},
	}}
	r.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: pkg.GetAPIVersion(), Kind: pkg.GetKind(), Name: pkg.GetName(), UID: pkg.GetUID(), Controller: ptr(true)}})
	_, err = rc.Create(ctx, r, metav1.CreateOptions{})
	return state == "Active", err
}

// orphan reports whether a revision is owned by another package than pkg.
func orphan(r, pkg *unstructured.Unstructured) bool {
	for _, o := range r.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller && o.UID != pkg.GetUID() {
			return true
		}
	}
	return false
}

// reuse makes an existing revision current again, as Crossplane does when
// a package goes back to an image it had (v2.3; on v2.4 only while the
// generation is the same): it becomes the newest and, under Automatic
// activation, the active one again.
func (m *Manager) reuse(ctx context.Context, existing *unstructured.Unstructured, newest int64, state string) (bool, error) {
	changed := false
	if v, _, _ := unstructured.NestedInt64(existing.Object, "spec", "revision"); v < newest {
		_ = unstructured.SetNestedField(existing.Object, newest+1, "spec", "revision")
		changed = true
	}
	cur, _, _ := unstructured.NestedString(existing.Object, "spec", "desiredState")
	if state == "Active" && cur != "Active" {
		_ = unstructured.SetNestedField(existing.Object, "Active", "spec", "desiredState")
		cur, changed = "Active", true
	}
	if changed {
		if _, err := m.dyn.Resource(resource(existing.GetKind())).Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
			return false, err
		}
	}
	return cur == "Active", nil
}

// collectOldest deletes, for the v2.4 manager, the oldest revisions of
// revs that a new one pushes past the package's revisionHistoryLimit
// (1 when unset; 0 keeps them all).
func (m *Manager) collectOldest(ctx context.Context, pkg *unstructured.Unstructured, revs []unstructured.Unstructured) error {
	if m.release != V24 {
		return nil
	}
	limit, found, _ := unstructured.NestedInt64(pkg.Object, "spec", "revisionHistoryLimit")
	if !found {
		limit = 1
	}
	if limit == 0 || int64(len(revs)) < limit+1 {
		return nil
	}
	slices.SortFunc(revs, func(a, b unstructured.Unstructured) int {
		x, _, _ := unstructured.NestedInt64(a.Object, "spec", "revision")
		y, _, _ := unstructured.NestedInt64(b.Object, "spec", "revision")
		return int(x - y)
	})
	rc := m.dyn.Resource(resource(pkg.GetKind() + "Revision"))
	for _, r := range revs[:int64(len(revs))-limit] {
		if err := rc.Delete(ctx, r.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// stale reports whether cur, the package as it is now, is another object
// or has another spec than pkg, the package an answer was made for.
func stale(pkg, cur *unstructured.Unstructured) bool {
	return cur.GetUID() != pkg.GetUID() || cur.GetGeneration() != pkg.GetGeneration()
}

// setStatus writes the package's status as the package manager does, for
// the generation it answers (none when the spec has changed since: the
// update conflicts when it changes in between, and is tried again).
func (m *Manager) setStatus(ctx context.Context, pkg *unstructured.Unstructured, rev, image string, b Behaviour) error {
	rc := m.dyn.Resource(resource(pkg.GetKind()))
	cur, err := rc.Get(ctx, pkg.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	if stale(pkg, cur) {
		return nil
	}
	gen := cur.GetGeneration()
	installed := condition("Installed", "True", "ActivePackageRevision", "", gen)
	healthy := condition("Healthy", "True", "HealthyPackageRevision", "", gen)
	switch {
	case b.inactive:
		installed = condition("Installed", "False", "InactivePackageRevision", "Package is inactive", gen)
		healthy = condition("Healthy", "Unknown", "UnknownPackageRevisionHealth", "", gen)
	case b.Fail != "":
		installed = condition("Installed", "False", "UnpackingPackage", b.Fail, gen)
		healthy = condition("Healthy", "Unknown", "UnknownPackageRevisionHealth", "", gen)
	case b.Unhealthy:
		healthy = condition("Healthy", "False", "UnhealthyPackageRevision", cmp.Or(b.Message, "runtime is not ready"), gen)
	case b.AwaitingActivation && m.release == V24:
		healthy = condition("Healthy", "True", "AwaitingActivation", awaitingActivation, gen)
	}
	status := map[string]any{"conditions": []any{installed, healthy}, "currentIdentifier": image, "currentRevision": rev}
	if b.Fail != "" {
		// An image it cannot unpack: Crossplane says so for the present
		// generation, and keeps the reference and revision it had.
		status["currentIdentifier"], _, _ = unstructured.NestedString(cur.Object, "status", "currentIdentifier")
		status["currentRevision"], _, _ = unstructured.NestedString(cur.Object, "status", "currentRevision")
	}
	cur.Object["status"] = status
	_, err = rc.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	return err
}

// awaitingActivation is the v2.4 manager's message for a runtime scaled to
// zero.
const awaitingActivation = "Package runtime is scaled to zero; awaiting the first ManagedResourceDefinition to be activated"

// setRevisionStatus writes the health conditions of an active revision;
// the v2.4 manager adds RuntimeActive to those with a runtime.
func (m *Manager) setRevisionStatus(ctx context.Context, kind, rev string, b Behaviour) error {
	rc := m.dyn.Resource(resource(kind + "Revision"))
	cur, err := rc.Get(ctx, rev, metav1.GetOptions{})
	if err != nil {
		return err
	}
	gen := cur.GetGeneration()
	conds := []any{condition("RevisionHealthy", "True", "HealthyPackageRevision", "", gen)}
	if kind != "Configuration" {
		conds = append(conds, condition("RuntimeHealthy", "True", "HealthyPackageRevision", "", gen))
		if m.release == V24 {
			active := condition("RuntimeActive", "True", "ActiveRuntime", "", gen)
			if b.AwaitingActivation {
				active = condition("RuntimeActive", "False", "AwaitingActivation", awaitingActivation, gen)
			}
			conds = append(conds, active)
		}
	}
	cur.Object["status"] = map[string]any{"conditions": conds}
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
	_ = m.unlock(ctx, m.RevisionName(u.GetName(), image, u.GetGeneration()))
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
		_, err = rc.Create(ctx, pkg, metav1.CreateOptions{FieldManager: installed.PackageManagerFieldManager})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
