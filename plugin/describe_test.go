package plugin

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// TestDescribeCountsABigProvider: a provider with many MRDs lists the
// first 20 and counts the rest, and its objects are counted by kind.
func TestDescribeCountsABigProvider(t *testing.T) {
	rev := &installed.Revision{Name: "big-0123456789ab", Image: "r.io/big:v1", DesiredState: "Active"}
	d := &installed.Description{
		Package: &installed.Package{Kind: "Provider", Name: "big", Source: "mirror.invalid/big:v1", CurrentRevision: rev.Name,
			ResolvedPackage: "r.io/big:v1", AppliedImageConfigs: []imageconfig.Applied{{Name: "m", Reason: imageconfig.ReasonRewrite}}},
		Revisions: []*installed.Revision{rev},
		MRAPs:     []installed.MRAP{{Name: "default", Activate: []string{"*"}, Activated: []string{"a", "b"}}},
	}
	for i := range 25 {
		n := fmt.Sprintf("mrd%02d.big.example.org", i)
		rev.Objects = append(rev.Objects, installed.ObjectRef{Kind: "ManagedResourceDefinition", Name: n})
		state, est := "Active", "True"
		if i >= 20 {
			state = "Inactive"
		}
		if i == 24 {
			est = "False"
		}
		d.MRDs = append(d.MRDs, installed.MRD{Name: n, State: state, Established: est})
	}
	rev.Objects = append(rev.Objects, installed.ObjectRef{Kind: "MutatingWebhookConfiguration", Name: "w"})
	var b strings.Builder
	writeDescription(&b, d)
	out := b.String()
	for _, want := range []string{
		"Image configs:      m (RewriteImage)\n",
		"Digest:             <unknown>\n",
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

// TestDescribeEventsAsKubectl: the events table has kubectl describe's
// columns, and a repeated event's age reads "LAST (xN over FIRST)".
func TestDescribeEventsAsKubectl(t *testing.T) {
	now := time.Now()
	d := &installed.Description{
		Package: &installed.Package{Kind: "Provider", Name: "p"},
		Events: []installed.Event{
			{Type: "Normal", Reason: "InstallPackageRevision", Object: "Provider/p", From: "packages/provider.pkg.crossplane.io", Count: 1, First: now.Add(-5 * time.Minute), Last: now.Add(-5 * time.Minute)},
			{Type: "Warning", Reason: "LintPackage", Object: "ProviderRevision/p-1", Count: 4, First: now.Add(-10 * time.Minute), Last: now.Add(-2 * time.Minute)},
		},
	}
	var b strings.Builder
	writeDescription(&b, d)
	out := b.String()
	for _, want := range []string{
		"  TYPE      REASON                   AGE                FROM                                  OBJECT                 MESSAGE\n",
		"  Normal    InstallPackageRevision   5m                 packages/provider.pkg.crossplane.io   Provider/p",
		"  Warning   LintPackage              2m (x4 over 10m)   <none>                                ProviderRevision/p-1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("describe lacks %q:\n%s", want, out)
		}
	}
}
