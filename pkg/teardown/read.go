package teardown

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
)

// usageResources are where Crossplane serves Usages: v2's namespaced
// Usage and ClusterUsage, and v1's (still served by v2 for old objects).
var usageResources = []schema.GroupVersionResource{
	{Group: "protection.crossplane.io", Version: "v1beta1", Resource: "usages"},
	{Group: "protection.crossplane.io", Version: "v1beta1", Resource: "clusterusages"},
	{Group: "apiextensions.crossplane.io", Version: "v1beta1", Resource: "usages"},
}

// Read plans the teardown of pkg (KIND/NAME), whose definitions make the
// CRDs named defs: every object of each kind (one list per kind), the
// composite resources that compose its managed resources and their
// claims (one list per kind of each), and the Usages (one list per Usage
// kind). mapper finds the resource of a composite's or claim's kind.
func Read(ctx context.Context, c *cluster.Cluster, mapper func() (meta.RESTMapper, error), mode, pkg string, defs []string) (*Plan, error) {
	p := &Plan{Mode: mode, Package: pkg, Definitions: defs}
	crds, err := c.CRDs(ctx, defs)
	if err != nil {
		return nil, err
	}
	r := reading{c: c, p: p, mapper: mapper, byUID: map[string]bool{}}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range crds {
			if !yield(n) {
				return
			}
		}
	}) {
		if err := r.kind(ctx, crds[name]); err != nil {
			return nil, err
		}
	}
	if err := r.composites(ctx); err != nil {
		return nil, err
	}
	if err := r.usages(ctx); err != nil {
		return nil, err
	}
	p.order()
	return p, nil
}

type reading struct {
	c      *cluster.Cluster
	p      *Plan
	mapper func() (meta.RESTMapper, error)
	m      meta.RESTMapper
	byUID  map[string]bool
	// owners are the controllers, outside the package, of its managed
	// resources: the composite resources that compose them.
	owners []ownerRef
}

type ownerRef struct {
	apiVersion, kind, namespace, uid string
	// definedBy is the package revision whose XRD defines the kind.
	definedBy string
}

// kind reads the objects of one CRD the package makes and puts each in
// its stage.
func (r *reading) kind(ctx context.Context, crd *cluster.CRD) error {
	// A ProviderConfigUsage goes with its managed resource (its owner),
	// but the garbage collector takes it later: those left are deleted
	// with the other objects, after the managed resources.
	gvr, ok := cluster.ServedGVR(crd)
	if !ok {
		return nil
	}
	objs, err := r.c.ListResource(ctx, gvr)
	if err != nil || len(objs) == 0 {
		return err
	}
	byStage := map[string]*Group{}
	for _, u := range objs {
		st := stageOf(crd.Kind, u)
		g := byStage[st]
		if g == nil {
			g = &Group{Kind: crd.Kind + "." + crd.Group, Stage: st, gvr: gvr}
			byStage[st] = g
		}
		g.Objects = append(g.Objects, r.object(u, gvr, st))
	}
	for _, st := range Stages {
		if g := byStage[st]; g != nil {
			r.p.Groups = append(r.p.Groups, *g)
		}
	}
	return nil
}

func (r *reading) object(u *unstructured.Unstructured, gvr schema.GroupVersionResource, stage string) Object {
	o := Object{Namespace: u.GetNamespace(), Name: u.GetName(), gvr: gvr, u: u}
	r.byUID[string(u.GetUID())] = true
	if stage != StageManaged {
		return o
	}
	o.ExternalName = u.GetAnnotations()[diagnose.ExternalNameAnnotation]
	if r.p.Mode == ModeOrphan {
		o.Fate, o.Why = FateKept, "its policies first set to keep it"
		if f, why := externalFate(u); f == FateKept {
			o.Why = why
		}
	} else {
		o.Fate, o.Why = externalFate(u)
	}
	for _, ref := range u.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && !strings.HasPrefix(ref.APIVersion, "pkg.") {
			r.owners = append(r.owners, ownerRef{apiVersion: ref.APIVersion, kind: ref.Kind, namespace: u.GetNamespace(), uid: string(ref.UID)})
		}
	}
	return o
}

