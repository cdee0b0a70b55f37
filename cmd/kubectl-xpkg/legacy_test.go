package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// legacyGeneration is one of Crossplane's v0.x package APIs and the CRDs
// that serve it.
type legacyGeneration struct {
	group, clusterKind, kind, record, recordField string
	crossplane                                    string // Crossplane release whose CRDs serve it; "" for the seed-written ones
}

var legacyGenerations = []legacyGeneration{
	{"packages.crossplane.io", "ClusterPackageInstall", "PackageInstall", "Package", "packageRecord", "v0.11.0"},
	{"stacks.crossplane.io", "ClusterStackInstall", "StackInstall", "Stack", "stackRecord", "v0.10.0"},
	{"extensions.crossplane.io", "", "ExtensionRequest", "Extension", "extensionRecord", ""},
}

// legacyCluster starts a cluster of the test's own serving generation g.
func legacyCluster(t *testing.T, g legacyGeneration) (*testenv.Env, dynamic.Interface) {
	t.Helper()
	testenv.Get(t)
	bin, err := testenv.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	version := g.crossplane
	if version == "" {
		version = "none"
	}
	env, err := testenv.Start(ctx, testenv.Options{Dir: t.TempDir(), BinDir: bin, CrossplaneVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if g.crossplane == "" {
		root, _ := testenv.ModuleRoot()
		crds, err := testenv.ReadCRDs(filepath.Join(root, "hack", "testdata", "crds"))
		if err != nil {
			t.Fatal(err)
		}
		if err := testenv.ApplyCRDs(ctx, dyn, crds); err != nil {
			t.Fatal(err)
		}
	}
	return env, dyn
}

func TestLegacyGenerations(t *testing.T) {
	for _, g := range legacyGenerations {
		t.Run(g.group, func(t *testing.T) { testLegacyGeneration(t, g) })
	}
}

func testLegacyGeneration(t *testing.T, g legacyGeneration) {
	env, dyn := legacyCluster(t, g)
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Group: g.group, Version: "v1alpha1", Resource: strings.ToLower(g.kind) + "s"}
	x := clitest.New(t).WithEnv(env)
	r := x.Run("version").Succeeds(t)
	contains(t, "version", r.Stdout, g.group+"   v1alpha1 (preferred)", g.kind)

	// By package: the reference's registry becomes spec.source.
	r = x.Run("install", strings.ToLower(g.kind), "registry.crossplane.io/crossplane/provider-gcp:v0.1.0", "gcp").Succeeds(t)
	contains(t, "install", r.Stdout, strings.ToLower(g.kind)+"."+g.group+"/gcp created")
	u, err := dyn.Resource(gvr).Namespace("default").Get(ctx, "gcp", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if spec, _, _ := unstructured.NestedStringMap(u.Object, "spec"); len(spec) != 2 || spec["source"] != "registry.crossplane.io" || spec["package"] != "crossplane/provider-gcp:v0.1.0" {
		t.Errorf("request spec = %v", u.Object["spec"])
	}
	// By CRD, with an explicit source, and the v0.x flags.
	r = x.Run("install", strings.ToLower(g.kind), "--crd", "redisclusters.cache.crossplane.io/v1alpha1", "redis", "--source", "registry.crossplane.io",
		"--image-pull-policy", "Always", "--package-pull-secrets", "regcred", "--service-account-annotation", "iam=special").Succeeds(t)
	u, err = dyn.Resource(gvr).Namespace("default").Get(ctx, "redis", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ann, _, _ := unstructured.NestedString(u.Object, "spec", "serviceAccount", "annotations", "iam")
	crd, _, _ := unstructured.NestedString(u.Object, "spec", "crd")
	if crd != "redisclusters.cache.crossplane.io/v1alpha1" || ann != "special" {
		t.Errorf("request by CRD: %v", u.Object["spec"])
	}
	if g.crossplane != "" {
		// The release's own schema is served: the API server refuses what
		// the package manager of those days could not have read.
		bad := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": g.group + "/v1alpha1", "kind": g.kind,
			"metadata": map[string]any{"name": "typed", "namespace": "default"},
			"spec":     map[string]any{"package": int64(7)},
		}}
		if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("a %s whose spec.package is a number: %v, want Invalid", g.kind, err)
		}
	}
	r = x.Run("install", strings.ToLower(g.kind), "registry.crossplane.io/crossplane/provider-gcp:v0.1.0", "bad", "--manual-activation").Fails(t, 1)
	contains(t, "modern flag", r.Stderr, "apply to pkg.crossplane.io")

	// The package manager of those days answers: a Ready condition and a record.
	run := x.Start("install", strings.ToLower(g.kind), "registry.crossplane.io/crossplane/provider-aws:v0.1.0", "aws", "--wait=2m")
	playLegacyManager(t, dyn, g, "aws")
	r = run.Wait().Succeeds(t)
	r = x.Run("get", strings.ToLower(g.kind)+"s").Succeeds(t)
	if row := tableRow(r.Stdout, "aws"); len(row) < 7 || row[4] != "True" || row[5] != "True" || row[6] != "aws" {
		t.Errorf("get row: %v\n%s", row, r.Stdout)
	}
	r = x.Run("describe", strings.ToLower(g.kind)+"/aws").Succeeds(t)
	contains(t, "describe", r.Stdout, "Package:            registry.crossplane.io/crossplane/provider-aws:v0.1.0", "Current revision:   aws", "Ready")

	// The images are made up: the plan, which reads them, would try to
	// reach a registry off this machine (its own tests use the local one).
	r = x.Run("upgrade", strings.ToLower(g.kind)+"/aws", "v0.2.0", "--no-plan").Succeeds(t)
	contains(t, "upgrade", r.Stdout, "upgraded from v0.1.0 to v0.2.0")
	u, _ = dyn.Resource(gvr).Namespace("default").Get(ctx, "aws", metav1.GetOptions{})
	if pkg, _, _ := unstructured.NestedString(u.Object, "spec", "package"); pkg != "crossplane/provider-aws:v0.2.0" {
		t.Errorf("upgraded package = %q", pkg)
	}
	x.Run("uninstall", "gcp", "redis", "aws").Succeeds(t)
	if l, _ := dyn.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("%d requests left after uninstall", len(l.Items))
	}
}

