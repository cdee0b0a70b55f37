package activation

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/cmd/kubectl-xpkg/e2e/internal/acme"
)

// TestActivationPlanForFiles plans for the Compositions of a directory, as
// a Git checkout holds them before they are applied: with --only-files the
// policy is for those alone (all three network kinds, one pattern), and
// without it the cluster's own Composition (the snapshot kind) is added;
// for Compositions that compose no managed kind there is no policy.
func TestActivationPlanForFiles(t *testing.T) {
	s := begin(t)
	s.Create(t, acme.Compositions, acme.Composition("storage-snapshot", "XBackup", acme.PTStep(acme.Storage, "Snapshot")))
	dir := acme.WriteFiles(t, map[string]string{
		"network.yaml": acme.Composition("network-all", "XNetworkFull", acme.PTStep(acme.Network, "Subnet", "Firewall")) +
			"---\n" + acme.Composition("network-only", "XNetworkOnly", acme.GoTemplatingStep(acme.Network, "Network")),
	})
	var networks []string
	for _, k := range acme.NetworkKinds {
		networks = append(networks, acme.MRDName(k, acme.Network))
	}
	slices.Sort(networks)
	const pattern = "*." + acme.Network

	r := s.Run(t, "activation", "plan", "--only-files", "-f", dir).Succeeds(t)
	comments, policy := acme.PrintedPolicy(t, r.Stdout)
	activate, _, _ := unstructured.NestedStringSlice(policy.Object, "spec", "activate")
	if !slices.Equal(activate, []string{pattern}) {
		t.Errorf("--only-files activates %q, want [%s]", activate, pattern)
	}
	if got := covers(t, activate, acme.AllMRDs()); !slices.Equal(got, networks) {
		t.Errorf("--only-files covers %q, want %q", got, networks)
	}
	acme.Contains(t, "--only-files comments", comments, "Composition network-all (", "Composition network-only (", "network.yaml")
	if strings.Contains(comments, "storage-snapshot") {
		t.Errorf("--only-files plans for the cluster's Composition storage-snapshot:\n%s", comments)
	}

	r = s.Run(t, "activation", "plan", "--only-files", "-f", dir, "-o", "json").Succeeds(t)
	var doc planDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	if doc.Counts.Needed != 3 || doc.Counts.MRDs != len(acme.AllMRDs()) || len(doc.Unread) != 0 {
		t.Errorf("--only-files -o json: counts %+v, unread %q", doc.Counts, doc.Unread)
	}

	// Without --only-files the cluster's Compositions count too.
	r = s.Run(t, "activation", "plan", "-f", dir).Succeeds(t)
	_, policy = acme.PrintedPolicy(t, r.Stdout)
	activate, _, _ = unstructured.NestedStringSlice(policy.Object, "spec", "activate")
	if want := []string{pattern, acme.MRDName("Snapshot", acme.Storage)}; !slices.Equal(activate, want) {
		t.Errorf("-f with the cluster activates %q, want %q", activate, want)
	}

	// A directory whose Compositions compose no managed kind (a
	// ProviderConfig is a CRD, always served) needs no policy: none is
	// printed, since Crossplane refuses one that activates nothing.
	none := acme.WriteFiles(t, map[string]string{"config.yaml": acme.Composition("config-only", "XConfig", acme.PTStep(acme.ConfigGroup, "ProviderConfig"))})
	r = s.Run(t, "activation", "plan", "--only-files", "-f", none).Succeeds(t)
	comments, policy = acme.PrintedPolicy(t, r.Stdout)
	if len(policy.Object) != 0 {
		t.Errorf("with nothing needed the plan prints a policy: %v", policy.Object)
	}
	acme.Contains(t, "the plan with nothing needed", comments, "0 needed", "Nothing needs a managed resource kind")
	empty := acme.Decode(t, acme.MRAP("activates-nothing"))
	if _, err := s.Dyn.Resource(acme.MRAPs).Create(context.Background(), empty, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("the API server answers a policy that activates nothing with %v, not Invalid", err)
		_ = s.Dyn.Resource(acme.MRAPs).Delete(context.Background(), empty.GetName(), metav1.DeleteOptions{})
	}
	r = s.Run(t, "activation", "plan", "--only-files", "-f", none, "-o", "json").Succeeds(t)
	doc = planDoc{}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	if doc.Policy != nil || len(doc.Activate) != 0 || doc.Counts.Needed != 0 {
		t.Errorf("with nothing needed -o json has policy %v, activate %q, counts %+v", doc.Policy, doc.Activate, doc.Counts)
	}
}
