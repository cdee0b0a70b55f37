package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// The doctor benchmark's cluster: a healthy package manager's state,
// written as Crossplane's would leave it, grown size by size.

const (
	// doctorCRDsEach is how many CRDs each provider installs.
	doctorCRDsEach = 10
	// doctorRevisions is the number of a provider's active revision, and
	// how many revisions each has at the size that has them all.
	doctorRevisions = 5
	// doctorHistoryLimit keeps all doctorRevisions (the current one and
	// four more): with the default of 1, five would be a finding.
	doctorHistoryLimit = doctorRevisions - 1
	doctorSet          = "doctor"
	doctorRepoHost     = "xpkg.bench.test"
)

// doctorSize is one size: providers, and whether each has every
// revision (else even-numbered providers have two, the others one).
type doctorSize struct {
	packages int
	all      bool
}

// revisionsOf are the revision numbers provider i has at the size.
func (s doctorSize) revisionsOf(i int) []int {
	switch {
	case s.all:
		return []int{1, 2, 3, 4, 5}
	case i%2 == 0:
		return []int{4, 5}
	}
	return []int{5}
}

func (s doctorSize) revisions() int {
	n := 0
	for i := range s.packages {
		n += len(s.revisionsOf(i))
	}
	return n
}

func (s doctorSize) crds() int { return s.packages * doctorCRDsEach }

// popShape is what a population's providers are called and hold: the
// doctor benchmark's, or the plan benchmark's (a registry of its own).
type popShape struct {
	// prefix names them (bench-provider-<prefix>-NNN) and their CRDs'
	// groups (<prefix>G.crossplane.io).
	prefix string
	// host is the registry host of their references.
	host string
	// crdsEach is how many CRDs each provider installs; set labels them.
	crdsEach int
	set      string
}

var doctorShape = popShape{prefix: "doctor", host: doctorRepoHost, crdsEach: doctorCRDsEach, set: doctorSet}

// doctorPkg is one provider as written: the package, its revisions by
// number, and its CRDs' references (for status.objectRefs).
type doctorPkg struct {
	i        int
	shape    *popShape
	provider *unstructured.Unstructured
	revs     map[int]*unstructured.Unstructured
	refs     []any
	names    []string
}

func (p *doctorPkg) name() string { return fmt.Sprintf("bench-provider-%s-%03d", p.shape.prefix, p.i) }
func (p *doctorPkg) repo() string {
	return fmt.Sprintf("%s/bench/provider-%s-%03d", p.shape.host, p.shape.prefix, p.i)
}

func (p *doctorPkg) image(n int) string { return fmt.Sprintf("%s:v1.%d.0", p.repo(), n) }

// revName is the package manager's name of revision n: the package name
// and the first 12 hex digits of a digest (here of the image's name).
func (p *doctorPkg) revName(n int) string {
	sum := sha256.Sum256([]byte(p.image(n)))
	return revisionName(p.name(), hex.EncodeToString(sum[:]))
}

// doctorCluster is the environment and what the benchmark wrote in it.
type doctorCluster struct {
	shape popShape
	env   *testenv.Env
	dyn   dynamic.Interface
	ts    []*planTemplate
	est   *establishedWatch
	pkgs  []*doctorPkg
}

// grow writes what the size has and the cluster lacks, the Lock, and
// waits until every CRD is established, so that the API server is idle
// again when doctor is measured.
func (dc *doctorCluster) grow(ctx context.Context, s doctorSize) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(crdWorkers)
	for i := range s.packages {
		if i < len(dc.pkgs) {
			p := dc.pkgs[i]
			g.Go(func() error { return dc.addRevisions(gctx, p, s.revisionsOf(i)) })
			continue
		}
		p := &doctorPkg{i: i, shape: &dc.shape, revs: map[int]*unstructured.Unstructured{}}
		dc.pkgs = append(dc.pkgs, p)
		g.Go(func() error { return dc.install(gctx, p, s.revisionsOf(i)) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := dc.writeLock(ctx); err != nil {
		return err
	}
	var names []string
	for _, p := range dc.pkgs {
		names = append(names, p.names...)
	}
	_, err := dc.est.wait(ctx, names)
	return err
}

// install writes a provider, its revisions (the highest active), its
// CRDs owned by them and by it, the revisions' status and its own.
func (dc *doctorCluster) install(ctx context.Context, p *doctorPkg, revs []int) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
		"metadata": map[string]any{"name": p.name()},
		"spec":     map[string]any{"package": p.image(doctorRevisions), "revisionHistoryLimit": int64(doctorHistoryLimit)},
	}}
	var err error
	if p.provider, err = dc.dyn.Resource(providersGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, n := range revs {
		if err := dc.createRevision(ctx, p, n); err != nil {
			return err
		}
	}
	owners := []metav1.OwnerReference{ownerOf(p.provider, false)}
	for _, n := range revs {
		owners = append(owners, ownerOf(p.revs[n], n == doctorRevisions))
	}
	for j := range dc.shape.crdsEach {
		if err := dc.createCRD(ctx, p, p.i*dc.shape.crdsEach+j, owners); err != nil {
			return err
		}
	}
	for _, n := range revs {
		if err := dc.revisionStatus(ctx, p, n); err != nil {
			return err
		}
	}
	return packageStatus(ctx, dc.dyn, providersGVR, p.name(), p.image(doctorRevisions), p.revName(doctorRevisions))
}

