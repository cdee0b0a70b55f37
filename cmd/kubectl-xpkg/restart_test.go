package main

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestInstallWaitSurvivesAPIServerRestart restarts the API server while
// install --wait watches; the package manager answers once it is back, and
// the wait must still see it. The test has a cluster of its own, so that
// other tests do not lose theirs.
func TestInstallWaitSurvivesAPIServerRestart(t *testing.T) {
	testenv.Get(t) // the shared environment's presence says integration tests run
	bin, err := testenv.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	env, err := testenv.Start(ctx, testenv.Options{Dir: t.TempDir(), BinDir: bin, NoRegistry: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	l := &lifecycle{env: env}
	if l.dyn, err = env.DynamicClient(testenv.ContextAdmin); err != nil {
		t.Fatal(err)
	}
	if l.mgr, err = pkgmanager.Start(l.dyn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.mgr.Stop)
	const name = "restart-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{Delay: 5 * time.Second})

	x := clitest.New(t).WithEnv(env)
	run := x.Start("install", "provider", "xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0", name, "--wait=3m")
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return l.providerExists(t, name), nil
	})
	if err != nil {
		t.Fatalf("install did not create the provider: %v", err)
	}
	if err := env.RestartAPIServer(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	r := run.Wait().Succeeds(t)
	contains(t, "install progress", r.Stderr, "Installed=True (ActivePackageRevision)", "Healthy=True (HealthyPackageRevision)")
}
