package action

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

const famRepo = "r.example.org/org/provider-family-x"

// installedOK marks a package object installed and healthy.
func installedOK(u *unstructured.Unstructured) *unstructured.Unstructured {
	_ = unstructured.SetNestedSlice(u.Object, []any{
		map[string]any{"type": "Installed", "status": "True", "reason": "ActivePackageRevision"},
		map[string]any{"type": "Healthy", "status": "True", "reason": "HealthyPackageRevision"},
	}, "status", "conditions")
	return u
}

// ownedByRev makes a revision an owner of u, its controller when
// controller.
func ownedByRev(u *unstructured.Unstructured, rev string, uid string, controller bool) *unstructured.Unstructured {
	refs := append(u.GetOwnerReferences(), metav1.OwnerReference{APIVersion: "pkg.crossplane.io/v1", Kind: "ProviderRevision", Name: rev, UID: types.UID(uid), Controller: &controller})
	u.SetOwnerReferences(refs)
	return u
}

// crossplaneDeployment is the Deployment Crossplane's chart installs,
// labelled with the release.
func crossplaneDeployment(version string) *unstructured.Unstructured {
	u := obj("apps/v1", "Deployment", "crossplane", nil)
	u.SetNamespace("crossplane-system")
	u.SetLabels(map[string]string{"app.kubernetes.io/version": version})
	return u
}

// customFamily is a family provider under a custom name, its active
// revision, the two CRDs it controls and one an older revision left (an
// owner, no controller), a member depending on it, and the Lock.
func customFamily() []*unstructured.Unstructured {
	famRev := withUID(pkgRev("Provider", "fam-custom", "fam-custom-aaa", famRepo+":v1.0.0", 2, "Active"), "rev-aaa")
	old := withUID(pkgRev("Provider", "fam-custom", "fam-custom-000", famRepo+":v0.9.0", 1, "Inactive"), "rev-000")
	return []*unstructured.Unstructured{
		withUID(installedOK(pkgObj("Provider", "fam-custom", famRepo+":v1.0.0", "fam-custom-aaa")), "pkg-fam"),
		famRev, old,
		installedOK(pkgObj("Provider", "member-a", "r.example.org/org/provider-a:v1.0.0", "member-a-1")),
		pkgRev("Provider", "member-a", "member-a-1", "r.example.org/org/provider-a:v1.0.0", 1, "Active"),
		ownedByRev(withUID(widgetsCRD(), "crd-widgets"), "fam-custom-aaa", "rev-aaa", true),
		ownedByRev(withUID(obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "olds.x.example.org", nil), "crd-olds"), "fam-custom-000", "rev-000", false),
		lock(entry("fam-custom-aaa", "Provider", famRepo, "v1.0.0"),
			entry("member-a-1", "Provider", "r.example.org/org/provider-a", "v1.0.0", famRepo, ">= 0.0.0")),
		crossplaneDeployment("v2.4.2"),
	}
}

