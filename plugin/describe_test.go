package plugin

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
)

// TestDescribeCountsABigProvider: a provider with many MRDs lists the
// first 20 and counts the rest, and its objects are counted by kind.
func TestDescribeCountsABigProvider(t *testing.T) {
	rev := &cluster.Revision{Name: "big-0123456789ab", Image: "r.io/big:v1", DesiredState: "Active"}
	d := &cluster.Description{
		Package: &cluster.Package{Kind: "Provider", Name: "big", Source: "mirror.invalid/big:v1", CurrentRevision: rev.Name,
			ResolvedPackage: "r.io/big:v1", AppliedImageConfigs: []imageconfig.Applied{{Name: "m", Reason: imageconfig.ReasonRewrite}}},
		Revisions: []*cluster.Revision{rev},
		MRAPs:     []cluster.MRAP{{Name: "default", Activate: []string{"*"}, Activated: []string{"a", "b"}}},
	}
	for i := range 25 {
		n := fmt.Sprintf("mrd%02d.big.example.org", i)
		rev.Objects = append(rev.Objects, cluster.ObjectRef{Kind: "ManagedResourceDefinition", Name: n})
		state, est := "Active", "True"
		if i >= 20 {
			state = "Inactive"
		}
		if i == 24 {
			est = "False"
		}
		d.MRDs = append(d.MRDs, cluster.MRD{Name: n, State: state, Established: est})
	}
	rev.Objects = append(rev.Objects, cluster.ObjectRef{Kind: "MutatingWebhookConfiguration", Name: "w"})
	var b strings.Builder
	writeDescription(&b, d)
	out := b.String()
	for _, want := range []string{
		"Image configs:      m (RewriteImage)\n",
		"Digest:             sha256:0123456789ab…\n",
		"  ManagedResourceDefinition      25\n",
		"  MutatingWebhookConfiguration   1\n",
		"(26 objects: -o yaml lists them)",
		"Managed resource definitions: 25 (20 Active, 5 Inactive; 24 Established)",
		"  … and 5 more",
		"  default   *           2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("describe lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mrd20.big.example.org") || !strings.Contains(out, "mrd19.big.example.org") {
		t.Errorf("describe lists other than the first 20 MRDs:\n%s", out)
	}
}
