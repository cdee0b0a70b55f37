package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// The activation benchmark's cluster: the MRDs of 20 providers as
// Crossplane v2 leaves them (those the default policy activates with
// their CRDs made, the others inactive), and Compositions that compose
// their kinds, grown size by size.

const (
	actPrefix = "act"
	actSet    = "activation"
	// actPolicy is the name of the policy Crossplane's install makes.
	actPolicy = "default"
)

var (
	mrdGVR         = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourcedefinitions"}
	mrapGVR        = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourceactivationpolicies"}
	compositionGVR = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1", Resource: "compositions"}
	// actGroup matches the API groups of the benchmark's MRDs:
	// ec2.act3.crossplane.io.
	actGroup = regexp.MustCompile(`(^|\.)` + actPrefix + `\d+\.crossplane\.io$`)
)

// actSize is one size: MRDs (planTemplates to a provider and an API
// group) and Compositions.
type actSize struct{ mrds, compositions int }

// actActive says whether MRD i is active: those of even-numbered
// providers, which the default policy names.
func actActive(i int) bool { return (i/planTemplates)%2 == 0 }

func (s actSize) active() int {
	n := 0
	for i := range s.mrds {
		if actActive(i) {
			n++
		}
	}
	return n
}

func (s actSize) providers() int { return (s.mrds + planTemplates - 1) / planTemplates }

func (s actSize) String() string {
	return fmt.Sprintf("%d MRDs (%d active), %d Compositions", s.mrds, s.active(), s.compositions)
}

// actGroupOf is provider g's API group suffix.
func actGroupOf(g int) string { return fmt.Sprintf("%s%d.crossplane.io", actPrefix, g) }

// actCluster is the environment and what the benchmark wrote in it.
type actCluster struct {
	env  *testenv.Env
	dyn  dynamic.Interface
	ts   []*planTemplate
	est  *establishedWatch
	size actSize
	// owners are each provider's package and revision (the MRDs'
	// owners, the revision their controller); crds the active MRDs' CRDs.
	owners [][]metav1.OwnerReference
	crds   []string
}

// mrd is MRD number i: provider-aws's CRD i%100 in provider i/100's group.
func (ac *actCluster) mrd(i int) planCRD {
	return planCRD{v: ac.ts[i%planTemplates].v1, prefix: actPrefix, group: i / planTemplates}
}

