package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// pushNeeds pushes a configuration that depends on provider-nop with
// constraint, as repo:tag.
func pushNeeds(t *testing.T, reg *testenv.Registry, repo, tag, nopRepo, constraint string) {
	t.Helper()
	img, err := fixture.Image(fmt.Appendf(nil, "apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: configuration-needs\nspec:\n  dependsOn:\n  - provider: %s\n    version: %q\n", nopRepo, constraint))
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.Push(repo+":"+tag, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorTwoPackagesOfOneSource is the second route to a duplicate
// node, on every release: a configuration's dependency is installed by
// the resolver under its own name, then a second Provider of the same
// package is applied under a custom name (as a GitOps tool would; install
// refuses it). doctor names both packages and the one Crossplane keeps;
// --fix proves nothing safe here and changes nothing; deleting the
// custom-named one, as it says, clears the Lock.
func TestDoctorTwoPackagesOfOneSource(t *testing.T) {
	env, reg, c, x := start(t)
	const cfg, custom = "doctor-needs", "my-nop"
	nop := "e2e-crossplane-contrib-provider-nop"
	repo := reg.Host + "/e2e/doctor/configuration-needs"
	nopRepo := reg.Host + "/e2e/crossplane-contrib/provider-nop"
	pushNeeds(t, reg, repo, "v1.0.0", nopRepo, ">=v0.2.0")
	t.Cleanup(func() {
		_ = c.dyn.Resource(gvr("providers")).Delete(context.Background(), custom, metav1.DeleteOptions{})
		clitest.New(t).WithEnv(env).Run("uninstall", "configuration/"+cfg, "provider/"+nop, "--force", "--yes", "--wait=2m")
	})
	x.Run("install", "configuration", repo+":v1.0.0", cfg, "--wait=5m").Succeeds(t)
	installedRef, _, _ := unstructured.NestedString(c.get("providers", nop).Object, "spec", "package")

	second := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
		"metadata": map[string]any{"name": custom},
		"spec":     map[string]any{"package": installedRef},
	}}
	if _, err := c.dyn.Resource(gvr("providers")).Create(context.Background(), second, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes := c.awaitLock(nopRepo, 2, 2*time.Minute)

	r := x.Run("doctor").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s%s", r.Stdout, r.Stderr)
	contains(t, "doctor", r.Stdout, "BLOCKING the Lock holds 2 nodes for "+nopRepo, nodes[0], nodes[1],
		"provider/"+custom, "provider/"+nop, "Crossplane keeps provider/"+nop+": its resolver installs this dependency under that name",
		"delete provider/"+custom, "[duplicate-lock-node]")

	// A change planned meanwhile cannot become healthy: it is stopped.
	r = x.Run("upgrade", "provider/"+nop, "v0.2.1", "--dry-run").Fails(t, 3)
	contains(t, "upgrade --dry-run", r.Stdout, "BLOCKING the Lock holds two nodes for "+nopRepo, "[lock-unresolved]")

	r = x.Run("doctor", "--fix", "--yes").Fails(t, 3)
	contains(t, "doctor --fix", r.Stdout, "Repair: nothing doctor can prove safe to change")
	if c.get("providers", custom) == nil || c.get("providers", nop) == nil {
		t.Fatal("doctor --fix deleted a package it could not prove safe to delete")
	}

	if err := c.dyn.Resource(gvr("providers")).Delete(context.Background(), custom, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c.awaitLock(nopRepo, 1, 2*time.Minute)
	if err := c.awaitHealthy("configurations", cfg, 3*time.Minute); err != nil {
		t.Error(err)
	}
}

// TestDoctorReasonChain: a configuration whose dependency runs a version
// its constraint excludes (provider-nop v0.2.1, >=v9.0.0 wanted) cannot
// resolve its dependencies: doctor gives the revision's own message and
// the chain: what runs the source, and who requires what of it.
func TestDoctorReasonChain(t *testing.T) {
	env, reg, _, x := start(t)
	const cfg = "doctor-chain"
	nop := "e2e-crossplane-contrib-provider-nop"
	repo := reg.Host + "/e2e/doctor/configuration-chain"
	nopRepo := reg.Host + "/e2e/crossplane-contrib/provider-nop"
	pushNeeds(t, reg, repo, "v1.0.0", nopRepo, ">=v9.0.0")
	t.Cleanup(func() {
		clitest.New(t).WithEnv(env).Run("uninstall", "configuration/"+cfg, "provider/"+nop, "--force", "--yes", "--wait=2m")
	})
	x.Run("install", nopRepo+":v0.2.1", "--wait=5m").Succeeds(t)
	x.Run("install", "configuration", repo+":v1.0.0", cfg).Succeeds(t)

	var r *clitest.Result
	for end := time.Now().Add(3 * time.Minute); time.Now().Before(end); time.Sleep(2 * time.Second) {
		if r = x.Run("doctor"); strings.Contains(r.Stdout, "configuration/"+cfg+" (revision") {
			break
		}
	}
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s%s", r.Stdout, r.Stderr)
	if r.ExitCode != 3 {
		t.Errorf("doctor exits %d, want 3", r.ExitCode)
	}
	contains(t, "doctor", r.Stdout, "BLOCKING configuration/"+cfg+" (revision ", "cannot resolve its dependencies: cannot resolve package dependencies",
		"Taking part: "+nopRepo+" runs v0.2.1 as provider/"+nop+"; configuration/"+cfg+" requires >=v9.0.0", "[dependency-unresolved]")
}