func renamePlan(t *testing.T, to string, objs ...*unstructured.Unstructured) *RenamePlan {
	t.Helper()
	r := NewRename(&Config{cluster: fakeCluster(t, objs...), XPNamespace: "crossplane-system"})
	r.To = to
	rp, err := r.Plan(context.Background(), "provider/fam-custom")
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// TestRenamePlan: the default name is the resolver's; what the revisions
// installed is found by owner (the older revision's CRD too); the
// dependents, the release and the steps are said; nothing blocks.
func TestRenamePlan(t *testing.T) {
	rp := renamePlan(t, "", customFamily()...)
	if rp.To != "provider/org-provider-family-x" {
		t.Errorf("to %s, want the resolver's name", rp.To)
	}
	if strings.Join(rp.Objects, ",") != "customresourcedefinition/olds.x.example.org,customresourcedefinition/widgets.stored.example.org" {
		t.Errorf("objects %v", rp.Objects)
	}
	if rp.Blocking() {
		t.Errorf("blocked: %+v", rp.Findings)
	}
	if strings.Join(rp.Dependents, ",") != "provider/member-a" || rp.Crossplane != "v2.4.2" {
		t.Errorf("dependents %v, release %q", rp.Dependents, rp.Crossplane)
	}
	f := planFindings(rp.Plan, findings.RuleRenameHandOver)
	if len(f) != 2 || !strings.Contains(f[0].Message, "installed 2 CRDs, 0 MRDs and 0 other objects") || !strings.Contains(f[1].Message, "provider/member-a depend(s) on it") {
		t.Errorf("hand-over findings %+v", f)
	}
	if len(rp.Steps) != 5 || !strings.HasPrefix(rp.Steps[0], "create provider/org-provider-family-x paused") || !strings.HasPrefix(rp.Steps[1], "pause provider/fam-custom") {
		t.Errorf("steps %q", rp.Steps)
	}
}

// TestRenamePlanRefuses: each refusal names its rule, and blocks.
func TestRenamePlanRefuses(t *testing.T) {
	base := customFamily()
	noRelease := base[:len(base)-1]
	gitops := customFamily()
	gitops[0].SetAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": "app:pkg.crossplane.io/Provider:/fam-custom"})
	taken := append(customFamily(), installedOK(pkgObj("Provider", "org-provider-family-x", "r.example.org/other:v1", "x-1")))
	unhealthy := customFamily()
	_ = unstructured.SetNestedSlice(unhealthy[0].Object, []any{map[string]any{"type": "Healthy", "status": "False", "reason": "UnhealthyPackageRevision"}}, "status", "conditions")
	for _, tc := range []struct {
		name, to, rule, says string
		objs                 []*unstructured.Unstructured
	}{
		{"another custom name with dependents", "fam-other", findings.RuleTwinName, "the resolver installs provider/org-provider-family-x, a twin", base},
		{"the name taken", "", findings.RuleRenameTarget, "provider/org-provider-family-x exists already", taken},
		{"no name", "Not_A_Name", findings.RuleRenameTarget, "is no valid package name", base},
		{"the release unknown", "", findings.RuleRenameRelease, "could not be read", noRelease},
		{"a GitOps tool", "", findings.RuleRenameGitOps, "managed by Argo CD", gitops},
		{"not healthy", "", findings.RuleRenameState, "not installed and healthy", unhealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := renamePlan(t, tc.to, tc.objs...)
			f := planFindings(rp.Plan, tc.rule)
			if len(f) != 1 || f[0].Severity != findings.Blocking || !strings.Contains(f[0].Message, tc.says) {
				t.Errorf("%s findings %+v, want one blocking saying %q", tc.rule, f, tc.says)
			}
			if rp.Refused() == nil {
				t.Error("not refused")
			}
		})
	}
}

// chartDeployment is the Deployment Crossplane's Helm chart installs:
// labelled with the chart's appVersion (no v; "" no label), its container
// and init container running image ("" none).
func chartDeployment(label, image string) *unstructured.Unstructured {
	u := crossplaneDeployment(label)
	if label == "" {
		u.SetLabels(nil)
	}
	if image != "" {
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "crossplane-init", "image": image}}, "spec", "template", "spec", "initContainers")
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "crossplane", "image": image}}, "spec", "template", "spec", "containers")
	}
	return u
}

// TestRenamePlanReadsTheReleaseAsClustersRecordIt: the release is read as
// Crossplane's Helm chart records it (a label without v, the image tag
// with one), also behind a mirror or pinned by digest.
func TestRenamePlanReadsTheReleaseAsClustersRecordIt(t *testing.T) {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name, label, image, want string
		refused                  bool
	}{
		{"the chart's Deployment", "2.4.2", "xpkg.crossplane.io/crossplane/crossplane:v2.4.2", "v2.4.2", false},
		{"the chart's label alone", "2.4.2", "", "v2.4.2", false},
		{"a mirror with a port", "", "mirror.example.com:5000/crossplane/crossplane:v2.3.4", "v2.3.4", false},
		{"a tag pinned by digest", "", "xpkg.crossplane.io/crossplane/crossplane:v2.4.1" + digest, "v2.4.1", false},
		{"a digest alone: the label decides", "2.3.4", "xpkg.crossplane.io/crossplane/crossplane" + digest, "v2.3.4", false},
		{"another release", "2.5.0", "xpkg.crossplane.io/crossplane/crossplane:v2.5.0", "v2.5.0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := customFamily()
			objs[len(objs)-1] = chartDeployment(tc.label, tc.image)
			rp := renamePlan(t, "", objs...)
			f := planFindings(rp.Plan, findings.RuleRenameRelease)
			if rp.Crossplane != tc.want || (len(f) > 0) != tc.refused {
				t.Errorf("release %q, %s findings %+v; want %q, refused %v", rp.Crossplane, findings.RuleRenameRelease, f, tc.want, tc.refused)
			}
			if tc.refused && (len(f) != 1 || !strings.Contains(f[0].Message, "Crossplane "+tc.want+" runs")) {
				t.Errorf("refusal %+v", f)
			}
		})
	}
}

