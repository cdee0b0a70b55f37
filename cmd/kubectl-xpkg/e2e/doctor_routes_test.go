package e2e

import (
	"context"
	"fmt"
	"path"
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
	pushConfiguration(t, reg, repo, tag, "provider", nopRepo, constraint)
}

// pushConfiguration pushes a configuration as repo:tag that depends on
// dep (of kind: provider, configuration) with constraint, or on nothing
// when dep is "".
func pushConfiguration(t *testing.T, reg *testenv.Registry, repo, tag, kind, dep, constraint string) {
	t.Helper()
	meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: " + path.Base(repo) + "\n"
	if dep != "" {
		meta += fmt.Sprintf("spec:\n  dependsOn:\n  - %s: %s\n    version: %q\n", kind, dep, constraint)
	}
	img, err := fixture.Image([]byte(meta))
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.Push(repo+":"+tag, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorTwoPackagesOfOneSource is the second route to a duplicate
// node, on every release: a configuration's dependency is installed by
// the resolver under its own name, then a second Configuration of the
// same package is applied under a custom name (as a GitOps tool would;
// install refuses it). doctor names both packages and the one Crossplane keeps;
// --fix proves nothing safe here and changes nothing; deleting the
// custom-named one, as it says, clears the Lock.
func TestDoctorTwoPackagesOfOneSource(t *testing.T) {
	env, reg, c, x := start(t)
	const cfg, custom = "doctor-needs", "my-base"
	repo := reg.Host + "/e2e/doctor/configuration-needs"
	baseRepo := reg.Host + "/e2e/doctor/configuration-base"
	base := "e2e-doctor-configuration-base" // the resolver's name for it
	pushConfiguration(t, reg, baseRepo, "v1.0.0", "", "", "")
	pushConfiguration(t, reg, repo, "v1.0.0", "configuration", baseRepo, ">=v1.0.0")
	pushConfiguration(t, reg, repo, "v1.1.0", "configuration", baseRepo, ">=v1.0.0")
	t.Cleanup(func() {
		_ = c.dyn.Resource(gvr("configurations")).Delete(context.Background(), custom, metav1.DeleteOptions{})
		clitest.New(t).WithEnv(env).Run("uninstall", "configuration/"+cfg, "configuration/"+base, "--force", "--yes", "--wait=5m")
	})
	x.Run("install", "configuration", repo+":v1.0.0", cfg, "--wait=5m").Succeeds(t)
	installedRef, _, _ := unstructured.NestedString(c.get("configurations", base).Object, "spec", "package")

	second := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "Configuration",
		"metadata": map[string]any{"name": custom},
		"spec":     map[string]any{"package": installedRef},
	}}
	if _, err := c.dyn.Resource(gvr("configurations")).Create(context.Background(), second, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes := c.awaitLock(baseRepo, 2, 2*time.Minute)

	r := x.Run("doctor").Fails(t, 3)
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s%s", r.Stdout, r.Stderr)
	contains(t, "doctor", r.Stdout, "BLOCKING the Lock holds 2 nodes for "+baseRepo, nodes[0], nodes[1],
		"configuration/"+custom, "configuration/"+base, "Crossplane keeps configuration/"+base+": its resolver installs this dependency under that name",
		"delete configuration/"+custom, "[duplicate-lock-node]")

	// A change planned meanwhile cannot become healthy: it is stopped.
	r = x.Run("upgrade", "configuration/"+cfg, "v1.1.0", "--dry-run").Fails(t, 3)
	contains(t, "upgrade --dry-run", r.Stdout, "BLOCKING the Lock holds two nodes for "+baseRepo, "[duplicate-lock-node]")

	r = x.Run("doctor", "--fix", "--yes").Fails(t, 3)
	contains(t, "doctor --fix", r.Stdout, "Repair: nothing doctor can prove safe to change")
	if c.get("configurations", custom) == nil || c.get("configurations", base) == nil {
		t.Fatal("doctor --fix deleted a package it could not prove safe to delete")
	}

	if err := c.dyn.Resource(gvr("configurations")).Delete(context.Background(), custom, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c.awaitLock(baseRepo, 1, 2*time.Minute)
	if err := c.awaitHealthy("configurations", cfg, 3*time.Minute); err != nil {
		t.Error(err)
	}
}

// TestDoctorReasonChain: a configuration whose dependency runs a version
// its constraint excludes (v1.0.0 installed, >=v9.0.0 wanted) cannot
// resolve its dependencies (its install's plan refuses it; --force
// installs it): doctor gives the revision's own message and the chain:
// what runs the source, and who requires what of it.
func TestDoctorReasonChain(t *testing.T) {
	env, reg, _, x := start(t)
	const cfg, base = "doctor-chain", "doctor-chain-base"
	repo := reg.Host + "/e2e/doctor/configuration-chain"
	baseRepo := reg.Host + "/e2e/doctor/configuration-chain-base"
	pushConfiguration(t, reg, baseRepo, "v1.0.0", "", "", "")
	pushConfiguration(t, reg, repo, "v1.0.0", "configuration", baseRepo, ">=v9.0.0")
	t.Cleanup(func() {
		clitest.New(t).WithEnv(env).Run("uninstall", "configuration/"+cfg, "configuration/"+base, "--force", "--yes", "--wait=5m")
	})
	x.Run("install", "configuration", baseRepo+":v1.0.0", base, "--wait=5m").Succeeds(t)
	// The install's plan sees it coming: no version of the base satisfies
	// >=v9.0.0, so the configuration can never become healthy.
	refused := x.Run("install", "configuration", repo+":v1.0.0", cfg).Fails(t, 3)
	contains(t, "install's plan", refused.Stderr, "configuration/"+cfg+" can never become healthy", "[dependency-constraint]")
	x.Run("install", "configuration", repo+":v1.0.0", cfg, "--force").Succeeds(t)

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
		"Taking part: "+baseRepo+" runs v1.0.0 as configuration/"+base+"; configuration/"+cfg+" requires >=v9.0.0", "[dependency-unresolved]")
}
