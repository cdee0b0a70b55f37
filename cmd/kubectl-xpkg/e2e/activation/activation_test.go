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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/cmd/kubectl-xpkg/e2e/internal/acme"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// suite is one test's view of the environment: a client and the plugin's
// runner, with the provider installed and its kinds as MRDs.
type suite struct{ *acme.Cluster }

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
	s := &suite{acme.New(t)}
	installed.once.Do(func() { installed.err = s.install(t) })
	if installed.err != nil {
		t.Fatalf("installing the safe-start provider: %v", installed.err)
	}
	t.Logf("Crossplane %s", s.Crossplane)
	return s
}

func (s *suite) install(t *testing.T) error {
	ctx := context.Background()
	err := s.Dyn.Resource(acme.MRAPs).Delete(ctx, acme.DefaultMRAP, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the default MRAP: %w", err)
	}
	ref, err := s.Push("e2e/activation", "v0.1.0", acme.Package(acme.StorageKinds, acme.NetworkKinds))
	if err != nil {
		return err
	}
	// The plan says what Crossplane then does: six MRDs, Inactive, none
	// activated (the default policy is gone); waiting, that they settle so.
	plan := s.Run(t, "install", ref, acme.Provider, "--dry-run=server")
	said := fmt.Sprintf("brings %d ManagedResourceDefinitions, Inactive as it comes (it declares safe-start): no ManagedResourceActivationPolicy activates any", len(acme.AllMRDs()))
	if plan.ExitCode != 0 || !strings.Contains(plan.Stderr+plan.Stdout, said) || !strings.Contains(plan.Stderr+plan.Stdout, "[activation]") {
		return fmt.Errorf("install --dry-run=server exited %d and does not say %q [activation]:\n%s%s", plan.ExitCode, said, plan.Stdout, plan.Stderr)
	}
	r := s.Run(t, "install", ref, acme.Provider, "--wait=5m")
	if r.ExitCode != 0 {
		return fmt.Errorf("install exited %d: %s", r.ExitCode, r.Stderr)
	}
	// Every managed kind is an MRD, Inactive; the ProviderConfig a CRD.
	return crossplane.Eventually(ctx, time.Minute, func(ctx context.Context) error {
		states, err := s.States(ctx)
		if err != nil {
			return err
		}
		for _, n := range acme.AllMRDs() {
			if states[n] != "Inactive" {
				return fmt.Errorf("MRD %s is %q, want Inactive", n, states[n])
			}
		}
		_, err = s.Dyn.Resource(acme.CRDs).Get(ctx, "providerconfigs."+acme.ConfigGroup, metav1.GetOptions{})
		return err
	})
}
