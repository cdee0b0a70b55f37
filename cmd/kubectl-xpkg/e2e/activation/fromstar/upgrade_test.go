package fromstar

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/cmd/kubectl-xpkg/e2e/internal/acme"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
)

// newKind is the storage kind v0.2.0 of the provider brings.
const newKind = "Archive"

// upgradeBringsInactive: v0.2.0 brings one new storage kind, and the
// policy there (planned-activations, which names kinds, not the group)
// does not match it; the upgrade plan says it comes Inactive and that the
// policies activate none of it; upgraded, Crossplane makes it so: the MRD
// Inactive, no CRD, and the six kinds of v0.1.0 still Active.
func upgradeBringsInactive(t *testing.T, c *acme.Cluster) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Push("e2e/fromstar", "v0.2.0", acme.Package(append(slices.Clone(acme.StorageKinds), newKind), acme.NetworkKinds)); err != nil {
		t.Fatal(err)
	}
	target := "provider/" + acme.Provider
	r := c.Run(t, "upgrade", target, "v0.2.0", "--dry-run=server").Succeeds(t)
	acme.Contains(t, "the upgrade plan", r.Stdout+r.Stderr, "[activation]",
		"brings 1 ManagedResourceDefinition, Inactive as it comes (it declares safe-start): the policies here ("+planned+") activate 0 of them, so 0 CRDs appear and 1 stays unserved")

	// The wait's own account is not checked here: Crossplane can record a
	// new definition in the revision's status.objectRefs without its kind
	// at first, and the wait then counts without it. Crossplane is read.
	c.Run(t, "upgrade", target, "v0.2.0", "--wait=5m").Succeeds(t)
	mrd := acme.MRDName(newKind, acme.Storage)
	err := crossplane.Eventually(ctx, time.Minute, func(ctx context.Context) error {
		states, err := c.States(ctx)
		if err != nil {
			return err
		}
		if st, ok := states[mrd]; !ok || st != "Inactive" {
			return fmt.Errorf("MRD %s is %q (there: %t), want Inactive", mrd, st, ok)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.CRDExists(ctx, mrd); ok || err != nil {
		t.Errorf("CRD %s exists (%v): the plan said it stays unserved", mrd, err)
	}
	stayActive(t, c, acme.AllMRDs(), 0)
}

// waitActive waits until every MRD of names is Active with its CRD.
func waitActive(t *testing.T, c *acme.Cluster, names []string) {
	t.Helper()
	start := time.Now()
	if err := crossplane.Eventually(context.Background(), 2*time.Minute, func(ctx context.Context) error {
		return active(ctx, c, names)
	}); err != nil {
		t.Fatalf("under the default policy: %v", err)
	}
	t.Logf("Crossplane activated %d MRDs in %.1fs", len(names), time.Since(start).Seconds())
}

// stayActive checks every MRD of names Active with its CRD, now and for
// the time given.
func stayActive(t *testing.T, c *acme.Cluster, names []string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	for end := time.Now().Add(d); ; time.Sleep(time.Second) {
		if err := active(ctx, c, names); err != nil {
			t.Fatalf("an MRD did not stay Active: %v", err)
		}
		if time.Now().After(end) {
			break
		}
	}
	t.Logf("%d MRDs Active, each with its CRD, for %s", len(names), d)
}

func active(ctx context.Context, c *acme.Cluster, names []string) error {
	states, err := c.States(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if states[n] != "Active" {
			return fmt.Errorf("MRD %s is %q", n, states[n])
		}
		if ok, err := c.CRDExists(ctx, n); !ok {
			return fmt.Errorf("MRD %s is Active, its CRD not there (%v)", n, err)
		}
	}
	return nil
}
