package action

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

var (
	imageConfig = fakecluster.ImageConfig
	pullSecret  = fakecluster.PullSecret
)

func TestDescribeShowsMRDsAndTheirPolicies(t *testing.T) {
	mrd := func(name, state, est string) *unstructured.Unstructured {
		return obj("apiextensions.crossplane.io/v1alpha1", "ManagedResourceDefinition", name, map[string]any{
			"spec":   map[string]any{"state": state},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Established", "status": est}}},
		})
	}
	ref := func(n string) map[string]any {
		return map[string]any{"apiVersion": "apiextensions.crossplane.io/v1alpha1", "kind": "ManagedResourceDefinition", "name": n}
	}
	c := fakeCluster(t,
		provider("p", "r.example.org/org/p:v1", "p-aaaaaaaaaaaa"),
		revision("p", "p-aaaaaaaaaaaa", "r.example.org/org/p:v1", 1, "Active", ref("a.example.org"), ref("b.example.org")),
		mrd("a.example.org", "Active", "True"), mrd("b.example.org", "Inactive", "False"), mrd("other.example.org", "Active", "True"),
		obj("apiextensions.crossplane.io/v1alpha1", "ManagedResourceActivationPolicy", "mine", map[string]any{
			"spec": map[string]any{"activate": []any{"a.example.org"}}, "status": map[string]any{"activated": []any{"a.example.org", "other.example.org"}}}),
		obj("apiextensions.crossplane.io/v1alpha1", "ManagedResourceActivationPolicy", "theirs", map[string]any{
			"spec": map[string]any{"activate": []any{"other.example.org"}}, "status": map[string]any{"activated": []any{"other.example.org"}}}),
	)
	d, err := c.Describe(context.Background(), "Provider", "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.MRDs) != 2 || d.MRDs[0] != (installed.MRD{Name: "a.example.org", State: "Active", Established: "True"}) ||
		d.MRDs[1] != (installed.MRD{Name: "b.example.org", State: "Inactive", Established: "False"}) {
		t.Errorf("MRDs %+v", d.MRDs)
	}
	if len(d.MRAPs) != 1 || d.MRAPs[0].Name != "mine" || strings.Join(d.MRAPs[0].Activated, ",") != "a.example.org" {
		t.Errorf("policies %+v", d.MRAPs)
	}
}

// TestPlanMarksReadsPastABrokenPullSecret: a package read with your own
// credentials because its ImageConfig's pull secret cannot be read is a
// warning of the plan, for each reference read so: the package manager
// pulls with the secret, and may not get what the plan read.
func TestPlanMarksReadsPastABrokenPullSecret(t *testing.T) {
	reg := newRegistry(t)
	h := reg.host
	reg.pushSample(t, "provider-nop", "v0.2.1", "org/provider-nop")
	reg.pushSample(t, "provider-nop", "v0.4.0", "org/provider-nop")
	c := fakeCluster(t,
		pkgObj("Provider", "nop", h+"/org/provider-nop:v0.2.1", "nop-bbbbbbbbbbbb"),
		imageConfig("org-creds", h+"/org/", "", "gone"),
	)
	ctx := context.Background()
	in := installedNop(t, c)
	plan, err := (&Change{Cluster: c, Limits: xpkg.DefaultLimits, XPNamespace: "crossplane-system"}).Plan(ctx, ActionUpgrade, in, h+"/org/provider-nop:v0.4.0")
	if err != nil {
		t.Fatal(err)
	}
	fs := planFindings(plan, findings.RulePullSecret)
	if len(fs) != 2 {
		t.Fatalf("pull-secret findings %+v; want one for each package read", plan.Findings)
	}
	for i, ref := range []string{h + "/org/provider-nop:v0.2.1", h + "/org/provider-nop:v0.4.0"} {
		f := fs[i]
		if f.Severity != findings.Warning || f.Object != "ImageConfig org-creds" ||
			!strings.HasPrefix(f.Message, ref+" was read with your own registry credentials: the pull secret gone of ImageConfig org-creds could not be read (") {
			t.Errorf("finding %+v", f)
		}
	}
}

// TestPlanRefusesADefinitionBeingDeleted: an upgrade (or a rollback: the
// same check) to a package that defines a CRD being deleted in the
// cluster is refused, naming the CRD, since when and the way out; read
// with the one CRDs read the plan makes of both packages' definitions.
func TestPlanRefusesADefinitionBeingDeleted(t *testing.T) {
	reg := newRegistry(t)
	h := reg.host
	reg.pushSample(t, "provider-nop", "v0.2.1", "org/provider-nop")
	reg.pushSample(t, "provider-nop", "v0.4.0", "org/provider-nop")
	since := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	crd := fakecluster.CRD("nop.crossplane.io", "NopResource", "nopresources", "v1alpha1")
	ctx := context.Background()
	for _, tc := range []struct {
		crd  *unstructured.Unstructured
		want int
	}{{fakecluster.Deleting(crd, since), 1}, {crd, 0}} {
		c, dyn := fakeClusterDyn(t, pkgObj("Provider", "nop", h+"/org/provider-nop:v0.2.1", "nop-bbbbbbbbbbbb"), tc.crd)
		in := installedNop(t, c)
		dyn.ClearActions()
		plan, err := (&Change{Cluster: c, Limits: xpkg.DefaultLimits, XPNamespace: "crossplane-system"}).Plan(ctx, ActionUpgrade, in, h+"/org/provider-nop:v0.4.0")
		if err != nil {
			t.Fatal(err)
		}
		fs := planFindings(plan, findings.RuleDefinitionDeleting)
		if len(fs) != tc.want {
			t.Fatalf("findings %+v, want %d %s", plan.Findings, tc.want, findings.RuleDefinitionDeleting)
		}
		if tc.want == 1 && (fs[0].Severity != findings.Blocking || fs[0].Object != "nopresources.nop.crossplane.io" || plan.Refused() == nil ||
			fs[0].Message != "CRD nopresources.nop.crossplane.io, which "+h+"/org/provider-nop:v0.4.0 defines, is being deleted (since 2025-06-01T10:00:00Z): the package manager cannot make it again until the deletion finishes, and the API server refuses every object of kind NopResource meanwhile; let the deletion finish first: objects of the kind hold it (kubectl xpkg doctor names what holds it); or, to keep them, install with --force and run kubectl xpkg doctor --fix, which makes each of them again once the package manager has made the CRD again") {
			t.Errorf("finding %+v", fs[0])
		}
		var crdReads []string
		for _, a := range dyn.Actions() {
			if a.GetResource().Resource == "customresourcedefinitions" {
				crdReads = append(crdReads, fakecluster.Request(a))
			}
		}
		if !slices.Equal(crdReads, []string{"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/nopresources.nop.crossplane.io"}) {
			t.Errorf("the plan read CRDs with %v, want one GET", crdReads)
		}
	}
}

// installedNop is provider/nop of c as the plans read it, through the
// cluster's ImageConfigs.
func installedNop(t *testing.T, c *cluster.Cluster) *Installed {
	t.Helper()
	ctx := context.Background()
	r, err := resolve.NewRegistry(ctx, c, "crossplane-system", source.Options{}, true, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Get(ctx, "Provider", "nop")
	if err != nil {
		t.Fatal(err)
	}
	in, err := ReadInstalled(ctx, r, p)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
