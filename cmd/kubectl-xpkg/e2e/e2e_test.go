// Package e2e drives the real Crossplane package manager with the built
// kubectl-xpkg, the way an operator would: install a configuration with its
// dependencies, inspect, refuse to break a dependency, upgrade, activate by
// hand, uninstall with dependencies, checking the cluster after each step.
package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func gvr(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: resource}
}

type cluster struct {
	t   *testing.T
	dyn dynamic.Interface
}

func (c cluster) get(resource, name string) *unstructured.Unstructured {
	c.t.Helper()
	u, err := c.dyn.Resource(gvr(resource)).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	return u
}

func (c cluster) healthy(resource, name string) {
	c.t.Helper()
	u := c.get(resource, name)
	if u == nil {
		c.t.Fatalf("%s/%s does not exist", resource, name)
	}
	if err := crossplane.Ready(u); err != nil {
		c.t.Fatalf("%s/%s: %v", resource, name, err)
	}
}

func (c cluster) gone(resource, name string) {
	c.t.Helper()
	if c.get(resource, name) != nil {
		c.t.Errorf("%s/%s still exists", resource, name)
	}
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// start gets the environment with the real Crossplane, pushes the sample
// packages to its registry, and returns a client and the plugin's runner.
func start(t *testing.T) (*testenv.Env, *testenv.Registry, cluster, *clitest.Test) {
	t.Helper()
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	crossplane.Get(t, env)
	root, _ := testenv.ModuleRoot()
	if _, err := fixture.PushSamples(root, reg.Host, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	return env, reg, cluster{t: t, dyn: dyn}, clitest.New(t).WithEnv(env)
}

func TestOperatorJourney(t *testing.T) {
	env, reg, c, x := start(t)
	e2e := reg.Host + "/e2e/crossplane-contrib/"
	const (
		cfg = "e2e-crossplane-contrib-configuration-aws-network"
		nop = "e2e-crossplane-contrib-provider-nop"
		pt  = "e2e-crossplane-contrib-function-patch-and-transform"
	)

	// Whatever happens, leave the cluster as found.
	t.Cleanup(func() {
		clitest.New(t).WithEnv(env).Run("uninstall", "configuration/"+cfg, "function/manual-pt", "provider/"+nop, "function/"+pt, "--force", "--yes", "--wait=2m")
	})

	// Install a configuration: its provider and function dependencies arrive.
	r := x.Run("install", e2e+"configuration-aws-network:v0.23.0", "--wait=5m").Succeeds(t)
	contains(t, "install", r.Stdout, "configuration.pkg.crossplane.io/"+cfg+" created")
	contains(t, "install progress", r.Stderr, "configuration/"+cfg+": Healthy=True",
		"dependency provider/"+nop+" ("+e2e+"provider-nop:", "dependency function/"+pt+" ("+e2e+"function-patch-and-transform:")
	c.healthy("configurations", cfg)
	c.healthy("providers", nop)
	c.healthy("functions", pt)
	transcript := "$ kubectl xpkg install " + e2e + "configuration-aws-network:v0.23.0 --wait=5m\n" + r.Stderr + r.Stdout

	// Inspect.
	r = x.Run("describe", cfg).Succeeds(t)
	t.Logf("transcript:\n%s$ kubectl xpkg describe %s\n%s", transcript, cfg, r.Stdout)
	r = x.Run("get").Succeeds(t)
	contains(t, "get", r.Stdout, cfg, nop, pt, "v0.23.0")
	r = x.Run("describe", "configuration/"+cfg).Succeeds(t)
	contains(t, "describe", r.Stdout, "Package:            "+e2e+"configuration-aws-network:v0.23.0", "Dependencies:",
		e2e+"provider-nop", ">=v0.2.0", "CompositeResourceDefinition")
	r = x.Run("tree", cfg).Succeeds(t)
	contains(t, "tree", r.Stdout, "configuration/"+cfg, "├── provider/"+nop, "└── function/"+pt, "[installed: True, healthy: True]")

	// A dependency is not uninstalled from under its dependent.
	r = x.Run("uninstall", nop).Fails(t, 3)
	contains(t, "uninstall dependency", r.Stderr, "provider/"+nop+" is a dependency of configuration/"+cfg+": uninstall it first [dependents]")
	c.healthy("providers", nop)

	// Upgrade, waiting for the new revision to be healthy.
	r = x.Run("upgrade", cfg, "v0.24.0", "--wait=5m").Succeeds(t)
	contains(t, "upgrade", r.Stdout, "configuration/"+cfg+" upgraded from v0.23.0 to v0.24.0")
	c.healthy("configurations", cfg)
	if cur, _, _ := unstructured.NestedString(c.get("configurations", cfg).Object, "status", "currentIdentifier"); cur != e2e+"configuration-aws-network:v0.24.0" {
		t.Errorf("after upgrade --wait the package manager reports %s", cur)
	}

	// Manual activation: the new revision waits until activated.
	full := reg.Host + "/crossplane-contrib/function-patch-and-transform:"
	// No --wait: a first revision under Manual activation stays inactive.
	x.Run("install", full+"v0.9.0", "manual-pt", "--manual-activation").Succeeds(t)
	// Once the package manager has answered (a revision is current), the
	// package is still not installed: its revision waits to be activated.
	u, err := crossplane.WaitFor(context.Background(), c.dyn.Resource(gvr("functions")), "manual-pt", time.Minute, func(u *unstructured.Unstructured) error {
		if rev, _, _ := unstructured.NestedString(u.Object, "status", "currentRevision"); rev == "" || crossplane.Condition(u, "Installed") == nil {
			return errors.New("the package manager has not answered yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if inst := crossplane.Condition(u, "Installed"); inst["status"] != "False" {
		t.Errorf("a package under Manual activation is installed before activation: %v", inst)
	}
	r = x.Run("upgrade", "function/manual-pt", "--activate", "--wait=5m").Succeeds(t)
	contains(t, "activate", r.Stdout, "activated")
	c.healthy("functions", "manual-pt")

	// Uninstall with the dependencies nothing else needs.
	x.Run("uninstall", "manual-pt", "--wait=5m").Succeeds(t)
	r = x.Run("uninstall", "configuration/"+cfg, "--with-dependencies", "--yes", "--wait=5m").Succeeds(t)
	contains(t, "uninstall", r.Stdout, "configuration/"+cfg+" deleted", "provider/"+nop+" deleted", "function/"+pt+" deleted")
	c.gone("configurations", cfg)
	c.gone("providers", nop)
	c.gone("functions", pt)
	c.gone("functions", "manual-pt")
}

// getRevision reads a revision of the given resource; nil if absent.
func (c cluster) getRevision(resource, name string) *unstructured.Unstructured {
	c.t.Helper()
	if name == "" {
		return nil
	}
	return c.get(resource, name)
}
