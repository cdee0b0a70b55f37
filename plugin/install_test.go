package plugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

var (
	providersGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providers"}
	revisionsGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: "providerrevisions"}
)

// pushSample pushes a sample package of hack/testdata to an in-process
// registry and returns its reference (host/cli/name:tag) and package.yaml.
func pushSample(t *testing.T, reg *fixture.Registry, name, tag string) (string, []byte) {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	stream, err := source.DirStream(filepath.Join(root, "hack", "testdata", "packages", name, tag))
	if err != nil {
		t.Fatal(err)
	}
	img, err := fixture.Image(stream)
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/cli/" + name + ":" + tag
	if err := fixture.Push(ref, img); err != nil {
		t.Fatal(err)
	}
	return ref, stream
}

// exists tells whether the fake cluster holds the object.
func (c *cli) exists(t *testing.T, gvr schema.GroupVersionResource, name string) bool {
	t.Helper()
	_, err := c.Fake.Dynamic.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestInstallClientDryRun: a client dry run prints the object it would
// send, with only the fields asked for, and creates nothing: it asks
// neither the cluster nor the registry.
func TestInstallClientDryRun(t *testing.T) {
	reg := fixture.NewRegistry(t)
	ref, _ := pushSample(t, reg, "provider-nop", "v0.2.1")
	reg.Reset()
	x := newCLI(t)
	r := x.Run("install", "provider", ref, "dry-run-nop", "--dry-run=client", "-o", "yaml", "--revision-history-limit=0", "--manual-activation").Succeeds(t)
	want := "apiVersion: pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: dry-run-nop\nspec:\n  package: " + ref +
		"\n  revisionActivationPolicy: Manual\n  revisionHistoryLimit: 0\n"
	if r.Stdout != want {
		t.Errorf("client dry run printed:\n%s\nwant:\n%s", r.Stdout, want)
	}
	if got := x.Fake.Requests(); len(got) > 0 {
		t.Errorf("a client dry run asked the cluster: %v", got)
	}
	if got := reg.Requests(); len(got) > 0 {
		t.Errorf("a client dry run asked the registry: %v", got)
	}
	if x.exists(t, providersGVR, "dry-run-nop") {
		t.Error("a dry run created the provider")
	}
}

// TestInstallRefusesATwin: install REF other-name of a repository that a
// package installs already is planned: a blocking finding naming that
// package and the way out stops it (exit 3, nothing created); --force
// installs it.
func TestInstallRefusesATwin(t *testing.T) {
	ref, _ := pushSample(t, fixture.NewRegistry(t), "provider-nop", "v0.4.0")
	repo := ref[:strings.LastIndex(ref, ":")]
	x := newCLI(t)
	x.Run("install", "provider", ref, "twin-first").Succeeds(t)

	r := x.Run("install", "provider", ref, "twin-second").Fails(t, 3)
	msg := repo + " is installed already as provider/twin-first (" + ref + "): a second package of one repository puts two nodes for it in the Lock, and Crossplane then resolves no package's dependencies; use 'kubectl xpkg upgrade provider/twin-first' to change its version, or pass --force to install it twice anyway"
	want := "Plan: install provider/twin-second (" + ref + ")\n  1 blocking, 0 warning, 1 info\n  BLOCKING " + msg + " [twin-install]\n" +
		"  INFO     " + ref + " brings 1 ManagedResourceDefinition, Active as it comes (it does not declare safe-start): 1 CRD appears [activation]\n" +
		"  Then Crossplane, without automatic dependency upgrades (not read: no Deployment crossplane in crossplane-system (--crossplane-namespace names another); Crossplane's default assumed): installs and moves no dependency; the Lock resolves\n" +
		"error: install of provider/twin-second (" + ref + ") refused: " + msg + "; pass --force to go ahead anyway\n"
	if r.Stderr != want || r.Stdout != "" {
		t.Errorf("stdout %q, stderr:\n%s\nwant:\n%s", r.Stdout, r.Stderr, want)
	}
	if x.exists(t, providersGVR, "twin-second") {
		t.Error("the refused package exists")
	}
	r = x.Run("install", "provider", ref, "twin-second", "--force").Succeeds(t)
	contains(t, "install --force", r.Stdout, "provider.pkg.crossplane.io/twin-second created")
}

// TestInstallAndPlanRefuseADefinitionBeingDeleted: provider-nop installed
// again while its CRD is being deleted (a NopResource whose finalizer the
// gone provider no longer removes holds it) is refused by its plan, as
// install and as plan -f, naming the CRD and the way out (exit 3, nothing
// created); --force installs it.
func TestInstallAndPlanRefuseADefinitionBeingDeleted(t *testing.T) {
	ref, _ := pushSample(t, fixture.NewRegistry(t), "provider-nop", "v0.4.0")
	since := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	x := newCLI(t, fakecluster.Deleting(fakecluster.CRD("nop.crossplane.io", "NopResource", "nopresources", "v1alpha1"), since))
	msg := "CRD nopresources.nop.crossplane.io, which " + ref + " defines, is being deleted (since 2025-06-01T10:00:00Z): the package manager cannot make it again until the deletion finishes, and the API server refuses every object of kind NopResource meanwhile; let the deletion finish first: objects of the kind hold it (kubectl xpkg doctor names what holds it); or, to keep them, install with --force and run kubectl xpkg doctor --fix, which makes each of them again once the package manager has made the CRD again"

	r := x.Run("install", "provider", ref, "nop").Fails(t, 3)
	contains(t, "install", r.Stderr, "BLOCKING "+msg+" [definition-deleting]", "error: install of provider/nop ("+ref+") refused: "+msg)
	if x.exists(t, providersGVR, "nop") {
		t.Error("the refused package exists")
	}

	manifest := filepath.Join(t.TempDir(), "nop.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: nop\nspec:\n  package: "+ref+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = x.Run("plan", "-f", manifest).Fails(t, 3)
	contains(t, "plan -f", r.Stdout+r.Stderr, "BLOCKING "+msg+" [definition-deleting]")

	r = x.Run("install", "provider", ref, "nop", "--force").Succeeds(t)
	contains(t, "install --force", r.Stdout, "provider.pkg.crossplane.io/nop created")
}
