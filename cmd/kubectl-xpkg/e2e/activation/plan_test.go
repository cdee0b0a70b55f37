package activation

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/cmd/kubectl-xpkg/e2e/internal/acme"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
)

// planDoc is the plan as -o json prints it.
type planDoc struct {
	Policy   map[string]any `json:"policy"`
	Activate []string       `json:"activate"`
	Needs    []struct {
		Kind  string   `json:"kind"`
		MRD   string   `json:"mrd"`
		State string   `json:"state"`
		By    []string `json:"neededBy"`
	} `json:"needs"`
	Missing []json.RawMessage `json:"missing"`
	Unread  []string          `json:"unread"`
	Counts  struct {
		MRDs           int `json:"mrds"`
		ActiveNow      int `json:"activeNow"`
		Needed         int `json:"needed"`
		Activates      int `json:"activates"`
		Unneeded       int `json:"unneeded"`
		ActiveUnneeded int `json:"activeUnneeded"`
	} `json:"counts"`
}

// covers are the names of mrds that the activate entries match, as
// Crossplane matches them; an entry matching none fails the test.
func covers(t *testing.T, entries, mrds []string) []string {
	t.Helper()
	var out []string
	for _, e := range entries {
		n := 0
		for _, m := range mrds {
			if ok, _ := path.Match(e, m); ok {
				n++
				if !slices.Contains(out, m) {
					out = append(out, m)
				}
			}
		}
		if n == 0 {
			t.Errorf("activate entry %q matches no MRD", e)
		}
	}
	slices.Sort(out)
	return out
}

// TestActivationPlanPredictsCrossplane plans the policy for three
// Compositions (patch-and-transform composing two storage kinds,
// go-templating one network kind, and one whose function the plan cannot
// read), applies it with kubectl as printed, and waits until Crossplane
// has activated exactly the three kinds: their CRDs made, the other kinds'
// MRDs still Inactive with no CRD.
func TestActivationPlanPredictsCrossplane(t *testing.T) {
	s := begin(t)
	ctx := context.Background()
	s.Create(t, acme.Compositions, acme.Composition("storage-pt", "XStorage", acme.PTStep(acme.Storage, "Bucket", "Volume")))
	s.Create(t, acme.Compositions, acme.Composition("network-gt", "XNetwork", acme.GoTemplatingStep(acme.Network, "Network")))
	s.Create(t, acme.Compositions, acme.Composition("acme-blueprint", "XBlueprint", unknownStep))
	need := []string{acme.MRDName("Bucket", acme.Storage), acme.MRDName("Network", acme.Network), acme.MRDName("Volume", acme.Storage)}
	var others []string
	for _, n := range acme.AllMRDs() {
		if !slices.Contains(need, n) {
			others = append(others, n)
		}
	}

	before, err := s.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run(t, "activation", "plan").Succeeds(t)
	comments, policy := acme.PrintedPolicy(t, r.Stdout)
	if policy.GetAPIVersion() != "apiextensions.crossplane.io/v1alpha1" || policy.GetKind() != "ManagedResourceActivationPolicy" || policy.GetName() != "planned-activations" {
		t.Errorf("the policy printed is %s %s %s", policy.GetAPIVersion(), policy.GetKind(), policy.GetName())
	}
	activate, _, _ := unstructured.NestedStringSlice(policy.Object, "spec", "activate")
	if got := covers(t, activate, acme.AllMRDs()); !slices.Equal(got, need) || len(activate) > len(need) {
		t.Errorf("the policy activates %q (entries %q), want exactly %q", got, activate, need)
	}
	acme.Contains(t, "the plan's comments", comments,
		"# ManagedResourceDefinitions: 6,", "3 needed",
		"# Needed:", acme.MRDName("Bucket", acme.Storage)+" (Inactive, provider/"+acme.Provider+"): Composition storage-pt",
		acme.MRDName("Network", acme.Network)+" (Inactive, provider/"+acme.Provider+"): Composition network-gt",
		"# Not read fully", "Composition acme-blueprint: step blueprint", unknownInput)

	// The figures agree with the cluster as read before the plan.
	r = s.Run(t, "activation", "plan", "-o", "json").Succeeds(t)
	var doc planDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	activeNow, activates, activeUnneeded := 0, 0, 0
	for name, st := range before {
		switch {
		case st == "Active" && slices.Contains(need, name):
			activeNow++
		case st == "Active":
			activeNow++
			activeUnneeded++
		case slices.Contains(need, name):
			activates++
		}
	}
	c := doc.Counts
	want := fmt.Sprintf("mrds %d activeNow %d needed %d activates %d unneeded %d activeUnneeded %d",
		len(before), activeNow, len(need), activates, len(before)-len(need), activeUnneeded)
	if got := fmt.Sprintf("mrds %d activeNow %d needed %d activates %d unneeded %d activeUnneeded %d",
		c.MRDs, c.ActiveNow, c.Needed, c.Activates, c.Unneeded, c.ActiveUnneeded); got != want {
		t.Errorf("-o json counts %s, want %s", got, want)
	}
	if !slices.Equal(doc.Activate, activate) {
		t.Errorf("-o json activates %q, the printed policy %q", doc.Activate, activate)
	}
	if a, _, _ := unstructured.NestedStringSlice(doc.Policy, "spec", "activate"); !slices.Equal(a, activate) {
		t.Errorf("-o json's policy activates %q, the printed one %q", a, activate)
	}
	if len(doc.Unread) != 1 || !strings.Contains(doc.Unread[0], "Composition acme-blueprint") || !strings.Contains(doc.Unread[0], unknownInput) {
		t.Errorf("-o json unread: %q", doc.Unread)
	}
	if len(doc.Missing) != 0 {
		t.Errorf("-o json missing: %s", doc.Missing)
	}

	// Applied as printed, the policy activates exactly the kinds needed.
	s.Apply(t, "activations.yaml", s.Run(t, "activation", "plan").Succeeds(t).Stdout)
	t.Cleanup(func() { _ = s.Dyn.Resource(acme.MRAPs).Delete(ctx, policy.GetName(), metav1.DeleteOptions{}) })
	s.waitActivated(t, policy.GetName(), need, others)

	// Planned again, the policy there is accounted for: it activates the
	// three, none beyond the need, and nothing is left to activate.
	r = s.Run(t, "activation", "plan").Succeeds(t)
	comments, again := acme.PrintedPolicy(t, r.Stdout)
	if a, _, _ := unstructured.NestedStringSlice(again.Object, "spec", "activate"); !slices.Equal(a, activate) {
		t.Errorf("planned again, the policy activates %q, not %q", a, activate)
	}
	acme.Contains(t, "the plan after the policy", comments, "3 active today", "0 of them are inactive today",
		"# Policy planned-activations (activate "+strings.Join(activate, ", ")+") activates 3 MRDs.")

	// Objects count as a need, read from the CRDs Crossplane made: with
	// storage-pt gone, a Volume keeps its kind needed and Bucket is needed
	// by nothing, though active (and staying so).
	if err := s.Dyn.Resource(acme.Compositions).Delete(ctx, "storage-pt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Create(t, schema.GroupVersionResource{Group: acme.Storage, Version: "v1beta1", Resource: "volumes"},
		"apiVersion: "+acme.Storage+"/v1beta1\nkind: Volume\nmetadata:\n  name: data\nspec:\n  forProvider:\n    size: 10\n")
	r = s.Run(t, "activation", "plan", "-o", "json").Succeeds(t)
	doc = planDoc{}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	if want := []string{acme.MRDName("Network", acme.Network), acme.MRDName("Volume", acme.Storage)}; !slices.Equal(doc.Activate, want) {
		t.Errorf("with a Volume and no storage-pt the plan activates %q, want %q", doc.Activate, want)
	}
	for _, n := range doc.Needs {
		if n.MRD == acme.MRDName("Volume", acme.Storage) && !slices.Equal(n.By, []string{"1 object"}) {
			t.Errorf("volumes are needed by %q, want the one object", n.By)
		}
	}
	if c := doc.Counts; c.Needed != 2 || c.ActiveNow != 3 || c.ActiveUnneeded != 1 || c.Activates != 0 {
		t.Errorf("with a Volume and no storage-pt the counts are %+v", c)
	}
}