// TestRenameNothingToDo: a package with the resolver's name has nothing
// to do.
func TestRenameNothingToDo(t *testing.T) {
	c := fakeCluster(t, installedOK(pkgObj("Provider", "org-provider-family-x", famRepo+":v1.0.0", "x-1")))
	rp, err := NewRename(&Config{cluster: c}).Plan(context.Background(), "provider/org-provider-family-x")
	if err != nil || rp != nil {
		t.Errorf("plan %+v, %v; want none", rp, err)
	}
}

// TestRenameNewPackageObject: the new package has the old one's spec,
// paused, without what a GitOps tool or kubectl apply tracks it by.
func TestRenameNewPackageObject(t *testing.T) {
	c := fakeCluster(t, customFamily()...)
	old, err := c.Get(context.Background(), "Provider", "fam-custom")
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(old.Object.Object, "Manual", "spec", "revisionActivationPolicy")
	old.Object.SetLabels(map[string]string{"team": "platform", "kustomize.toolkit.fluxcd.io/name": "infra"})
	old.Object.SetAnnotations(map[string]string{"note": "x", "kubectl.kubernetes.io/last-applied-configuration": "{}"})
	u := newPackageObject(old, "new-name", nil)
	if u.GetName() != "new-name" || u.GetAnnotations()[cluster.PausedAnnotation] != "true" || u.GetAnnotations()["note"] != "x" ||
		u.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"] != "" || u.GetLabels()["team"] != "platform" ||
		u.GetLabels()["kustomize.toolkit.fluxcd.io/name"] != "" {
		t.Errorf("metadata %v %v", u.GetLabels(), u.GetAnnotations())
	}
	if p, _, _ := unstructured.NestedString(u.Object, "spec", "revisionActivationPolicy"); p != "Manual" {
		t.Errorf("spec %v", u.Object["spec"])
	}
	// A copy: the old package's spec is not shared.
	_ = unstructured.SetNestedField(u.Object, "x", "spec", "package")
	if old.Source == "x" || old.Object.Object["spec"].(map[string]any)["package"] == "x" {
		t.Error("the spec is shared with the old package")
	}
}

// TestRenameApplyChanged: a package changed since the plan is not
// renamed (exit 4), and nothing is written.
func TestRenameApplyChanged(t *testing.T) {
	c, dyn := fakeClusterDyn(t, customFamily()...)
	r := NewRename(&Config{cluster: c, XPNamespace: "crossplane-system"})
	r.Timeout = time.Minute
	rp, err := r.Plan(context.Background(), "provider/fam-custom")
	if err != nil {
		t.Fatal(err)
	}
	rp.old.CurrentRevision = "fam-custom-zzz" // as if a revision came since
	dyn.ClearActions()
	if _, err := r.Apply(context.Background(), rp); err == nil || !strings.Contains(err.Error(), "its current revision changed") {
		t.Fatalf("apply: %v", err)
	}
	for _, a := range dyn.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			t.Errorf("wrote %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// TestRenameObjectsNowListsDefinitions: what a rename's waits read every
// second, the objects it hands over, costs one LIST of the CRDs however
// many the package installed, not a GET each.
func TestRenameObjectsNowListsDefinitions(t *testing.T) {
	c, dyn := fakeClusterDyn(t, customFamily()...)
	r := NewRename(&Config{cluster: c, XPNamespace: "crossplane-system"})
	rp, err := r.Plan(context.Background(), "provider/fam-custom")
	if err != nil {
		t.Fatal(err)
	}
	dyn.ClearActions()
	now, err := (&handOver{r: r, c: c, rp: rp}).objectsNow(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var reqs []string
	for _, a := range dyn.Actions() {
		reqs = append(reqs, a.GetVerb()+" "+a.GetResource().Resource)
	}
	if strings.Join(reqs, ",") != "list customresourcedefinitions" {
		t.Errorf("requests %v, want one LIST of the CRDs", reqs)
	}
	w := now["customresourcedefinition/widgets.stored.example.org"]
	if len(now) < 2 || w.uid != "crd-widgets" || w.controller() != "fam-custom-aaa" || now["customresourcedefinition/olds.x.example.org"].controller() != "" {
		t.Errorf("objects now %+v", now)
	}
}
