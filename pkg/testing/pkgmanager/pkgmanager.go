// Package pkgmanager plays Crossplane's package manager in tests that run
// without one: it watches pkg.crossplane.io packages and answers as the
// package manager would, through the API — a revision per package image
// (named <package>-<12 hex>, labelled and owned), the package's status and
// conditions with observedGeneration, the Lock's entries — and deletes
// revisions when their package goes, as garbage collection would. Each
// package's behaviour can be scripted: healthy, failing, never healthy,
// with dependencies. It answers only the packages a test hands it with
// Manage, so that tests sharing one API server do not disturb each other.
package pkgmanager

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// Behaviour scripts how the package manager answers for one package.
type Behaviour struct {
	// Fail, when set, is the message of a terminal Installed=False
	// condition (e.g. "cannot unpack package: ... MANIFEST_UNKNOWN").
	Fail string
	// Unhealthy leaves the package Installed but Healthy=False for ever.
	Unhealthy bool
	// Delay holds the answer back.
	Delay time.Duration
	// DependsOn are written to the Lock as the package's dependencies.
	DependsOn []Dependency
}

// Dependency is a Lock dependency.
type Dependency struct {
	Package, Constraints, Type string
	// Install, when set, is the reference the manager installs the
	// dependency at, as a package called As, when no package of its
	// repository exists: as Crossplane's resolver does, it creates the
	// package with nothing but its reference, under the package manager's
	// field manager (and answers it only if a test Manages As).
	Install, As string
}

var group = "pkg.crossplane.io"

// Manager is the stand-in package manager.
type Manager struct {
	dyn       dynamic.Interface
	mu        sync.Mutex
	behaviour map[string]Behaviour // by package name
	digest    func(image string) (string, bool)
	cancel    context.CancelFunc
	done      chan struct{}
}

// Start watches the cluster's packages until Stop.
func Start(dyn dynamic.Interface) (*Manager, error) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{dyn: dyn, behaviour: map[string]Behaviour{}, cancel: cancel, done: make(chan struct{})}
	f := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	for _, kind := range []string{"providers", "configurations", "functions"} {
		gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: kind}
		_, err := f.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { m.reconcile(ctx, o) },
			UpdateFunc: func(_, o any) { m.reconcile(ctx, o) },
			DeleteFunc: func(o any) { m.collect(ctx, o) },
		})
		if err != nil {
			cancel()
			return nil, err
		}
	}
	f.Start(ctx.Done())
	for gvr, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			return nil, fmt.Errorf("watch %s: cache did not sync", gvr)
		}
	}
	go func() { <-ctx.Done(); f.Shutdown(); close(m.done) }()
	return m, nil
}

// Stop ends the watches.
func (m *Manager) Stop() {
	m.cancel()
	<-m.done
}

// Manage makes the manager answer the package called name, as b says;
// the zero Behaviour installs it healthy.
func (m *Manager) Manage(name string, b Behaviour) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.behaviour[name] = b
}

func (m *Manager) script(name string) (Behaviour, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.behaviour[name]
	return b, ok
}

// RevisionName is the manager's revision naming rule when it resolves no
// digests: a hash of the image reference stands for the image digest.
func RevisionName(pkgName, image string) string {
	sum := sha256.Sum256([]byte(image))
	return friendlyID(pkgName, hex.EncodeToString(sum[:]))
}

// friendlyID is the package manager's revision name: the package name
// (cut at 50) and the digest's first 12 hex digits.
func friendlyID(pkgName, hex string) string {
	if len(pkgName) > 50 {
		pkgName = pkgName[:50]
	}
	return pkgName + "-" + hex[:12]
}

// ResolveDigests makes the manager name revisions after the image digest
// that resolve returns for an image (as the package manager does), where
// it returns one; RevisionName otherwise.
func (m *Manager) ResolveDigests(resolve func(image string) (string, bool)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.digest = resolve
}

func (m *Manager) revisionName(pkgName, image string) string {
	m.mu.Lock()
	resolve := m.digest
	m.mu.Unlock()
	if resolve != nil {
		if d, ok := resolve(image); ok && len(d) > len("sha256:")+12 {
			return friendlyID(pkgName, d[len("sha256:"):])
		}
	}
	return RevisionName(pkgName, image)
}

func asObject(o any) *unstructured.Unstructured {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	u, _ := o.(*unstructured.Unstructured)
	return u
}
