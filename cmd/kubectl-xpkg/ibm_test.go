package main

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestIBMGroup drives a cluster that serves the package API under the IBM
// distribution's group (seed 001): Crossplane's own CRDs with the group
// renamed, in a cluster of the test's own.
func TestIBMGroup(t *testing.T) {
	shared := testenv.Get(t)
	bin, err := testenv.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	env, err := testenv.Start(ctx, testenv.Options{Dir: t.TempDir(), BinDir: bin, NoRegistry: true, CrossplaneVersion: "none"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	crds, err := testenv.ReadCRDs(shared.CRDDir)
	if err != nil {
		t.Fatal(err)
	}
	var ibm []*unstructured.Unstructured
	for _, c := range crds {
		if group, _, _ := unstructured.NestedString(c.Object, "spec", "group"); group != "pkg.crossplane.io" {
			continue
		}
		_ = unstructured.SetNestedField(c.Object, "pkg.ibm.crossplane.io", "spec", "group")
		c.SetName(strings.Replace(c.GetName(), "pkg.crossplane.io", "pkg.ibm.crossplane.io", 1))
		ibm = append(ibm, c)
	}
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	// Before the CRDs: no package API (and a discovery cache that says so).
	x := clitest.New(t).WithEnv(env)
	r := x.Run("get").Fails(t, 1)
	contains(t, "no CRDs", r.Stderr, "the cluster serves no Crossplane package API")
	if err := testenv.ApplyCRDs(ctx, dyn, ibm); err != nil {
		t.Fatal(err)
	}

	r = x.Run("version").Succeeds(t)
	contains(t, "version", r.Stdout, "pkg.ibm.crossplane.io   v1 (preferred)")
	r = x.Run("install", "provider", "xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0").Succeeds(t)
	contains(t, "install", r.Stdout, "provider.pkg.ibm.crossplane.io/crossplane-contrib-provider-nop created")
	r = x.Run("get", "providers", "-o", "name").Succeeds(t)
	if r.Stdout != "provider.pkg.ibm.crossplane.io/crossplane-contrib-provider-nop\n" {
		t.Errorf("get -o name: %q", r.Stdout)
	}
	r = x.Run("get", "--api-group", "pkg.crossplane.io").Fails(t, 1)
	contains(t, "--api-group", r.Stderr, "--api-group pkg.crossplane.io: the cluster does not serve it (it serves pkg.ibm.crossplane.io)")
	x.Run("uninstall", "crossplane-contrib-provider-nop").Succeeds(t)
}
