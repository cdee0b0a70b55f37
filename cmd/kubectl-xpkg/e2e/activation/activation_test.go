// Package activation holds activation plans to account as predictions,
// against the real Crossplane package manager: a provider with the
// safe-start capability installs its managed kinds as Inactive
// ManagedResourceDefinitions (MRDs), `kubectl xpkg activation plan` prints
// the ManagedResourceActivationPolicy (MRAP) that activates the kinds the
// Compositions compose, the test applies it, and Crossplane must activate
// exactly those kinds, make their CRDs and no other. doctor's activation
// rules are checked on the same cluster.
//
// The package has an environment of its own (testenv.Main): the default
// MRAP that `crossplane core init --activation=*` makes, which would
// activate every kind, is deleted before the provider is installed, and
// nothing else installs one.
package activation

import (
	"context"
	"fmt"
	"strings"
	"sync"
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

var (
	mrdGVR  = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourcedefinitions"}
	mrapGVR = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourceactivationpolicies"}
	crdGVR  = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	compGVR = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1", Resource: "compositions"}
)

// The provider's two API groups of managed kinds, three kinds each, and
// the group of its ProviderConfig, which Crossplane keeps a CRD.
const (
	storage      = "storage.acme.example.org"
	network      = "network.acme.example.org"
	configGroup  = "acme.example.org"
	providerName = "provider-acme"
	// defaultMRAP is the policy `crossplane core init --activation=*`
	// makes (Crossplane's initializer names it so).
	defaultMRAP = "default"
)

var (
	storageKinds = []string{"Bucket", "Volume", "Snapshot"}
	networkKinds = []string{"Network", "Subnet", "Firewall"}
)

// mrdName is the MRD (and CRD) name of kind in group: plural.group.
func mrdName(kind, group string) string { return strings.ToLower(kind) + "s." + group }

// allMRDs are the provider's MRD names.
func allMRDs() []string {
	var out []string
	for _, k := range storageKinds {
		out = append(out, mrdName(k, storage))
	}
	for _, k := range networkKinds {
		out = append(out, mrdName(k, network))
	}
	return out
}

// suite is one test's view of the environment: a client and the plugin's
// runner, with the provider installed and its kinds as MRDs.
type suite struct {
	dyn dynamic.Interface
	x   *clitest.Test
}

// installed is done once per test binary: the default MRAP deleted, the
// provider pushed and installed, and every MRD it makes present.
var installed struct {
	once sync.Once
	err  error
}

// begin gets the environment with the real Crossplane and, the first time,
// installs the safe-start provider.
func begin(t *testing.T) *suite {
	t.Helper()
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	xp := crossplane.Get(t, env)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{dyn: dyn, x: clitest.New(t).WithEnv(env)}
	installed.once.Do(func() { installed.err = s.install(t, reg) })
	if installed.err != nil {
		t.Fatalf("installing the safe-start provider: %v", installed.err)
	}
	t.Logf("Crossplane %s", xp.Version)
	return s
}

func (s *suite) install(t *testing.T, reg *testenv.Registry) error {
	ctx := context.Background()
	err := s.dyn.Resource(mrapGVR).Delete(ctx, defaultMRAP, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the default MRAP: %w", err)
	}
	img, err := fixture.Image([]byte(providerPackage()))
	if err != nil {
		return err
	}
	ref := reg.Host + "/e2e/activation/" + providerName + ":v0.1.0"
	if err := fixture.Push(ref, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		return err
	}
	// The plan says what Crossplane then does: six MRDs, Inactive, none
	// activated (the default policy is gone); waiting, that they settle so.
	plan := s.run(t, "install", ref, providerName, "--dry-run=server")
	said := fmt.Sprintf("brings %d ManagedResourceDefinitions, Inactive as it comes (it declares safe-start): no ManagedResourceActivationPolicy activates any", len(allMRDs()))
	if plan.ExitCode != 0 || !strings.Contains(plan.Stderr+plan.Stdout, said) || !strings.Contains(plan.Stderr+plan.Stdout, "[activation]") {
		return fmt.Errorf("install --dry-run=server exited %d and does not say %q [activation]:\n%s%s", plan.ExitCode, said, plan.Stdout, plan.Stderr)
	}
	r := s.run(t, "install", ref, providerName, "--wait=5m")
	if r.ExitCode != 0 {
		return fmt.Errorf("install exited %d: %s", r.ExitCode, r.Stderr)
	}
	// Every managed kind is an MRD, Inactive; the ProviderConfig a CRD.
	return crossplane.Eventually(ctx, time.Minute, func(ctx context.Context) error {
		states, err := s.states(ctx)
		if err != nil {
			return err
		}
		for _, n := range allMRDs() {
			if states[n] != "Inactive" {
				return fmt.Errorf("MRD %s is %q, want Inactive", n, states[n])
			}
		}
		_, err = s.dyn.Resource(crdGVR).Get(ctx, "providerconfigs."+configGroup, metav1.GetOptions{})
		return err
	})
}

// run runs kubectl-xpkg with args and logs the transcript.
func (s *suite) run(t *testing.T, args ...string) *clitest.Result {
	t.Helper()
	r := s.x.Run(args...)
	t.Logf("$ kubectl xpkg %s (exit %d)\n%s%s", strings.Join(args, " "), r.ExitCode, r.Stdout, r.Stderr)
	return r
}

// states are the MRDs' spec.state by name ("Inactive" where unset, as
// Crossplane defaults it).
func (s *suite) states(ctx context.Context) (map[string]string, error) {
	l, err := s.dyn.Resource(mrdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, u := range l.Items {
		st, _, _ := unstructured.NestedString(u.Object, "spec", "state")
		if st == "" {
			st = "Inactive"
		}
		out[u.GetName()] = st
	}
	return out, nil
}

// crdExists says whether the CRD name exists.
func (s *suite) crdExists(ctx context.Context, name string) (bool, error) {
	_, err := s.dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// create creates the object of yamlText with the dynamic client, deleted
// when the test ends.
func (s *suite) create(t *testing.T, gvr schema.GroupVersionResource, yamlText string) {
	t.Helper()
	u := decode(t, yamlText)
	ctx := context.Background()
	if _, err := s.dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	t.Cleanup(func() {
		err := s.dyn.Resource(gvr).Delete(ctx, u.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	})
}