// createRevision creates revision n of p, active when it is the highest,
// owned by p.
func (dc *doctorCluster) createRevision(ctx context.Context, p *doctorPkg, n int) error {
	state := "Inactive"
	if n == doctorRevisions {
		state = "Active"
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "ProviderRevision",
		"metadata": map[string]any{"name": p.revName(n), "labels": map[string]any{packageLabel: p.name()}},
		"spec":     map[string]any{"image": p.image(n), "revision": int64(n), "desiredState": state},
	}}
	u.SetOwnerReferences([]metav1.OwnerReference{ownerOf(p.provider, true)})
	got, err := dc.dyn.Resource(revisionsGVR).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create %s: %w", p.revName(n), err)
	}
	p.revs[n] = got
	return nil
}

// crd is CRD number i of the population (plansgen's copies of
// provider-aws's largest CRDs), as installed, or with v2's changes.
func (dc *doctorCluster) crd(i int, v2 bool) planCRD {
	t := dc.ts[i%planTemplates]
	v := t.v1
	if v2 {
		v = t.v2
	}
	return planCRD{v: v, prefix: dc.shape.prefix, group: i / planTemplates}
}

// createCRD creates CRD number i of the population, owned by owners.
func (dc *doctorCluster) createCRD(ctx context.Context, p *doctorPkg, i int, owners []metav1.OwnerReference) error {
	c := dc.crd(i, false)
	m, err := c.object()
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetLabels(map[string]string{benchSetLabel: dc.shape.set})
	u.SetOwnerReferences(owners)
	got, err := dc.dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create CRD %s: %w", c.Name(), err)
	}
	p.names = append(p.names, got.GetName())
	p.refs = append(p.refs, map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": got.GetName(), "uid": string(got.GetUID())})
	return nil
}

// revisionStatus records p's CRDs in revision n's status.objectRefs and
// says it is healthy.
func (dc *doctorCluster) revisionStatus(ctx context.Context, p *doctorPkg, n int) error {
	u := p.revs[n]
	gen := u.GetGeneration()
	u.Object["status"] = map[string]any{
		"objectRefs": p.refs,
		"conditions": []any{pkgCondition("RevisionHealthy", "HealthyPackageRevision", gen), pkgCondition("RuntimeHealthy", "HealthyPackageRevision", gen)},
	}
	got, err := dc.dyn.Resource(revisionsGVR).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("status of %s: %w", u.GetName(), err)
	}
	p.revs[n] = got
	return nil
}

// addRevisions gives p the older, inactive revisions it lacks, recording
// its CRDs as the revisions that installed them did, and adds them to
// the CRDs' owners (a revision stays an owner, no longer controller, of
// what it installed).
func (dc *doctorCluster) addRevisions(ctx context.Context, p *doctorPkg, revs []int) error {
	var added []metav1.OwnerReference
	for _, n := range revs {
		if p.revs[n] != nil {
			continue
		}
		if err := dc.createRevision(ctx, p, n); err != nil {
			return err
		}
		if err := dc.revisionStatus(ctx, p, n); err != nil {
			return err
		}
		added = append(added, ownerOf(p.revs[n], false))
	}
	if len(added) == 0 {
		return nil
	}
	var ops []map[string]any
	for _, o := range added {
		ops = append(ops, map[string]any{"op": "add", "path": "/metadata/ownerReferences/-", "value": o})
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	for _, name := range p.names {
		if _, err := dc.dyn.Resource(crdGVR).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("add owners to CRD %s: %w", name, err)
		}
	}
	return nil
}

// writeLock writes the Lock: one entry per active revision, no
// dependencies.
func (dc *doctorCluster) writeLock(ctx context.Context) error {
	var entries []any
	for _, p := range dc.pkgs {
		entries = append(entries, map[string]any{
			"name": p.revName(doctorRevisions), "source": p.repo(), "version": fmt.Sprintf("v1.%d.0", doctorRevisions),
			"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider", "type": "Provider", "dependencies": []any{},
		})
	}
	rc := dc.dyn.Resource(locksGVR)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := rc.Get(ctx, "lock", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			u = &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "Lock",
				"metadata": map[string]any{"name": "lock"}, "packages": entries,
			}}
			_, err = rc.Create(ctx, u, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		u.Object["packages"] = entries
		_, err = rc.Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
}
