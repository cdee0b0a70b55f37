package plugin

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
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

// TestDescribeRequestsDoNotGrowWithRevisions: describe reads the package,
// its revisions (one list), the Lock and the events, however many revisions
// the package has.
func TestDescribeRequestsDoNotGrowWithRevisions(t *testing.T) {
	const name, ref = "describe-nop", "xpkg.example.org/cli/provider-nop:v0.4.0"
	current := pkgmanager.RevisionName(name, ref)
	x := newCLI(t,
		fakecluster.Object("pkg.crossplane.io/v1", "Provider", name, map[string]any{
			"spec":   map[string]any{"package": ref},
			"status": map[string]any{"currentRevision": current, "currentIdentifier": ref}}),
		fakecluster.Object("pkg.crossplane.io/v1beta1", "Lock", "lock", map[string]any{"packages": []any{
			map[string]any{"name": current, "source": ref[:strings.LastIndex(ref, ":")], "version": "v0.4.0", "dependencies": []any{}}}}))
	addRevision(t, x, name, current, ref, 1, "Active")

	want := []string{"GET /apis/pkg.crossplane.io/v1/providers/" + name, "GET /apis/pkg.crossplane.io/v1/providerrevisions",
		"GET /apis/pkg.crossplane.io/v1beta1/locks/lock", "GET /api/v1/namespaces/default/events"}
	have := 1
	for _, revisions := range []int{1, 20, 301} {
		// Top the revisions up to n, as old inactive ones.
		for ; have < revisions; have++ {
			addRevision(t, x, name, fmt.Sprintf("%s-old%02d", name, have), "example.test/old:v0."+fmt.Sprint(have), int64(100+have), "Inactive")
		}
		x.Fake.ClearRequests()
		r := x.Run("describe", "provider/"+name).Succeeds(t)
		if got := x.Fake.Requests(); len(got) != len(want) || !sameSet(got, want) {
			t.Errorf("with %d revisions describe made %d requests:\n%v\nwant %v", revisions, len(got), got, want)
		}
		// Past 20 the newest 20 and the current one are listed, and the
		// rest counted.
		listed := revisions
		if revisions > 20 {
			listed = 21 // the current one is the oldest here
			contains(t, "describe", r.Stdout, fmt.Sprintf("  … and %d older (%d revisions: -o yaml lists them all)\n", revisions-listed, revisions))
		}
		if n := len(regexp.MustCompile(`(?m)^  `+name+`-`).FindAllString(r.Stdout, -1)); n != listed {
			t.Errorf("describe lists %d of %d revisions, want %d", n, revisions, listed)
		}
		if !regexp.MustCompile(`(?m)^  ` + current + ` +1 `).MatchString(r.Stdout) {
			t.Errorf("describe does not list the current revision:\n%s", r.Stdout)
		}
	}
}

// addRevision adds a ProviderRevision of pkg to the fake cluster.
func addRevision(t *testing.T, x *cli, pkg, name, image string, n int64, state string) {
	t.Helper()
	r := fakecluster.Object("pkg.crossplane.io/v1", "ProviderRevision", name, map[string]any{
		"spec": map[string]any{"image": image, "revision": n, "desiredState": state}})
	r.SetLabels(map[string]string{"pkg.crossplane.io/package": pkg})
	if _, err := x.Fake.Dynamic.Resource(revisionsGVR).Create(context.Background(), r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// sameSet tells whether a and b hold the same strings, as often.
func sameSet(a, b []string) bool {
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