// stageOf puts an object of a package's kind in its stage, by what it
// is: a ProviderConfig; a claim (it points at its composite resource); a
// composite resource (it names its Composition or composed resources); a
// managed resource (it has forProvider, or the managed finalizer); else
// another object the provider serves.
func stageOf(kind string, u *unstructured.Unstructured) string {
	has := func(path ...string) bool {
		_, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
		return ok
	}
	switch {
	case kind == "ProviderConfig" || kind == "ClusterProviderConfig":
		return StageProviderConfigs
	case has("spec", "resourceRef") && !has("spec", "forProvider"):
		return StageClaims
	case has("spec", "crossplane") || has("spec", "compositionRef") || has("spec", "compositionSelector") || has("spec", "resourceRefs"):
		return StageComposites
	case has("spec", "forProvider") || slices.Contains(u.GetFinalizers(), diagnose.ManagedFinalizer):
		return StageManaged
	}
	return StageOther
}

// composites reads the composite resources that control the package's
// managed resources (deleting a composed resource alone makes its
// composite create it again), and the claims bound to them: one list per
// kind.
func (r *reading) composites(ctx context.Context) error {
	kinds := map[schema.GroupVersionKind][]ownerRef{}
	for _, o := range r.owners {
		if r.byUID[o.uid] {
			continue
		}
		gv, err := schema.ParseGroupVersion(o.apiVersion)
		if err != nil {
			continue
		}
		kinds[gv.WithKind(o.kind)] = append(kinds[gv.WithKind(o.kind)], o)
	}
	var claims []ownerRef
	for _, gvk := range sortedKinds(kinds) {
		objs, gvr, err := r.list(ctx, gvk)
		if err != nil {
			return err
		}
		by, err := r.definedBy(ctx, gvr)
		if err != nil {
			return err
		}
		g := Group{Kind: gvk.GroupKind().String(), Stage: StageComposites, DefinedBy: by, gvr: gvr}
		for _, u := range objs {
			if !slices.ContainsFunc(kinds[gvk], func(o ownerRef) bool { return o.uid == string(u.GetUID()) }) || r.byUID[string(u.GetUID())] {
				continue
			}
			g.Objects = append(g.Objects, r.object(u, gvr, StageComposites))
			if ref, ok, _ := unstructured.NestedStringMap(u.Object, "spec", "claimRef"); ok {
				claims = append(claims, ownerRef{apiVersion: ref["apiVersion"], kind: ref["kind"], namespace: ref["namespace"], uid: ref["name"], definedBy: by})
			}
		}
		if len(g.Objects) > 0 {
			r.p.Groups = append(r.p.Groups, g)
		}
	}
	return r.claims(ctx, claims)
}

// claims reads the claims (named by their composites' claimRef; uid holds
// the name) of each kind, one list each.
func (r *reading) claims(ctx context.Context, refs []ownerRef) error {
	kinds := map[schema.GroupVersionKind][]ownerRef{}
	for _, ref := range refs {
		if gv, err := schema.ParseGroupVersion(ref.apiVersion); err == nil {
			kinds[gv.WithKind(ref.kind)] = append(kinds[gv.WithKind(ref.kind)], ref)
		}
	}
	for _, gvk := range sortedKinds(kinds) {
		objs, gvr, err := r.list(ctx, gvk)
		if err != nil {
			return err
		}
		g := Group{Kind: gvk.GroupKind().String(), Stage: StageClaims, DefinedBy: kinds[gvk][0].definedBy, gvr: gvr}
		for _, u := range objs {
			if slices.ContainsFunc(kinds[gvk], func(o ownerRef) bool { return o.uid == u.GetName() && o.namespace == u.GetNamespace() }) && !r.byUID[string(u.GetUID())] {
				g.Objects = append(g.Objects, r.object(u, gvr, StageClaims))
			}
		}
		if len(g.Objects) > 0 {
			r.p.Groups = append(r.p.Groups, g)
		}
	}
	return nil
}

// xrdResource is where Crossplane serves XRDs (v1 by v1 and v2 alike).
var xrdResource = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1", Resource: "compositeresourcedefinitions"}

