package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

var (
	providersGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}
	revisionsGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providerrevisions"}
)

// packageLabel links a revision to its package.
const packageLabel = "pkg.crossplane.io/package"

// startEnv starts kube-apiserver and etcd with Crossplane's CRDs in dir,
// after stopping whatever an interrupted run left there, and a registry
// too unless noRegistry. The servers die with this process; stopEnv stops
// them and removes dir.
func startEnv(dir, binDir string, noRegistry bool) (*testenv.Env, error) {
	if old, err := testenv.Load(filepath.Join(dir, "env.json")); err == nil {
		_ = old.Stop()
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return testenv.Start(ctx, testenv.Options{Dir: dir, BinDir: binDir, NoRegistry: noRegistry, Log: log.Writer()})
}

func stopEnv(env *testenv.Env) {
	if err := env.Stop(); err != nil {
		log.Printf("stop the environment in %s: %v", env.Dir, err)
		return
	}
	_ = os.RemoveAll(env.Dir)
}

// install creates a Provider and lets the test package manager answer it,
// as Crossplane's would (a revision, the status, the Lock entry), then
// stops the package manager so that nothing else talks to the API server
// while describe is measured.
func install(dyn dynamic.Interface, name string) error {
	mgr, err := pkgmanager.Start(dyn)
	if err != nil {
		return err
	}
	defer mgr.Stop()
	mgr.Manage(name, pkgmanager.Behaviour{})
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"package": "xpkg.bench.test/crossplane-contrib/provider-nop:v0.4.0"},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := dyn.Resource(providersGVR).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return err
	}
	for {
		u, err := dyn.Resource(providersGVR).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return err
		default:
			if rev, _, _ := unstructured.NestedString(u.Object, "status", "currentRevision"); rev != "" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("provider %s: no current revision after a minute", name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// addRevisions tops the package's revisions up to n with old inactive
// ones, as plugin/describe_test.go does over a fake cluster.
func addRevisions(dyn dynamic.Interface, pkg string, n int) error {
	ctx := context.Background()
	l, err := dyn.Resource(revisionsGVR).List(ctx, metav1.ListOptions{LabelSelector: packageLabel + "=" + pkg})
	if err != nil {
		return err
	}
	for i := len(l.Items); i < n; i++ {
		r := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "pkg.crossplane.io/v1", "kind": "ProviderRevision",
			"metadata": map[string]any{"name": fmt.Sprintf("%s-old%02d", pkg, i), "labels": map[string]any{packageLabel: pkg}},
			"spec":     map[string]any{"image": fmt.Sprintf("xpkg.bench.test/old:v0.%d", i), "revision": int64(100 + i), "desiredState": "Inactive"},
		}}
		if _, err := dyn.Resource(revisionsGVR).Create(ctx, r, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}