// waitActivated waits until Crossplane has activated exactly need: each
// MRD Active with its CRD made and the policy's status naming them; then
// checks that every MRD of others is still Inactive, with no CRD.
func (s *suite) waitActivated(t *testing.T, policy string, need, others []string) {
	t.Helper()
	start := time.Now()
	err := crossplane.Eventually(context.Background(), 2*time.Minute, func(ctx context.Context) error {
		states, err := s.States(ctx)
		if err != nil {
			return err
		}
		for _, n := range need {
			if states[n] != "Active" {
				return fmt.Errorf("MRD %s is %s", n, states[n])
			}
			if ok, err := s.CRDExists(ctx, n); !ok {
				return fmt.Errorf("MRD %s is Active, its CRD not made yet (%v)", n, err)
			}
		}
		u, err := s.Dyn.Resource(acme.MRAPs).Get(ctx, policy, metav1.GetOptions{})
		if err != nil {
			return err
		}
		activated, _, _ := unstructured.NestedStringSlice(u.Object, "status", "activated")
		slices.Sort(activated)
		if !slices.Equal(activated, need) {
			return fmt.Errorf("the policy's status.activated is %q", activated)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Crossplane did not activate %q: %v", need, err)
	}
	t.Logf("Crossplane activated %q in %.1fs", need, time.Since(start).Seconds())
	ctx := context.Background()
	states, err := s.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range others {
		if states[n] != "Inactive" {
			t.Errorf("MRD %s, which nothing needs, is %s", n, states[n])
		}
		if ok, err := s.CRDExists(ctx, n); ok || err != nil {
			t.Errorf("CRD %s exists (%v): its MRD was to stay inactive", n, err)
		}
	}
}
