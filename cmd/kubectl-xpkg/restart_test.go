package main

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// privateCluster is a cluster of the test's own, with a stand-in package
// manager, so that stopping its API server costs no other test its own.
func privateCluster(t *testing.T) (*lifecycle, *testenv.Env) {
	t.Helper()
	testenv.Get(t) // the shared environment's presence says integration tests run
	bin, err := testenv.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	env, err := testenv.Start(context.Background(), testenv.Options{Dir: t.TempDir(), BinDir: bin, NoRegistry: true})
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
	return l, env
}

// TestInstallWaitSurvivesAPIServerRestart restarts the API server while
// install --wait watches; the package manager answers once it is back, and
// the wait must still see it. The test has a cluster of its own, so that
// other tests do not lose theirs.
func TestInstallWaitSurvivesAPIServerRestart(t *testing.T) {
	l, env := privateCluster(t)
	ctx := context.Background()
	const name = "restart-nop"
	// The package manager answers only once the API server is back (an
	// answer merely late, 5 s, could come before the restart on a loaded
	// machine, and the wait would be over before it).
	gate := make(chan struct{})
	l.mgr.Manage(name, pkgmanager.Behaviour{Gate: gate})

	x := clitest.New(t).WithEnv(env)
	run := x.Start("install", "provider", "xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0", name, "--wait=3m")
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return l.providerExists(t, name), nil
	})
	if err != nil {
		t.Fatalf("install did not create the provider: %v", err)
	}
	if err := env.RestartAPIServer(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	close(gate)
	r := run.Wait().Succeeds(t)
	contains(t, "install progress", r.Stderr, "Installed=True (ActivePackageRevision)", "Healthy=True (HealthyPackageRevision)")
}

// TestUninstallWaitAndGetWhileTheAPIServerIsDown: uninstall --wait watches
// a package held by a finalizer while the API server goes down and comes
// back; get, while it is down, fails in one line naming the server.
func TestUninstallWaitAndGetWhileTheAPIServerIsDown(t *testing.T) {
	l, env := privateCluster(t)
	ctx := context.Background()
	const name = "down-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(env)
	x.Run("install", "provider", "xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0", name, "--wait=60s").Succeeds(t)
	const hold = "kubectl-xpkg.test/hold"
	l.setFinalizers(t, name, hold)

	run := x.Start("uninstall", name, "--yes", "--wait=3m")
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		u, err := l.dyn.Resource(providersGVR).Get(ctx, name, metav1.GetOptions{})
		return err == nil && u.GetDeletionTimestamp() != nil, nil
	})
	if err != nil {
		t.Fatalf("uninstall did not delete the provider: %v", err)
	}
	start, err := env.StopAPIServer()
	if err != nil {
		t.Fatal(err)
	}
	r := x.Run("get", "--request-timeout=5s").Fails(t, 1)
	if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 || !strings.Contains(r.Stderr, strings.TrimPrefix(env.APIServer, "https://")) {
		t.Errorf("get with the API server down:\n%s", r.Stderr)
	}
	if err := start(ctx); err != nil {
		t.Fatal(err)
	}
	l.setFinalizers(t, name)
	r = run.Wait().Succeeds(t)
	contains(t, "uninstall", r.Stdout+r.Stderr, "provider/"+name+" deleted")
	if l.providerExists(t, name) {
		t.Error("the provider is still there")
	}
}

// TestUpgradeBesideAnotherWriter upgrades while another client keeps
// rewriting the package's labels: the upgrade changes spec.package without
// a conflict, and the other writer's labels survive it.
func TestUpgradeBesideAnotherWriter(t *testing.T) {
	l := newLifecycle(t)
	ctx := context.Background()
	const name = "busy-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", "example.org/busy/provider-nop:v0.2.1", name).Succeeds(t)

	stop := make(chan struct{})
	var writes atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			u, err := l.dyn.Resource(providersGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			u.SetLabels(map[string]string{"writer": strconv.Itoa(i)})
			if _, err := l.dyn.Resource(providersGVR).Update(ctx, u, metav1.UpdateOptions{}); err == nil {
				writes.Add(1)
			}
			time.Sleep(2 * time.Millisecond) // busy, like a controller in a hot loop
		}
	})
	for _, v := range []string{"v0.4.0", "v0.3.0", "v0.4.1"} {
		x.Run("upgrade", name, v, "--no-plan").Succeeds(t) // made-up images: nothing to plan from
	}
	close(stop)
	wg.Wait()
	u, err := l.dyn.Resource(providersGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pkg, _, _ := unstructured.NestedString(u.Object, "spec", "package"); pkg != "example.org/busy/provider-nop:v0.4.1" {
		t.Errorf("spec.package = %q", pkg)
	}
	if u.GetLabels()["writer"] == "" || writes.Load() < 2 {
		t.Errorf("the other writer's labels: %v after %d writes", u.GetLabels(), writes.Load())
	}
}