// definedBy names the package (kind/name) that made the XRD defining the
// composite resources of gvr, by the owner reference the package manager
// gives every object a package makes besides its revision's: "" when no
// package made it (an XRD applied by hand, or none).
func (r *reading) definedBy(ctx context.Context, gvr schema.GroupVersionResource) (string, error) {
	name := gvr.Resource + "." + gvr.Group
	x, err := r.c.GetResource(ctx, xrdResource, "", name)
	if err != nil {
		return "", fmt.Errorf("read the CompositeResourceDefinition %s: %w", name, err)
	}
	if x == nil {
		return "", nil
	}
	for _, ref := range x.GetOwnerReferences() {
		if strings.HasPrefix(ref.APIVersion, "pkg.crossplane.io/") && !strings.HasSuffix(ref.Kind, "Revision") {
			return strings.ToLower(ref.Kind) + "/" + ref.Name, nil
		}
	}
	return "", nil
}

func sortedKinds(m map[schema.GroupVersionKind][]ownerRef) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// list reads every object of gvk, found through the mapper.
func (r *reading) list(ctx context.Context, gvk schema.GroupVersionKind) ([]*unstructured.Unstructured, schema.GroupVersionResource, error) {
	if r.m == nil {
		m, err := r.mapper()
		if err != nil {
			return nil, schema.GroupVersionResource{}, err
		}
		r.m = m
	}
	mapping, err := r.m.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, schema.GroupVersionResource{}, fmt.Errorf("find the resource of %s: %w", gvk.Kind, err)
	}
	objs, err := r.c.ListResource(ctx, mapping.Resource)
	return objs, mapping.Resource, err
}

// usages reads every Usage and marks the objects they protect with their
// users: a protected object is deleted only once its users are gone.
func (r *reading) usages(ctx context.Context) error {
	for _, gvr := range usageResources {
		us, err := r.c.ListResource(ctx, gvr)
		if err != nil {
			return err
		}
		for _, u := range us {
			of, by := usageEnd(u, "of"), usageEnd(u, "by")
			o := r.p.find(of)
			if o == nil {
				continue
			}
			user := by.kind + " " + by.name
			if r.p.find(by) == nil {
				user += " (not part of this teardown: delete it first)"
			}
			o.UsedBy = append(o.UsedBy, user)
			r.p.Usages = append(r.p.Usages, fmt.Sprintf("%s %s: %s uses %s %s", u.GetKind(), displayOf(u), user, of.kind, of.name))
		}
	}
	return nil
}

// end is one side of a Usage: the object's kind, name and namespace.
type end struct {
	group, kind, name, namespace string
}

func usageEnd(u *unstructured.Unstructured, side string) end {
	av, _, _ := unstructured.NestedString(u.Object, "spec", side, "apiVersion")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", side, "kind")
	name, _, _ := unstructured.NestedString(u.Object, "spec", side, "resourceRef", "name")
	ns, _, _ := unstructured.NestedString(u.Object, "spec", side, "resourceRef", "namespace")
	if ns == "" {
		ns = u.GetNamespace()
	}
	gv, _ := schema.ParseGroupVersion(av)
	return end{group: gv.Group, kind: kind, name: name, namespace: ns}
}

func displayOf(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return u.GetNamespace() + "/" + u.GetName()
	}
	return u.GetName()
}

// find is the object e names in the plan, nil when none.
func (p *Plan) find(e end) *Object {
	for gi := range p.Groups {
		g := &p.Groups[gi]
		if g.gvr.Group != e.group || !strings.HasPrefix(g.Kind, e.kind+".") {
			continue
		}
		for oi := range g.Objects {
			if o := &g.Objects[oi]; o.Name == e.name && (o.Namespace == "" || o.Namespace == e.namespace) {
				return o
			}
		}
	}
	return nil
}

// order sorts the groups by stage, keeping the order read within one.
func (p *Plan) order() {
	slices.SortStableFunc(p.Groups, func(a, b Group) int {
		return slices.Index(Stages, a.Stage) - slices.Index(Stages, b.Stage)
	})
}
