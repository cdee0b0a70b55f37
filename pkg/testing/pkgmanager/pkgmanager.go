// Package pkgmanager plays Crossplane's package manager in tests that run
// without one: it watches pkg.crossplane.io packages and answers as the
// package manager would, through the API — a revision per package image
// (named <package>-<12 hex>, labelled and owned), the package's status and
// conditions with observedGeneration, the Lock's entries — and deletes
// revisions when their package goes, as garbage collection would. Each
// package's behaviour can be scripted: healthy, failing, never healthy,
// with dependencies. It answers only the packages a test hands it with
// Manage, so that tests sharing one API server do not disturb each other.
//
// It plays either release line (Release): up to v2.3 a revision is named
// after the image and reused when the package goes back to it; from v2.4 it
// is named after the image and the package's generation, so every spec
// edit makes a new revision, and the oldest past revisionHistoryLimit are
// deleted (the v2.3 stand-in keeps them all, as revisionHistoryLimit: 0
// would). Under both, every revision but the current one is deactivated,
// and a package whose current revision is inactive reports Installed=False
// (InactivePackageRevision) until someone activates it.
package pkgmanager

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// Unhealthy leaves the package Installed but Healthy=False for ever,
	// saying Message (default: its runtime is not ready).
	Unhealthy bool
	Message   string
	// Gate, when set, holds the answer back until it is closed: a test
	// closes it once the client is where the answer must find it (its
	// wait under way, another writer come in), however long a loaded
	// machine took to get there. (A delay of so many seconds could run
	// out first.)
	Gate <-chan struct{}
	// DependsOn are written to the Lock as the package's dependencies.
	DependsOn []Dependency
	// Image, when set, limits Fail and Unhealthy to the package pointing
	// at that image, as a real package manager fails an image it cannot
	// unpack or run whatever else happens meanwhile: every other image
	// installs healthy. A test that rolls back from Image needs no
	// second Behaviour, whose switch would race with answers to events
	// still on their way.
	Image string
	// AwaitingActivation answers for a safe-start provider none of whose
	// managed resource definitions is active: the v2.4 manager scales its
	// runtime to zero, says so in the revision's RuntimeActive condition
	// and reports the package Healthy with that reason.
	AwaitingActivation bool

	// inactive answers for a package whose current revision is inactive.
	inactive bool
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

// For is the behaviour for the package pointing at image: without Fail
// and Unhealthy when Image names another image.
func (b Behaviour) For(image string) Behaviour {
	if b.Image != "" && image != b.Image {
		b.Fail, b.Unhealthy, b.Message = "", false, ""
	}
	return b
}

// Release is the Crossplane release line the stand-in plays.
type Release string

// The release lines whose package managers differ in what tests see.
const (
	// V23: revisions named <package>-<first 12 hex of the digest>.
	V23 Release = "v2.3"
	// V24: revisions named <package>-<first 12 hex of
	// sha256("<digest hex>|<generation>")> (crossplane#7473).
	V24 Release = "v2.4"
)

// Releases are the release lines tests run against, oldest first.
var Releases = []Release{V23, V24}

// Manager is the stand-in package manager.
type Manager struct {
	release   Release
	dyn       dynamic.Interface
	mu        sync.Mutex
	behaviour map[string]Behaviour // by package name
	// answering serializes the answers to one package (by kind and
	// name), as a controller's work queue reconciles an object once at
	// a time.
	answering sync.Map
	digest    func(image string) (string, bool)
	cancel    context.CancelFunc
	done      chan struct{}
}

// Start watches the cluster's packages until Stop, playing Crossplane v2.3.
func Start(dyn dynamic.Interface) (*Manager, error) { return StartRelease(dyn, V23) }

// StartRelease watches the cluster's packages until Stop, playing the
// package manager of release.
func StartRelease(dyn dynamic.Interface, release Release) (*Manager, error) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{release: release, dyn: dyn, behaviour: map[string]Behaviour{}, cancel: cancel, done: make(chan struct{})}
	f := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	for _, kind := range []string{"providers", "configurations", "functions"} {
		gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: kind}
		_, err := f.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { m.reconcile(ctx, o, false) },
			UpdateFunc: func(_, o any) { m.reconcile(ctx, o, false) },
			DeleteFunc: func(o any) { m.collect(ctx, o) },
		})
		if err != nil {
			cancel()
			return nil, err
		}
		// A revision activated or deactivated by someone else: the
		// package manager answers its package again, as Crossplane does
		// for the revisions its packages own.
		rgvr := gvr
		rgvr.Resource = strings.TrimSuffix(kind, "s") + "revisions"
		_, err = f.ForResource(rgvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, o any) { m.revisionChanged(ctx, gvr, old, o) },
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

// Stop ends the watches, then does what the package manager's revision
// finalizers would have done for a package deleted while it watched and
// not yet collected: its entries leave the Lock, so that the next test
// against the cluster does not find them there.
func (m *Manager) Stop() {
	m.cancel()
	<-m.done
	m.forgetDeleted(context.Background())
}

// forgetDeleted removes from the Lock the entries of managed packages
// that no longer exist (an entry is named after its package: name-hash).
func (m *Manager) forgetDeleted(ctx context.Context) {
	m.mu.Lock()
	names := make([]string, 0, len(m.behaviour))
	for n := range m.behaviour {
		names = append(names, n)
	}
	m.mu.Unlock()
	gone := func(e map[string]any) bool {
		entry, _ := e["name"].(string)
		kind, _ := e["type"].(string)
		for _, n := range names {
			if !strings.HasPrefix(entry, n+"-") || kind == "" {
				continue
			}
			_, err := m.dyn.Resource(resource(kind)).Get(ctx, n, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}
		return false
	}
	_ = m.editLock(ctx, func(pkgs []any) []any {
		var out []any
		for _, p := range pkgs {
			if e, _ := p.(map[string]any); !gone(e) {
				out = append(out, p)
			}
		}
		return out
	})
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

// RevisionName is the v2.3 manager's revision naming rule when it resolves
// no digests: a hash of the image reference stands for the image digest.
func RevisionName(pkgName, image string) string {
	return friendlyID(pkgName, imageHex(image))
}

// imageHex stands for the digest of an image whose digest is not resolved.
func imageHex(image string) string {
	sum := sha256.Sum256([]byte(image))
	return hex.EncodeToString(sum[:])
}

// Release is the release line the manager plays.
func (m *Manager) Release() Release { return m.release }

// RevisionName is the name the manager gives the revision of image for the
// package called pkgName at generation (which only v2.4 names count).
func (m *Manager) RevisionName(pkgName, image string, generation int64) string {
	m.mu.Lock()
	resolve := m.digest
	m.mu.Unlock()
	h := imageHex(image)
	if resolve != nil {
		if d, ok := resolve(image); ok && len(d) > len("sha256:")+12 {
			h = d[len("sha256:"):]
		}
	}
	return RevisionNameFor(m.release, pkgName, h, generation)
}

// RevisionNameFor is the name release gives the revision of an image whose
// digest's hex digits are digestHex, for the package called pkgName at
// generation (which only v2.4 names count).
func RevisionNameFor(release Release, pkgName, digestHex string, generation int64) string {
	if release == V24 {
		sum := sha256.Sum256([]byte(digestHex + "|" + strconv.FormatInt(generation, 10)))
		digestHex = hex.EncodeToString(sum[:])
	}
	return friendlyID(pkgName, digestHex)
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

func asObject(o any) *unstructured.Unstructured {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	u, _ := o.(*unstructured.Unstructured)
	return u
}