// playLegacyManager waits for the request and answers it as the v0.x
// package manager did: the record, and Ready=True under conditionedStatus.
func playLegacyManager(t *testing.T, dyn dynamic.Interface, g legacyGeneration, name string) {
	t.Helper()
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Group: g.group, Version: "v1alpha1", Resource: strings.ToLower(g.kind) + "s"}
	var u *unstructured.Unstructured
	for i := 0; i < 600 && u == nil; i++ {
		u, _ = dyn.Resource(gvr).Namespace("default").Get(ctx, name, metav1.GetOptions{})
		if u == nil {
			sleep100ms()
		}
	}
	if u == nil {
		t.Fatal("the request never appeared")
	}
	record := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": g.group + "/v1alpha1", "kind": g.record,
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"version": "v0.1.0"},
	}}
	recGVR := schema.GroupVersionResource{Group: g.group, Version: "v1alpha1", Resource: strings.ToLower(g.record) + "s"}
	if _, err := dyn.Resource(recGVR).Namespace("default").Create(ctx, record, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = map[string]any{
		"conditionedStatus": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}},
		g.recordField:       map[string]any{"name": name, "namespace": "default"},
	}
	if _, err := dyn.Resource(gvr).Namespace("default").UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestLegacyPackageKindFromScope: installing a v0.x package without a kind
// reads its .registry/app.yaml: permissionScope Cluster asks for the
// cluster-wide request.
func TestLegacyPackageKindFromScope(t *testing.T) {
	env, _ := legacyCluster(t, legacyGenerations[0])
	reg := env.RequireRegistry(t)
	root, _ := testenv.ModuleRoot()
	img, err := fixture.LegacySample(root)
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/crossplane/sample-stack:v0.0.1"
	if err := fixture.Push(ref, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
	x := clitest.New(t).WithEnv(env)
	r := x.Run("install", ref, "--dry-run=server").Succeeds(t)
	contains(t, "install", r.Stdout, "clusterpackageinstall.packages.crossplane.io/crossplane-sample-stack created (server dry run)")
	contains(t, "install", r.Stderr, "legacy .registry/ package")
	// A package.yaml package cannot be installed through a v0.x API.
	modern, _ := pushSample(t, env, "provider-nop", "v0.4.0")
	r = x.Run("install", modern).Fails(t, 1)
	contains(t, "modern package", r.Stderr, "it is a Provider package (package.yaml format), which packages.crossplane.io cannot install")
}

func sleep100ms() { time.Sleep(100 * time.Millisecond) }
