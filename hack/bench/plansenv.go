package main

import (
	"context"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// planCluster is the environment of one size of the plans benchmark and
// what the benchmark installed in it.
type planCluster struct {
	env   *testenv.Env
	dyn   dynamic.Interface
	auth  remote.Option
	p     *planProvider
	cache string // the plugin's discovery cache
	repo  string // the provider's repository
	revs  [2]string
	est   *establishedWatch
}

func (pc *planCluster) ref(i int) string { return pc.repo + ":" + planVersions[i] }

// startCluster starts a fresh API server and registry in dir, after
// stopping what an interrupted run left there, and points DOCKER_CONFIG
// at the registry's credentials.
func startCluster(dir, k8sBin string) (*planCluster, error) {
	if old, err := testenv.Load(filepath.Join(dir, "env.json")); err == nil {
		_ = old.Stop()
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := testenv.Start(ctx, testenv.Options{Dir: dir, BinDir: k8sBin, Log: log.Writer()})
	if err != nil {
		return nil, err
	}
	pc := &planCluster{env: env, cache: filepath.Join(dir, "cache"), repo: env.Registry.Host + "/" + planProviderRepo,
		auth: remote.WithAuth(&authn.Basic{Username: env.Registry.Username, Password: env.Registry.Password})}
	os.Setenv("DOCKER_CONFIG", env.Registry.DockerConfig)
	if pc.dyn, err = env.DynamicClient(testenv.ContextAdmin); err == nil {
		pc.est, err = watchEstablished(env, "plans")
	}
	if err != nil {
		pc.stop()
		return nil, err
	}
	return pc, nil
}

// pushPlans pushes both versions of p and names their revisions.
func (pc *planCluster) pushPlans(meta []byte, p *planProvider) error {
	pc.p = p
	for i, crds := range [][]planCRD{p.v1, p.v2} {
		hex, err := push(pc.ref(i), stream(meta, crds), pc.auth)
		if err != nil {
			return err
		}
		pc.revs[i] = revisionName(planProviderName, hex)
	}
	return nil
}

func (pc *planCluster) stop() {
	if pc.est != nil {
		pc.est.stop()
	}
	stopEnv(pc.env)
}

// push pushes a package.yaml as an xpkg and returns its digest's hex.
func push(ref string, pkg []byte, auth remote.Option) (string, error) {
	img, err := fixture.Image(pkg)
	if err != nil {
		return "", err
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return d.Hex, fixture.Push(ref, img, auth)
}

// installV1 installs v1 of the provider, as the package manager would,
// with the configuration that depends on it, the stored versions and
// the live object its findings need.
func (pc *planCluster) installV1(ctx context.Context) error {
	prov, err := createPackage(ctx, pc.dyn, providersGVR, "Provider", planProviderName, pc.ref(0))
	if err != nil {
		return err
	}
	rev, err := createRevision(ctx, pc.dyn, revisionsGVR, prov, pc.revs[0], pc.ref(0), 1)
	if err != nil {
		return err
	}
	refs, err := applyCRDs(ctx, pc.dyn, pc.p.v1, "plans", []metav1.OwnerReference{ownerOf(rev, true)})
	if err != nil {
		return err
	}
	if _, err := pc.est.wait(ctx, names(pc.p.v1)); err != nil {
		return err
	}
	steps := []func() error{
		func() error { return setStoredVersions(ctx, pc.dyn, pc.p.upDropped.Name(), "v1alpha1", "v1beta1") },
		func() error { return revisionStatus(ctx, pc.dyn, revisionsGVR, pc.revs[0], refs) },
		func() error { return packageStatus(ctx, pc.dyn, providersGVR, planProviderName, pc.ref(0), pc.revs[0]) },
		func() error {
			return putLock(ctx, pc.dyn, lockEntry(pc.revs[0], pc.repo, planVersions[0], "Provider"))
		},
		func() error { return pc.installConfiguration(ctx) },
		func() error { return createLiveObject(ctx, pc.dyn, pc.p.gone) },
	}
	return runSteps(steps)
}

func runSteps(steps []func() error) error {
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// installConfiguration installs a configuration that depends on the
// provider at planConstraint. Nothing reads its package.
func (pc *planCluster) installConfiguration(ctx context.Context) error {
	repo := pc.env.Registry.Host + "/" + planConfigRepo
	ref := repo + ":v1.0.0"
	rev := pkgmanager.RevisionName(planConfigName, ref)
	c, err := createPackage(ctx, pc.dyn, configurationsGVR, "Configuration", planConfigName, ref)
	if err != nil {
		return err
	}
	if _, err := createRevision(ctx, pc.dyn, confRevisionsGVR, c, rev, ref, 1); err != nil {
		return err
	}
	if err := revisionStatus(ctx, pc.dyn, confRevisionsGVR, rev, []any{}); err != nil {
		return err
	}
	if err := packageStatus(ctx, pc.dyn, configurationsGVR, planConfigName, ref, rev); err != nil {
		return err
	}
	dep := map[string]any{"package": pc.repo, "constraints": planConstraint, "type": "Provider"}
	return putLock(ctx, pc.dyn, lockEntry(rev, repo, "v1.0.0", "Configuration", dep))
}

// switchToV2 upgrades the provider to v2 as the package manager would:
// a second, active revision, v2's CRDs (the kind v2 dropped stays, owned
// by the old revision), the package's status and Lock entry; then the
// stored versions and live object rollback's findings need.
func (pc *planCluster) switchToV2(ctx context.Context) error {
	prov, err := pc.dyn.Resource(providersGVR).Get(ctx, planProviderName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	rev1, err := pc.dyn.Resource(revisionsGVR).Get(ctx, pc.revs[0], metav1.GetOptions{})
	if err != nil {
		return err
	}
	if err := deactivate(ctx, pc.dyn, revisionsGVR, pc.revs[0]); err != nil {
		return err
	}
	rev2, err := createRevision(ctx, pc.dyn, revisionsGVR, prov, pc.revs[1], pc.ref(1), 2)
	if err != nil {
		return err
	}
	// The API server keeps a CRD from dropping a version objects are
	// stored at: they were migrated first.
	if err := setStoredVersions(ctx, pc.dyn, pc.p.upDropped.Name(), "v1beta1"); err != nil {
		return err
	}
	refs, err := applyCRDs(ctx, pc.dyn, pc.p.v2, "plans", []metav1.OwnerReference{ownerOf(rev1, false), ownerOf(rev2, true)})
	if err != nil {
		return err
	}
	if _, err := pc.est.wait(ctx, names(pc.p.v2)); err != nil {
		return err
	}
	return runSteps([]func() error{
		func() error { return setStoredVersions(ctx, pc.dyn, pc.p.downDropped.Name(), "v1beta1", "v1beta2") },
		func() error { return revisionStatus(ctx, pc.dyn, revisionsGVR, pc.revs[1], refs) },
		func() error { return setPackageRef(ctx, pc.dyn, providersGVR, planProviderName, pc.ref(1)) },
		func() error { return packageStatus(ctx, pc.dyn, providersGVR, planProviderName, pc.ref(1), pc.revs[1]) },
		func() error {
			return putLock(ctx, pc.dyn, lockEntry(pc.revs[1], pc.repo, planVersions[1], "Provider"))
		},
		func() error { return createLiveObject(ctx, pc.dyn, pc.p.added) },
	})
}

// describeSetup says on stderr how long a step of the set-up took.
func describeSetup(n int, what string, start time.Time) {
	log.Printf("plans, %d CRDs: %s in %s", n, what, time.Since(start).Round(100*time.Millisecond))
}
