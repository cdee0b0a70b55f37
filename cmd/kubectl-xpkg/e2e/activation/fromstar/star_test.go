// Package fromstar checks activation plans as predictions on a cluster
// that starts from the default policy `crossplane core init
// --activation=*` makes, which activates every kind: the safe-start
// provider-acme installs with all six kinds Active, `kubectl xpkg
// activation plan` prints the policy for the three its Compositions
// compose, and the test moves the cluster from * to that policy. Then an
// upgrade brings a new kind, which the plan says comes Inactive.
//
// The package has an environment of its own (testenv.Main): activation is
// one-way, so this cluster cannot be shared with the tests of
// e2e/activation, whose kinds must stay inactive.
package fromstar

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/cmd/kubectl-xpkg/e2e/internal/acme"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// planned is the name `activation plan` gives its policy.
const planned = "planned-activations"

// TestFromStarToThePlannedPolicy: under the default policy (activate *)
// the provider's six kinds are Active; the plan for three Compositions'
// kinds says the other three stay active (Crossplane cannot deactivate an
// MRD) and that the default policy activates three needed by nothing.
// The printed policy applied and the default deleted, all six stay
// Active, and the plan then counts the printed policy alone. An upgrade
// that brings a new kind comes next (upgradeBringsInactive).
func TestFromStarToThePlannedPolicy(t *testing.T) {
	c := acme.New(t)
	t.Logf("Crossplane %s", c.Crossplane)
	ctx := context.Background()
	all := acme.AllMRDs()

	def, err := c.Dyn.Resource(acme.MRAPs).Get(ctx, acme.DefaultMRAP, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the default MRAP of `crossplane core init --activation=*`: %v", err)
	}
	if a, _, _ := unstructured.NestedStringSlice(def.Object, "spec", "activate"); !slices.Equal(a, []string{"*"}) {
		t.Fatalf("the default MRAP activates %q, want [*]", a)
	}

	// Installed under *, the plan says all six come Active, and they do.
	ref, err := c.Push("e2e/fromstar", "v0.1.0", acme.Package(acme.StorageKinds, acme.NetworkKinds))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Run(t, "install", ref, acme.Provider, "--dry-run=server").Succeeds(t)
	acme.Contains(t, "the install plan", r.Stdout+r.Stderr, "[activation]",
		"brings 6 ManagedResourceDefinitions, Inactive as it comes (it declares safe-start): the policies here (default) activate all 6: 6 CRDs appear")
	c.Run(t, "install", ref, acme.Provider, "--wait=5m").Succeeds(t)
	waitActive(t, c, all)

	// Three of the six kinds composed: two by patch-and-transform, one by
	// go-templating.
	c.Create(t, acme.Compositions, acme.Composition("storage-pt", "XStorage", acme.PTStep(acme.Storage, "Bucket", "Volume")))
	c.Create(t, acme.Compositions, acme.Composition("network-gt", "XNetwork", acme.GoTemplatingStep(acme.Network, "Network")))
	need := []string{acme.MRDName("Bucket", acme.Storage), acme.MRDName("Network", acme.Network), acme.MRDName("Volume", acme.Storage)}

	r = c.Run(t, "activation", "plan").Succeeds(t)
	printed := r.Stdout
	comments, policy := acme.PrintedPolicy(t, printed)
	if policy.GetKind() != "ManagedResourceActivationPolicy" || policy.GetName() != planned {
		t.Fatalf("the policy printed is %s %s", policy.GetKind(), policy.GetName())
	}
	activate, _, _ := unstructured.NestedStringSlice(policy.Object, "spec", "activate")
	if got := covers(activate, all); !slices.Equal(got, need) {
		t.Errorf("the policy activates %q (entries %q), want exactly %q", got, activate, need)
	}
	acme.Contains(t, "the plan under *", comments,
		"# ManagedResourceDefinitions: 6, 6 active today; 3 needed",
		"0 of them are inactive today",
		"# It leaves out 3 MRDs", "Here 3 of them are active already and stay so: Crossplane cannot deactivate an MRD.",
		"# Policy default (activate *) activates 6 MRDs, 3 of them needed by nothing",
		acme.MRDName("Bucket", acme.Storage)+" (Active, provider/"+acme.Provider+"): Composition storage-pt",
		acme.MRDName("Network", acme.Network)+" (Active, provider/"+acme.Provider+"): Composition network-gt")
	doc := planJSON(t, c)
	if got, want := fmt.Sprint(doc.Counts), "{6 6 3 0 3 3}"; got != want {
		t.Errorf("-o json counts (mrds activeNow needed activates unneeded activeUnneeded) %s, want %s", got, want)
	}
	if len(doc.Existing) != 1 || doc.Existing[0].Name != acme.DefaultMRAP || doc.Existing[0].Matches != 6 || doc.Existing[0].Beyond != 3 {
		t.Errorf("-o json existing policies %+v, want default matching 6, 3 beyond the need", doc.Existing)
	}

	// From * to the planned policy: applied as printed, the default
	// deleted. Nothing deactivates: all six stay Active with their CRDs.
	c.Apply(t, "activations.yaml", printed)
	k := c.X.Kubectl("delete", "managedresourceactivationpolicy", acme.DefaultMRAP)
	t.Logf("$ kubectl delete managedresourceactivationpolicy %s (exit %d)\n%s%s", acme.DefaultMRAP, k.ExitCode, k.Stdout, k.Stderr)
	k.Succeeds(t)
	err = crossplane.Eventually(ctx, 2*time.Minute, func(ctx context.Context) error {
		if _, err := c.Dyn.Resource(acme.MRAPs).Get(ctx, acme.DefaultMRAP, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the default MRAP is still there (%v)", err)
		}
		u, err := c.Dyn.Resource(acme.MRAPs).Get(ctx, planned, metav1.GetOptions{})
		if err != nil {
			return err
		}
		activated, _, _ := unstructured.NestedStringSlice(u.Object, "status", "activated")
		slices.Sort(activated)
		if !slices.Equal(activated, need) {
			return fmt.Errorf("%s's status.activated is %q", planned, activated)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Crossplane did not settle on %s: %v", planned, err)
	}
	stayActive(t, c, all, 10*time.Second)

	// Planned again: the printed policy alone, the same figures.
	r = c.Run(t, "activation", "plan").Succeeds(t)
	comments, _ = acme.PrintedPolicy(t, r.Stdout)
	acme.Contains(t, "the plan after the move", comments, "6 active today", "Here 3 of them are active already and stay so",
		"# Policy "+planned+" (activate "+strings.Join(activate, ", ")+") activates 3 MRDs.")
	if strings.Contains(comments, "Policy "+acme.DefaultMRAP+" ") {
		t.Errorf("the plan after the move still counts the default policy:\n%s", comments)
	}
	doc = planJSON(t, c)
	if len(doc.Existing) != 1 || doc.Existing[0].Name != planned || doc.Existing[0].Matches != 3 || doc.Existing[0].Beyond != 0 {
		t.Errorf("-o json existing policies %+v, want %s alone matching 3", doc.Existing, planned)
	}

	upgradeBringsInactive(t, c)
}

// planDoc is what the test reads of `activation plan -o json`.
type planDoc struct {
	Counts struct {
		MRDs, ActiveNow, Needed, Activates, Unneeded, ActiveUnneeded int
	} `json:"counts"`
	Existing []struct {
		Name    string `json:"name"`
		Matches int    `json:"matches"`
		Beyond  int    `json:"beyondNeed"`
	} `json:"existingPolicies"`
}

func planJSON(t *testing.T, c *acme.Cluster) planDoc {
	t.Helper()
	r := c.Run(t, "activation", "plan", "-o", "json").Succeeds(t)
	var doc planDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	return doc
}

// covers are the names of mrds that the activate entries match, as
// Crossplane matches them.
func covers(entries, mrds []string) []string {
	var out []string
	for _, m := range mrds {
		for _, e := range entries {
			if ok, _ := path.Match(e, m); ok {
				out = append(out, m)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}
