package diagnose

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

func TestActivationFinding(t *testing.T) {
	provider := func(caps ...any) *xpkg.Meta {
		spec := map[string]any{}
		if caps != nil {
			spec["capabilities"] = caps
		}
		return &xpkg.Meta{Object: &xpkg.Object{Content: map[string]any{"spec": spec}}, Kind: "Provider"}
	}
	brings := []string{"buckets.s3.example.io", "objects.s3.example.io", "vpcs.ec2.example.io", "providerconfigs.example.io"}
	for _, tc := range []struct {
		name     string
		meta     *xpkg.Meta
		policies []installed.MRAP
		want     string // "" for no finding
	}{
		{"no safe-start: all active", provider(), nil,
			"p brings 3 ManagedResourceDefinitions, Active as it comes (it does not declare safe-start): 3 CRDs appear"},
		{"safe-start under the default policy", provider("SafeStart"), []installed.MRAP{{Name: "default", Activate: []string{"*"}}},
			"p brings 3 ManagedResourceDefinitions, Inactive as it comes (it declares safe-start): the policies here (default) activate all 3: 3 CRDs appear"},
		{"safe-start, a policy for one group", provider("safe-start"), []installed.MRAP{{Name: "s3", Activate: []string{"*.s3.example.io"}}},
			"the policies here (s3) activate 2 of them, so 2 CRDs appear and 1 stays unserved until a policy names them"},
		{"safe-start, a policy for other kinds", provider("safe-start"), []installed.MRAP{{Name: "planned", Activate: []string{"buckets.s3.example.io"}}},
			"the policies here (planned) activate 1 of them, so 1 CRD appears and 2 stay unserved until a policy names them"},
		{"safe-start, no policy", provider("safe-start"), nil, "no ManagedResourceActivationPolicy activates any"},
		{"a configuration", &xpkg.Meta{Object: &xpkg.Object{Content: map[string]any{}}, Kind: "Configuration"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := ActivationFinding("p", tc.meta, brings, tc.policies)
			switch {
			case tc.want == "" && f != nil:
				t.Fatalf("a finding: %+v", f)
			case tc.want == "":
			case f == nil:
				t.Fatal("no finding")
			case !strings.Contains(f.Message, tc.want):
				t.Errorf("message %q, want %q in it", f.Message, tc.want)
			}
		})
	}
}

func TestInactiveComposedFindings(t *testing.T) {
	comps := []composition.Composition{
		{Name: "net", Composes: []schema.GroupKind{{Group: "ec2.example.io", Kind: "VPC"}, {Group: "ec2.example.io", Kind: "Subnet"}}},
		{Name: "policy", Composes: []schema.GroupKind{{Group: "iam.example.io", Kind: "Policy"}, {Group: "apps", Kind: "Deployment"}}},
	}
	fs := InactiveComposedFindings("provider/p", []string{"vpcs.ec2.example.io", "policies.iam.example.io", "buckets.s3.example.io"}, comps)
	var got []string
	for _, f := range fs {
		got = append(got, f.Object+": "+f.Message[:strings.Index(f.Message, " composes")])
	}
	want := []string{"vpcs.ec2.example.io: Composition net", "policies.iam.example.io: Composition policy"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("findings %q, want %q", got, want)
	}
}