func (l *lifecycle) setFinalizers(t *testing.T, name string, finalizers ...string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := l.dyn.Resource(providersGVR).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		u.SetFinalizers(finalizers)
		_, err = l.dyn.Resource(providersGVR).Update(context.Background(), u, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRequestTimeout: an API server that accepts connections and never
// answers ends the verb within --request-timeout, in one line.
func TestRequestTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // accepted, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	server := "https://" + l.Addr().String()
	for _, verb := range [][]string{{"get"}, {"version"}, {"describe", "provider/x"}} {
		r := clitest.New(t).Run(append(verb, "--server", server, "--insecure-skip-tls-verify", "--request-timeout=2s")...).Fails(t, 1)
		if strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "cannot reach "+server+": timed out") {
			t.Errorf("%v against a silent server:\n%s", verb, r.Stderr)
		}
	}
}

// TestSetPackageKeepsToThePlan: a change made for the reference a plan
// read is not made over another writer's newer reference (it says so and
// changes nothing), but goes through another writer's changes of other
// fields; the patch tests the UID and reference it read, so nothing slips
// in between.
func TestSetPackageKeepsToThePlan(t *testing.T) {
	l := newLifecycle(t)
	ctx := context.Background()
	const name = "planned-nop"
	l.mgr.Manage(name, pkgmanager.Behaviour{})
	x := clitest.New(t).WithEnv(l.env)
	t.Cleanup(func() { x.Run("uninstall", name) })
	x.Run("install", "provider", "example.org/planned/provider-nop:v0.2.1", name).Succeeds(t)

	c := l.connect(t, nil)
	planned, err := c.Get(ctx, "Provider", name)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(u *unstructured.Unstructured)) {
		t.Helper()
		if err := l.editProvider(ctx, name, f); err != nil {
			t.Fatal(err)
		}
	}
	// Another writer's label: the change goes through.
	edit(func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"team": "platform"}) })
	updated, err := c.SetPackage(ctx, planned, "example.org/planned/provider-nop:v0.4.0", false)
	if err != nil || updated.Source != "example.org/planned/provider-nop:v0.4.0" {
		t.Fatalf("beside another writer's label: %v, %+v", err, updated)
	}
	// Another writer's reference: refused, nothing changed.
	edit(func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "example.org/planned/provider-nop:v0.5.0", "spec", "package")
	})
	_, err = c.SetPackage(ctx, updated, "example.org/planned/provider-nop:v0.6.0", false)
	var ce *cluster.ChangedError
	if !errors.As(err, &ce) || ce.Now != "example.org/planned/provider-nop:v0.5.0" {
		t.Fatalf("over another writer's reference: %v", err)
	}
	if now, _ := c.Get(ctx, "Provider", name); now.Source != "example.org/planned/provider-nop:v0.5.0" {
		t.Errorf("the refused change left %s", now.Source)
	}
	// Another writer's change of the spec (the plan counted on automatic
	// activation): refused, nothing changed.
	replanned, err := c.Get(ctx, "Provider", name)
	if err != nil {
		t.Fatal(err)
	}
	edit(func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "Manual", "spec", "revisionActivationPolicy")
	})
	_, err = c.SetPackage(ctx, replanned, "example.org/planned/provider-nop:v0.6.0", false)
	if !errors.As(err, &ce) || ce.Generations[0] == 0 || !strings.Contains(err.Error(), "spec changed since the change was planned") {
		t.Fatalf("over another writer's spec: %v", err)
	}
	if now, _ := c.Get(ctx, "Provider", name); now.Source != "example.org/planned/provider-nop:v0.5.0" {
		t.Errorf("the refused change left %s", now.Source)
	}
}
