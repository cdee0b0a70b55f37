package activation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
)

func defs(states ...string) []Definition {
	var out []Definition
	for i, st := range states {
		kind := []string{"Bucket", "Volume", "Snapshot"}[i]
		out = append(out, Definition{Name: strings.ToLower(kind) + "s.storage.example.org", Kind: kind + ".storage.example.org", State: st})
	}
	return out
}

func composes(name string, kinds ...string) composition.Composition {
	c := composition.Composition{Name: name}
	for _, k := range kinds {
		c.Composes = append(c.Composes, schema.GroupKind{Group: "storage.example.org", Kind: k})
	}
	return c
}

// A plan of one entry, one MRD left out and one MRD an existing policy
// matches says so in the singular.
func TestLinesCountInTheSingular(t *testing.T) {
	p := Build(Input{
		Definitions:  defs("Inactive", "Inactive"),
		Compositions: []composition.Composition{composes("storage", "Bucket")},
	})
	p.Existing = []Existing{{Name: "one", Activate: []string{"buckets.storage.example.org"}, Matches: 1}}
	text := strings.Join(p.Lines(), "\n")
	for _, want := range []string{
		"activates the 1 needed in 1 entry;",
		"It leaves out 1 MRD: a cluster that starts from it never makes their 1 CRD.",
		"Policy one (activate buckets.storage.example.org) activates 1 MRD.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan lacks %q:\n%s", want, text)
		}
	}
}

// With nothing needed there is no policy: Crossplane refuses one whose
// spec.activate is empty, so the plan prints none and says why.
func TestNothingNeededIsNoPolicy(t *testing.T) {
	p := Build(Input{Definitions: defs("Active", "Inactive", "Inactive")})
	if pol := p.Policy("planned"); pol != nil {
		t.Errorf("with nothing needed the plan has a policy: %v", pol)
	}
	text := strings.Join(p.Lines(), "\n")
	if !strings.Contains(text, "Nothing needs a managed resource kind: there is no policy to print") ||
		!strings.Contains(text, "The 1 active here stay so") || strings.Contains(text, "This policy") || strings.Contains(text, "leaves out") {
		t.Errorf("the plan with nothing needed says:\n%s", text)
	}
	if pol := Build(Input{Definitions: defs("Inactive"), Compositions: []composition.Composition{composes("c", "Bucket")}}).Policy("planned"); pol == nil {
		t.Error("a plan with a kind needed has no policy")
	}
}
