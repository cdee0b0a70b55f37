package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The ProviderConfig kinds a fixture of provider-nop makes (pushFixNop
// with providerConfigCRDs), and what crossplane-runtime puts on them.
var (
	pcGVR  = schema.GroupVersionResource{Group: "nop.crossplane.io", Version: "v1alpha1", Resource: "providerconfigs"}
	pcuGVR = schema.GroupVersionResource{Group: "nop.crossplane.io", Version: "v1alpha1", Resource: "providerconfigusages"}
)

const (
	pcCRD  = "providerconfigs.nop.crossplane.io"
	pcuCRD = "providerconfigusages.nop.crossplane.io"
	// inUseFinalizer holds a ProviderConfig while usages of it remain;
	// pcLabel names the ProviderConfig a usage is of.
	inUseFinalizer = "in-use.crossplane.io"
	pcLabel        = "crossplane.io/provider-config"
)

// providerConfigCRDs are the CRDs (under hack/testdata/e2e/provider-nop)
// of the ProviderConfig kinds.
var providerConfigCRDs = []string{
	"providerconfigs/nop.crossplane.io_providerconfigs.yaml",
	"providerconfigs/nop.crossplane.io_providerconfigusages.yaml",
}

// standInConfigs are the ProviderConfig kinds the stand-in serves, as
// crossplane-runtime v2.4.0's legacy (cluster-scoped) ones are served:
//
//   - each managed resource it manages, not being deleted, is tracked by a
//     ProviderConfigUsage named by its UID, labelled with the name of its
//     spec.providerConfigRef and controlled by it (the
//     LegacyProviderConfigUsageTracker; the managed reconciler tracks before
//     it connects);
//   - a ProviderConfig gets the in-use finalizer and status.users, the
//     number of usages labelled with its name that have a controller
//     (those without one are deleted); being deleted, it keeps the
//     finalizer, with a Terminating condition, while one remains, and
//     loses it once none does (the providerconfig reconciler).
//
// A usage outlives its managed resource until the garbage collector takes
// it (or the teardown deletes it first).
type standInConfigs struct {
	config, usage schema.GroupVersionResource
}

// withConfigs makes the stand-in serve the ProviderConfig kinds too.
func (p *standInProvider) withConfigs() *standInProvider {
	p.configs = &standInConfigs{config: pcGVR, usage: pcuGVR}
	return p
}

// reconcileConfigs is one pass over the usages and ProviderConfigs, after
// one over the managed resources (mrs).
func (p *standInProvider) reconcileConfigs(ctx context.Context, mrs []unstructured.Unstructured) {
	if p.configs == nil || ctx.Err() != nil {
		return
	}
	usages, err := p.dyn.Resource(p.configs.usage).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil && !apierrors.IsNotFound(err) {
			p.logf("list %s: %v", p.configs.usage.Resource, err)
		}
		return
	}
	tracked := map[string]bool{}
	for _, u := range usages.Items {
		tracked[u.GetName()] = true
	}
	for i := range mrs {
		mr := &mrs[i]
		if mr.GetDeletionTimestamp() != nil || !slices.Contains(mr.GetFinalizers(), mrFinalizer) || tracked[string(mr.GetUID())] {
			continue
		}
		if err := p.track(ctx, mr); err != nil && ctx.Err() == nil && !apierrors.IsAlreadyExists(err) {
			p.logf("track %s %s: %v", p.gvr.Resource, mr.GetName(), err)
		}
	}
	configs, err := p.dyn.Resource(p.configs.config).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil && !apierrors.IsNotFound(err) {
			p.logf("list %s: %v", p.configs.config.Resource, err)
		}
		return
	}
	for i := range configs.Items {
		pc := &configs.Items[i]
		if err := p.reconcileConfig(ctx, pc, usages.Items); err != nil && ctx.Err() == nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			p.logf("reconcile %s %s: %v", p.configs.config.Resource, pc.GetName(), err)
		}
	}
}

// track makes the usage of the managed resource mr.
func (p *standInProvider) track(ctx context.Context, mr *unstructured.Unstructured) error {
	ref, _, _ := unstructured.NestedString(mr.Object, "spec", "providerConfigRef", "name")
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": p.configs.usage.GroupVersion().String(), "kind": "ProviderConfigUsage",
		"metadata": map[string]any{
			"name":   string(mr.GetUID()),
			"labels": map[string]any{pcLabel: ref},
			"ownerReferences": []any{map[string]any{
				"apiVersion": mr.GetAPIVersion(), "kind": mr.GetKind(), "name": mr.GetName(), "uid": string(mr.GetUID()),
				"controller": true, "blockOwnerDeletion": true,
			}},
		},
		"providerConfigRef": map[string]any{"name": ref},
		"resourceRef":       map[string]any{"apiVersion": mr.GetAPIVersion(), "kind": mr.GetKind(), "name": mr.GetName()},
	}}
	_, err := p.dyn.Resource(p.configs.usage).Create(ctx, u, metav1.CreateOptions{})
	return err
}

func (p *standInProvider) reconcileConfig(ctx context.Context, pc *unstructured.Unstructured, usages []unstructured.Unstructured) error {
	users := int64(0)
	for _, u := range usages {
		if u.GetLabels()[pcLabel] != pc.GetName() {
			continue
		}
		if metav1.GetControllerOf(&u) == nil {
			if err := p.dyn.Resource(p.configs.usage).Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			continue
		}
		users++
	}
	res := p.dyn.Resource(p.configs.config)
	if pc.GetDeletionTimestamp() != nil {
		i := slices.Index(pc.GetFinalizers(), inUseFinalizer)
		switch {
		case i < 0:
			return nil
		case users > 0:
			return p.configStatus(ctx, pc, users, true)
		}
		patch, _ := json.Marshal([]map[string]any{
			{"op": "test", "path": fmt.Sprintf("/metadata/finalizers/%d", i), "value": inUseFinalizer},
			{"op": "remove", "path": fmt.Sprintf("/metadata/finalizers/%d", i)},
		})
		_, err := res.Patch(ctx, pc.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		return err
	}
	if !slices.Contains(pc.GetFinalizers(), inUseFinalizer) {
		pc.SetFinalizers(append(pc.GetFinalizers(), inUseFinalizer))
		var err error
		if pc, err = res.Update(ctx, pc, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return p.configStatus(ctx, pc, users, false)
}

// configStatus sets status.users, and the Terminating condition of a
// ProviderConfig whose deletion waits for its users; nothing when they
// are already so.
func (p *standInProvider) configStatus(ctx context.Context, pc *unstructured.Unstructured, users int64, terminating bool) error {
	was, _, _ := unstructured.NestedInt64(pc.Object, "status", "users")
	if was == users && (!terminating || conditionTrue(pc, "Terminating")) {
		return nil
	}
	_ = unstructured.SetNestedField(pc.Object, users, "status", "users")
	if terminating {
		conds := []any{map[string]any{"type": "Terminating", "status": "True", "reason": "InUse",
			"message": "Blocking deletion while usages still exist", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}
		_ = unstructured.SetNestedSlice(pc.Object, conds, "status", "conditions")
	}
	_, err := p.dyn.Resource(p.configs.config).UpdateStatus(ctx, pc, metav1.UpdateOptions{})
	return err
}