// grow writes what the size has and the cluster lacks: providers, MRDs
// (an active one with its CRD, as Crossplane makes it), Compositions, the
// default policy; and waits until every CRD is established, so that the
// API server is idle again when the plan is measured.
func (ac *actCluster) grow(ctx context.Context, s actSize) error {
	for g := len(ac.owners); g < s.providers(); g++ {
		owners, err := ac.provider(ctx, g)
		if err != nil {
			return err
		}
		ac.owners = append(ac.owners, owners)
	}
	crds := make([]string, s.mrds)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(crdWorkers)
	for i := ac.size.mrds; i < s.mrds; i++ {
		g.Go(func() error {
			var err error
			crds[i], err = ac.createMRD(gctx, i)
			return err
		})
	}
	for k := ac.size.compositions; k < s.compositions; k++ {
		g.Go(func() error { return ac.createComposition(gctx, k) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, n := range crds {
		if n != "" {
			ac.crds = append(ac.crds, n)
		}
	}
	ac.size = s
	if err := ac.writePolicy(ctx); err != nil {
		return err
	}
	_, err := ac.est.wait(ctx, ac.crds)
	return err
}

// provider creates provider g's package and its active revision, which
// own its MRDs.
func (ac *actCluster) provider(ctx context.Context, g int) ([]metav1.OwnerReference, error) {
	name := fmt.Sprintf("bench-provider-%s-%02d", actPrefix, g)
	p, err := createPackage(ctx, ac.dyn, providersGVR, "Provider", name, fmt.Sprintf("%s/bench/provider-%s-%02d:v1.0.0", doctorRepoHost, actPrefix, g))
	if err != nil {
		return nil, err
	}
	rev := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "ProviderRevision",
		"metadata": map[string]any{"name": name + "-0123456789ab", "labels": map[string]any{packageLabel: name}},
		"spec":     map[string]any{"image": p.Object["spec"].(map[string]any)["package"], "revision": int64(1), "desiredState": "Active"},
	}}
	rev.SetOwnerReferences([]metav1.OwnerReference{ownerOf(p, true)})
	if rev, err = ac.dyn.Resource(revisionsGVR).Create(ctx, rev, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return []metav1.OwnerReference{ownerOf(p, false), ownerOf(rev, true)}, nil
}

// createMRD creates MRD i, Active or Inactive, and for an active one the
// CRD Crossplane would make of it, owned by it and by its controller;
// it returns that CRD's name ("" for an inactive MRD).
func (ac *actCluster) createMRD(ctx context.Context, i int) (string, error) {
	c := ac.mrd(i)
	m, err := c.object()
	if err != nil {
		return "", err
	}
	delete(m, "status")
	state := "Inactive"
	if actActive(i) {
		state = "Active"
	}
	m["apiVersion"], m["kind"] = "apiextensions.crossplane.io/v1alpha1", "ManagedResourceDefinition"
	m["spec"].(map[string]any)["state"] = state
	mrd := &unstructured.Unstructured{Object: m}
	mrd.SetAnnotations(nil)
	mrd.SetOwnerReferences(ac.owners[i/planTemplates])
	if mrd, err = ac.dyn.Resource(mrdGVR).Create(ctx, mrd, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create MRD %s: %w", c.Name(), err)
	}
	if state != "Active" {
		return "", nil
	}
	if m, err = c.object(); err != nil {
		return "", err
	}
	crd := &unstructured.Unstructured{Object: m}
	crd.SetLabels(map[string]string{benchSetLabel: actSet})
	crd.SetOwnerReferences([]metav1.OwnerReference{ownerOf(mrd, false), ac.owners[i/planTemplates][1]})
	if _, err := ac.dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create CRD %s: %w", c.Name(), err)
	}
	return c.Name(), nil
}

// writePolicy writes the default policy as Crossplane's install makes it
// (named default), activating the even-numbered providers' groups: the
// MRDs that are active.
func (ac *actCluster) writePolicy(ctx context.Context) error {
	var activate []any
	for g := 0; g < ac.size.providers(); g += 2 {
		activate = append(activate, "*."+actGroupOf(g))
	}
	rc := ac.dyn.Resource(mrapGVR)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := rc.Get(ctx, actPolicy, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			u = &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apiextensions.crossplane.io/v1alpha1", "kind": "ManagedResourceActivationPolicy",
				"metadata": map[string]any{"name": actPolicy}, "spec": map[string]any{"activate": activate},
			}}
			_, err = rc.Create(ctx, u, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		u.Object["spec"] = map[string]any{"activate": activate}
		_, err = rc.Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
}

// actKind is a composed kind: its CRD's name, apiVersion and kind.
type actKind struct{ name, apiVersion, kind string }

// composes are the MRDs Composition k composes: 3 to 5 kinds of one
// provider; the first 20 Compositions compose the first two providers'
// kinds (one active, one not), so that each size has them all.
func (ac *actCluster) composes(k int) []actKind {
	g := k % 20
	if k < 20 {
		g = k % 2
	}
	var out []actKind
	for j := range 3 + k%3 {
		t := (k*17 + j*7) % planTemplates
		c := ac.mrd(g*planTemplates + t)
		obj := ac.ts[t].obj
		spec := obj["spec"].(map[string]any)
		group := strings.Replace(spec["group"].(string), awsGroup, actGroupOf(g), 1)
		version := ""
		for _, v := range spec["versions"].([]any) {
			if vm := v.(map[string]any); vm["storage"] == true {
				version = vm["name"].(string)
			}
		}
		kind := spec["names"].(map[string]any)["kind"].(string)
		out = append(out, actKind{name: c.Name(), apiVersion: group + "/" + version, kind: kind})
	}
	return out
}

// needed are the MRDs the size's Compositions compose.
func (ac *actCluster) needed(s actSize) map[string]bool {
	out := map[string]bool{}
	for k := range s.compositions {
		for _, c := range ac.composes(k) {
			out[c.name] = true
		}
	}
	return out
}

// createComposition creates Composition k: a pipeline of
// function-patch-and-transform composing its kinds (every fourth
// Composition renders the last one with function-go-templating instead),
// then function-auto-ready.
func (ac *actCluster) createComposition(ctx context.Context, k int) error {
	kinds := ac.composes(k)
	templated := k%4 == 3
	pt := kinds
	if templated {
		pt = kinds[:len(kinds)-1]
	}
	var resources []any
	for j, c := range pt {
		name := fmt.Sprintf("resource-%d", j)
		resources = append(resources, map[string]any{
			"name": name,
			"base": map[string]any{"apiVersion": c.apiVersion, "kind": c.kind, "spec": map[string]any{
				"forProvider":       map[string]any{"region": "eu-west-1", "tags": []any{map[string]any{"key": "team", "value": "platform"}}},
				"providerConfigRef": map[string]any{"name": "default"},
			}},
			"patches": []any{
				map[string]any{"type": "FromCompositeFieldPath", "fromFieldPath": "spec.parameters.region", "toFieldPath": "spec.forProvider.region"},
				map[string]any{"type": "FromCompositeFieldPath", "fromFieldPath": "metadata.labels[team]", "toFieldPath": "spec.forProvider.tags[0].value",
					"transforms": []any{map[string]any{"type": "string", "string": map[string]any{"type": "Format", "fmt": "team-%s"}}}},
				map[string]any{"type": "ToCompositeFieldPath", "fromFieldPath": "status.atProvider.arn", "toFieldPath": "status." + strings.ReplaceAll(name, "-", "") + "Arn"},
			},
		})
	}
	pipeline := []any{map[string]any{
		"step": "patch-and-transform", "functionRef": map[string]any{"name": "function-patch-and-transform"},
		"input": map[string]any{"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": resources},
	}}
	if templated {
		last := kinds[len(kinds)-1]
		pipeline = append(pipeline, map[string]any{
			"step": "render-templates", "functionRef": map[string]any{"name": "function-go-templating"},
			"input": map[string]any{"apiVersion": "gotemplating.fn.crossplane.io/v1beta1", "kind": "GoTemplate", "source": "Inline",
				"inline": map[string]any{"template": goTemplate(last)}},
		})
	}
	pipeline = append(pipeline, map[string]any{"step": "ready", "functionRef": map[string]any{"name": "function-auto-ready"}})
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
		"metadata": map[string]any{"name": fmt.Sprintf("xbench-%03d.platform.example.org", k)},
		"spec": map[string]any{
			"compositeTypeRef": map[string]any{"apiVersion": "platform.example.org/v1alpha1", "kind": fmt.Sprintf("XBench%03d", k)},
			"mode":             "Pipeline", "pipeline": pipeline,
		},
	}}
	if _, err := ac.dyn.Resource(compositionGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Composition %d: %w", k, err)
	}
	return nil
}

// goTemplate is a function-go-templating template writing one resource
// of kind c, its fields templated, its apiVersion and kind written out.
func goTemplate(c actKind) string {
	return `{{- $xr := .observed.composite.resource }}
{{- $region := $xr.spec.parameters.region | default "eu-west-1" }}
---
apiVersion: ` + c.apiVersion + `
kind: ` + c.kind + `
metadata:
  annotations:
    {{ setResourceNameAnnotation "templated" }}
  labels:
    team: {{ index $xr.metadata.labels "team" | quote }}
spec:
  forProvider:
    region: {{ $region }}
  providerConfigRef:
    name: default
`
}
