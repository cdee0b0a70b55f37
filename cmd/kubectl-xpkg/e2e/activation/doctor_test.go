package activation

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDoctorActivationRules: a Composition that composes a kind no policy
// activates is a blocking finding naming the Composition, the kind and its
// MRD; a policy entry that matches no MRD (a typo) is a warning naming the
// entry, its policy and the MRD it was meant for.
func TestDoctorActivationRules(t *testing.T) {
	s := begin(t)
	s.create(t, compGVR, composition("backup-snapshot", "XSnapshot", ptStep(storage, "Snapshot")))
	const typo = "firewals." + network
	s.create(t, mrapGVR, mrap("typo-activations", typo))

	r := s.run(t, "doctor").Fails(t, 3)
	contains(t, "doctor", r.Stdout, "[inactive-composed-kind]", "[activation-pattern-unmatched]")

	r = s.run(t, "doctor", "-o", "json")
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
			contains(t, rule, text, wants...)
			if severity != "" && f.Severity != severity {
				t.Errorf("%s is %s, want %s: %s", rule, f.Severity, severity, text)
			}
			return
		}
		t.Errorf("doctor has no %s finding naming %q: %+v", rule, wants[0], doc.Findings)
	}
	found("inactive-composed-kind", "blocking", "backup-snapshot", "Snapshot."+storage, mrdName("Snapshot", storage))
	found("activation-pattern-unmatched", "warning", typo, "typo-activations", mrdName("Firewall", network))
}
