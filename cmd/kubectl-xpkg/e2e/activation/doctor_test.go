package activation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/cmd/kubectl-xpkg/e2e/internal/acme"
)

// TestDoctorActivationRules: a Composition that composes a kind no policy
// activates is a blocking finding naming the Composition, the kind and its
// MRD; a policy entry that matches no MRD (a typo) is a warning naming the
// entry, its policy and the MRD it was meant for.
func TestDoctorActivationRules(t *testing.T) {
	s := begin(t)
	s.Create(t, acme.Compositions, acme.Composition("backup-snapshot", "XSnapshot", acme.PTStep(acme.Storage, "Snapshot")))
	const typo = "firewals." + acme.Network
	s.Create(t, acme.MRAPs, acme.MRAP("typo-activations", typo))

	r := s.Run(t, "doctor").Fails(t, 3)
	acme.Contains(t, "doctor", r.Stdout, "[inactive-composed-kind]", "[activation-pattern-unmatched]")

	r = s.Run(t, "doctor", "-o", "json")
	var doc struct {
		Findings []struct{ Rule, Severity, Message, Object string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("doctor -o json: %v\n%s%s", err, r.Stdout, r.Stderr)
	}
	found := func(rule, severity string, wants ...string) {
		t.Helper()
		for _, f := range doc.Findings {
			text := f.Message + " " + f.Object
			if f.Rule != rule || !strings.Contains(text, wants[0]) {
				continue
			}
			acme.Contains(t, rule, text, wants...)
			if severity != "" && f.Severity != severity {
				t.Errorf("%s is %s, want %s: %s", rule, f.Severity, severity, text)
			}
			return
		}
		t.Errorf("doctor has no %s finding naming %q: %+v", rule, wants[0], doc.Findings)
	}
	found("inactive-composed-kind", "blocking", "backup-snapshot", "Snapshot."+acme.Storage, acme.MRDName("Snapshot", acme.Storage))
	found("activation-pattern-unmatched", "warning", typo, "typo-activations", acme.MRDName("Firewall", acme.Network))
}
