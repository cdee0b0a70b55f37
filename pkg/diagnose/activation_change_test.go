package diagnose

import (
	"strings"
	"testing"

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
			"the policies here (s3) activate 2 of them, so 2 CRDs appear and 1 stay unserved until a policy names them"},
		{"safe-start, no policy", provider("safe-start"), nil, "no ManagedResourceActivationPolicy activates any"},
		{"a configuration", &xpkg.Meta{Object: &xpkg.Object{Content: map[string]any{}}, Kind: "Configuration"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := ActivationFinding("p", tc.meta, brings, tc.policies)
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
