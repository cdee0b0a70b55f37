package action

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

const xpNS = "crossplane-system"

// releaseLists are the kinds the release check lists beyond listKinds.
var releaseLists = map[schema.GroupVersionResource]string{
	{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "deploymentruntimeconfigs"}: "DeploymentRuntimeConfigList",
	{Group: "pkg.crossplane.io", Version: "v1alpha1", Resource: "controllerconfigs"}:       "ControllerConfigList",
}

// xpDeployment is Crossplane's Deployment as its Helm chart labels it.
func xpDeployment(version string) *unstructured.Unstructured {
	u := obj("apps/v1", "Deployment", "crossplane", nil)
	u.SetNamespace(xpNS)
	u.SetLabels(map[string]string{"app.kubernetes.io/version": version})
	return u
}

// coreCRD is a CRD named plural.group serving versions, storage the last,
// whose objects are stored at stored.
func coreCRD(name string, versions, stored []string) *unstructured.Unstructured {
	plural, group, _ := strings.Cut(name, ".")
	var vs, st []any
	for i, v := range versions {
		vs = append(vs, map[string]any{"name": v, "served": true, "storage": i == len(versions)-1})
	}
	for _, v := range stored {
		st = append(st, v)
	}
	return obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", name, map[string]any{
		"spec":   map[string]any{"group": group, "scope": "Cluster", "names": map[string]any{"plural": plural, "kind": "Thing"}, "versions": vs},
		"status": map[string]any{"storedVersions": st},
	})
}

func runtimeConfig(name, serviceAccount string) *unstructured.Unstructured {
	spec := map[string]any{}
	if serviceAccount != "" {
		spec["serviceAccountTemplate"] = map[string]any{"metadata": map[string]any{"name": serviceAccount}}
	}
	return obj("pkg.crossplane.io/v1beta1", "DeploymentRuntimeConfig", name, map[string]any{"spec": spec})
}

// releaseDoctor runs doctor --crossplane-version target (offline unless
// a registry is used) on a cluster holding objs.
func releaseDoctor(t *testing.T, target string, offline bool, objs ...*unstructured.Unstructured) (*Report, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	c, dyn := fakeClusterWithLists(t, releaseLists, objs...)
	d := NewDoctor(&Config{cluster: c, XPNamespace: xpNS})
	d.CrossplaneVersion, d.NoRegistry = target, offline
	rep, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep, dyn
}

// TestDoctorReleaseHeading: the move heads the text and is the document's
// "crossplane"; a patch step finds nothing; without the flag neither is
// there. Crossplane's Deployment, the CRDs: one read each.
func TestDoctorReleaseHeading(t *testing.T) {
	objs := append(healthyNop(), xpDeployment("2.4.1"), coreCRD("providers.pkg.crossplane.io", []string{"v1"}, []string{"v1"}))
	r, dyn := releaseDoctor(t, "2.4.2", true, objs...)
	if len(r.Unread) != 0 {
		t.Fatalf("unread: %v", r.Unread)
	}
	if len(r.Findings) != 1 || r.Findings[0].Rule != findings.RuleCrossplaneConstraint || *r.Findings[0].Count != 1 {
		t.Errorf("a patch step finds %+v, want only the offline note", r.Findings)
	}
	if r.Packages != 1 || r.Revisions != 1 || r.LockEntries != 0 {
		t.Errorf("read %d packages, %d revisions, %d Lock entries; want 1, 1, 0", r.Packages, r.Revisions, r.LockEntries)
	}
	doc, _ := json.Marshal(r)
	if !strings.Contains(string(doc), `"crossplane":{"running":"v2.4.1","target":"v2.4.2","deployment":"crossplane-system/crossplane"}`) {
		t.Errorf("json: %s", doc)
	}
	got := requests(dyn.Actions())
	if got["get deployments"] != 1 || got["list customresourcedefinitions"] != 1 || got["list deploymentruntimeconfigs"] != 1 {
		t.Errorf("requests %v", got)
	}

	r = doctor(t, objs...)
	doc, _ = json.Marshal(r)
	if r.Crossplane != nil || strings.Contains(string(doc), "crossplane\"") {
		t.Errorf("without --crossplane-version: %+v\n%s", r.Crossplane, doc)
	}
}

// TestDoctorReleaseRunningAsTheChartRecordsIt: the running release is
// the image's tag, which an image.tag value may set apart from the
// chart's label; pinned by digest alone, the chart's label (no v).
func TestDoctorReleaseRunningAsTheChartRecordsIt(t *testing.T) {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct{ label, image, want string }{
		{"2.4.2", "registry.example.org:5000/crossplane/crossplane:v2.4.1", "v2.4.1"},
		{"2.4.1", "xpkg.crossplane.io/crossplane/crossplane" + digest, "v2.4.1"},
		{"2.4.1", "xpkg.crossplane.io/crossplane/crossplane:v2.4.1" + digest, "v2.4.1"},
	} {
		r, _ := releaseDoctor(t, "v2.4.2", true, chartDeployment(tc.label, tc.image))
		if r.Crossplane == nil || r.Crossplane.Running != tc.want {
			t.Errorf("label %s, image %s: running %+v, want %s (unread %v)", tc.label, tc.image, r.Crossplane, tc.want, r.Unread)
		}
	}
}

// TestDoctorReleaseRunningUnread: no Crossplane Deployment is a read that
// failed (exit 1), said with --crossplane-namespace; what needs no running
// release is still checked.
func TestDoctorReleaseRunningUnread(t *testing.T) {
	r, _ := releaseDoctor(t, "v2.4.2", true, coreCRD("compositionrevisions.apiextensions.crossplane.io", []string{"v1"}, []string{"v1beta1", "v1"}))
	if len(r.Unread) != 1 || !strings.Contains(r.Unread[0], "no Deployment crossplane in crossplane-system") || !strings.Contains(r.Unread[0], "--crossplane-namespace") {
		t.Errorf("unread %v", r.Unread)
	}
	want(t, r, findings.RuleCrossplaneStored, 1, findings.Blocking, "migrate it by hand")
	if x := r.Crossplane; x == nil || x.Running != "" || x.Deployment != "crossplane-system/crossplane" || x.Target != "v2.4.2" {
		t.Errorf("crossplane %+v, want no running version, deployment crossplane-system/crossplane, target v2.4.2", x)
	}
}

func TestDoctorReleaseBadVersion(t *testing.T) {
	if err := ValidateCrossplaneVersion("v2.4"); err == nil {
		t.Error("v2.4 is taken for a release")
	}
	for _, ok := range []string{"v2.4.2", "2.4.2"} {
		if err := ValidateCrossplaneVersion(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	d := NewDoctor(&Config{cluster: fakeCluster(t), XPNamespace: xpNS})
	d.CrossplaneVersion = "latest"
	if _, err := d.Run(context.Background()); err == nil {
		t.Error("doctor ran to latest")
	}
}

// TestDoctorReleaseDirection: downgrades and skipped minors block, naming
// the releases to go through; single steps do not.
func TestDoctorReleaseDirection(t *testing.T) {
	for _, c := range []struct {
		running, target, rule, says string
	}{
		{"v2.4.2", "v2.3.4", findings.RuleCrossplaneDowngrade, "v2.3.4 is older than the running v2.4.2: Crossplane does not support downgrades"},
		{"v2.1.3", "v2.4.2", findings.RuleCrossplaneSkipped, "v2.1.3 to v2.4.2 skips v2.2, v2.3: Crossplane supports upgrading one minor version at a time (crossplane#6864)"},
		{"v1.19.3", "v2.0.1", findings.RuleCrossplaneSkipped, "upgrade to v1.20 (the latest patch of each) and then to v2.0.1"},
		{"v1.20.3", "v2.1.0", findings.RuleCrossplaneSkipped, "skips v2.0:"},
		{"v2.4.2", "v3.0.0", findings.RuleCrossplaneSkipped, "is no supported upgrade: Crossplane upgrades one minor version at a time, and v1.20 to v2.0 is the one step"},
		{"v2.3.4", "v2.4.2", "", ""},
		{"v1.20.3", "v2.0.1", "", ""},
		{"v2.4.0", "v2.4.2", "", ""},
		{"v2.4.2", "v2.4.2", "", ""},
	} {
		r, _ := releaseDoctor(t, c.target, true, xpDeployment(c.running))
		for _, rule := range []string{findings.RuleCrossplaneDowngrade, findings.RuleCrossplaneSkipped} {
			n := 0
			if rule == c.rule {
				n = 1
			}
			t.Run(c.running+"-"+c.target+"-"+rule, func(t *testing.T) { want(t, r, rule, n, findings.Blocking, c.says) })
		}
	}
}

// TestDoctorReleaseUnknown: a target, a running release or a pre-release
// the table cannot vouch for is a warning; the rest is checked.
func TestDoctorReleaseUnknown(t *testing.T) {
	r, _ := releaseDoctor(t, "v2.5.0", true, xpDeployment("v2.4.2"), coreCRD("compositionrevisions.apiextensions.crossplane.io", []string{"v1"}, []string{"v1beta1", "v1"}))
	want(t, r, findings.RuleCrossplaneUnknown, 1, findings.Warning, "release table knows Crossplane v1.14 to v2.4, not v2.5.0", "checked are the minor step")
	want(t, r, findings.RuleCrossplaneStored, 0, findings.Blocking) // not known of v2.5
	r, _ = releaseDoctor(t, "v2.4.0-rc.0", true, xpDeployment("v2.3.4"))
	want(t, r, findings.RuleCrossplaneUnknown, 1, findings.Warning, "v2.4.0-rc.0 is a pre-release")
	r, _ = releaseDoctor(t, "v2.4.2", true, xpDeployment("master"))
	want(t, r, findings.RuleCrossplaneUnknown, 1, findings.Warning, `Crossplane runs as "master"`)
	r, _ = releaseDoctor(t, "v1.14.0", true, xpDeployment("v1.13.2"))
	want(t, r, findings.RuleCrossplaneUnknown, 1, findings.Warning, "not the running v1.13.2")
	r, _ = releaseDoctor(t, "v2.4.2", true, xpDeployment("v2.3.4"))
	want(t, r, findings.RuleCrossplaneUnknown, 0, findings.Warning)
}

// TestDoctorReleaseKnownBad: v2.4.0 and v2.4.1 block where a
// DeploymentRuntimeConfig pins its ServiceAccount (crossplane#7838),
// naming who uses it; warn where none does; v2.4.2 is fine.
func TestDoctorReleaseKnownBad(t *testing.T) {
	prov := withSpec(pkgObj("Provider", "provider-aws", "r.example.org/org/provider-aws:v1", "provider-aws-1"), "runtimeConfigRef", map[string]any{"name": "irsa"})
	fn := pkgObj("Function", "fn", "r.example.org/org/fn:v1", "fn-1")
	r, dyn := releaseDoctor(t, "v2.4.1", true, xpDeployment("v2.4.0"), prov, fn, runtimeConfig("irsa", "provider-aws"), runtimeConfig("default", ""))
	f := want(t, r, findings.RuleCrossplaneKnownBad, 1, findings.Blocking, "Crossplane v2.4.1 has a known defect (crossplane/crossplane#7838, fixed in v2.4.2)",
		"and here DeploymentRuntimeConfig irsa names ServiceAccount provider-aws (for provider/provider-aws): upgrade to v2.4.2 instead")
	if strings.Contains(f[0].Message, "function/fn") {
		t.Errorf("the function uses the default config, which pins nothing: %s", f[0].Message)
	}
	if got := requests(dyn.Actions())["list deploymentruntimeconfigs"]; got != 1 {
		t.Errorf("%d lists of DeploymentRuntimeConfigs", got)
	}
	r, _ = releaseDoctor(t, "v2.4.0", true, xpDeployment("v2.4.0"), fn, runtimeConfig("default", ""))
	want(t, r, findings.RuleCrossplaneKnownBad, 1, findings.Warning, "none does here, but one made later would: upgrade to v2.4.2 instead")
	r, _ = releaseDoctor(t, "v2.4.2", true, xpDeployment("v2.4.0"), prov, runtimeConfig("irsa", "provider-aws"))
	want(t, r, findings.RuleCrossplaneKnownBad, 0, findings.Warning)

	c, dyn := fakeClusterWithLists(t, releaseLists, xpDeployment("v2.4.0"))
	dyn.PrependReactor("list", "deploymentruntimeconfigs", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "pkg.crossplane.io", Resource: "deploymentruntimeconfigs"}, "", fmt.Errorf("RBAC"))
	})
	d := NewDoctor(&Config{cluster: c, XPNamespace: xpNS})
	d.CrossplaneVersion, d.NoRegistry = "v2.4.1", true
	r, _ = d.Run(context.Background())
	want(t, r, findings.RuleCrossplaneKnownBad, 1, findings.Warning, "whether one does here could not be read")
	if len(r.Unread) != 1 || !strings.Contains(r.Unread[0], "DeploymentRuntimeConfigs") {
		t.Errorf("unread %v", r.Unread)
	}
}

// TestDoctorReleaseStoredVersions: a stored version the target does not
// define blocks, with what migrates it: the running release's start, a
// later patch of its line, or a hand.
func TestDoctorReleaseStoredVersions(t *testing.T) {
	const comprev, envcfg = "compositionrevisions.apiextensions.crossplane.io", "environmentconfigs.apiextensions.crossplane.io"
	crds := []*unstructured.Unstructured{
		coreCRD(comprev, []string{"v1beta1", "v1"}, []string{"v1beta1", "v1"}),
		coreCRD(envcfg, []string{"v1alpha1", "v1beta1"}, []string{"v1beta1"}),
		coreCRD("widgets.example.org", []string{"v1"}, []string{"v0", "v1"}), // not Crossplane's
	}
	r, _ := releaseDoctor(t, "v2.0.1", true, append(crds, xpDeployment("v1.20.0"))...)
	f := want(t, r, findings.RuleCrossplaneStored, 1, findings.Blocking, "CRD "+comprev+" stores objects at v1beta1, which Crossplane v2.0.1 no longer defines (it defines v1)",
		"Crossplane does not start (crossplane#6717)", "Crossplane v1.20.2 and later patches of v1.20 migrate it when they start: upgrade to the latest v1.20 patch first")
	if f[0].Object != comprev {
		t.Errorf("object %q", f[0].Object)
	}
	r, _ = releaseDoctor(t, "v2.0.1", true, append(crds, xpDeployment("v1.20.5"))...)
	want(t, r, findings.RuleCrossplaneStored, 1, findings.Blocking, "the running v1.20.5 migrates it when it starts: restart it (kubectl rollout restart deployment/crossplane -n crossplane-system)")
	crds[1] = coreCRD(envcfg, []string{"v1alpha1", "v1beta1"}, []string{"v1alpha1", "v1beta1"})
	crds[0] = coreCRD(comprev, []string{"v1beta1", "v1"}, []string{"v1"})
	r, _ = releaseDoctor(t, "v2.0.1", true, append(crds, xpDeployment("v1.20.5"))...)
	want(t, r, findings.RuleCrossplaneStored, 1, findings.Blocking, "CRD "+envcfg+" stores objects at v1alpha1", "the running v1.20.5 migrates it")
	// A v2 cluster that kept v1beta1 CompositionRevisions: only a hand helps.
	r, _ = releaseDoctor(t, "v2.1.0", true, coreCRD(comprev, []string{"v1"}, []string{"v1beta1", "v1"}), xpDeployment("v2.0.4"))
	want(t, r, findings.RuleCrossplaneStored, 1, findings.Blocking, "migrate it by hand: write every object back at the storage version v1 (kubectl get "+comprev+" -A -o json | kubectl replace -f -), then remove v1beta1")
	r, _ = releaseDoctor(t, "v2.4.2", true, coreCRD(comprev, []string{"v1"}, []string{"v1"}), coreCRD(envcfg, []string{"v1beta1"}, []string{"v1beta1"}), xpDeployment("v2.3.4"))
	want(t, r, findings.RuleCrossplaneStored, 0, findings.Blocking)
}

// TestDoctorReleaseRemovedKinds: on the move to v2.0, ControllerConfigs
// that exist are a warning, and a package that takes its runtime's
// settings from one blocks; after v2.0 neither is news.
func TestDoctorReleaseRemovedKinds(t *testing.T) {
	prov := withSpec(pkgObj("Provider", "provider-aws", "r.example.org/org/provider-aws:v1", "provider-aws-1"), "controllerConfigRef", map[string]any{"name": "irsa"})
	objs := []*unstructured.Unstructured{prov, xpDeployment("v1.20.5"),
		coreCRD("controllerconfigs.pkg.crossplane.io", []string{"v1alpha1"}, []string{"v1alpha1"}),
		obj("pkg.crossplane.io/v1alpha1", "ControllerConfig", "irsa", nil), obj("pkg.crossplane.io/v1alpha1", "ControllerConfig", "other", nil)}
	r, _ := releaseDoctor(t, "v2.0.1", true, objs...)
	fs := ruleFindings(r, findings.RuleCrossplaneRemovedKind)
	if len(fs) != 2 || fs[0].Severity != findings.Warning || !strings.Contains(fs[0].Message, "2 objects of kind ControllerConfig exist, a kind Crossplane v2.0.1 no longer has") || *fs[0].Count != 2 ||
		fs[1].Severity != findings.Blocking || !strings.Contains(fs[1].Message, "provider/provider-aws takes its runtime's settings from ControllerConfig irsa (spec.controllerConfigRef), which Crossplane v2.0.1 drops with the kind") {
		t.Errorf("findings %+v", fs)
	}
	objs[1] = xpDeployment("v2.0.4")
	r, _ = releaseDoctor(t, "v2.1.0", true, objs...)
	want(t, r, findings.RuleCrossplaneRemovedKind, 0, findings.Warning)
}

// TestDoctorReleaseNewRevisions: v2.3 to v2.4 renames every revision:
// one info naming the runtimes that restart, Manual packages that go
// offline (a runtime blocks, a configuration warns), and the twin risk;
// a patch step within v2.4 none of it.
func TestDoctorReleaseNewRevisions(t *testing.T) {
	manual := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		return withSpec(u, "revisionActivationPolicy", "Manual")
	}
	objs := []*unstructured.Unstructured{
		pkgObj("Provider", "org-provider-nop", nopRepo+":v0.2.0", "nop-1"), pkgRev("Provider", "org-provider-nop", "nop-1", nopRepo+":v0.2.0", 1, "Active"),
		pkgObj("Function", "fn", fnRepo+":v0.1.0", "fn-1"), pkgRev("Function", "fn", "fn-1", fnRepo+":v0.1.0", 1, "Active"),
		pkgObj("Configuration", "cfg", "r.example.org/org/cfg:v1", "cfg-1"), pkgRev("Configuration", "cfg", "cfg-1", "r.example.org/org/cfg:v1", 1, "Active"),
		manual(pkgObj("Provider", "hand", "r.example.org/org/provider-hand:v1", "hand-2")),
		pkgRev("Provider", "hand", "hand-1", "r.example.org/org/provider-hand:v1", 1, "Active"),
		pkgRev("Provider", "hand", "hand-2", "r.example.org/org/provider-hand:v2", 2, ""),
		manual(pkgObj("Configuration", "hand-cfg", "r.example.org/org/hand-cfg:v1", "hand-cfg-1")),
		pkgRev("Configuration", "hand-cfg", "hand-cfg-1", "r.example.org/org/hand-cfg:v1", 1, "Active"),
		manual(pkgObj("Function", "never", "r.example.org/org/never:v1", "never-1")), pkgRev("Function", "never", "never-1", "r.example.org/org/never:v1", 1, ""),
		pkgObj("Provider", "custom-x", "r.example.org/org/provider-x:v1", "custom-x-1"), pkgRev("Provider", "custom-x", "custom-x-1", "r.example.org/org/provider-x:v1", 1, "Active"),
		lock(entry("cfg-1", "Configuration", "r.example.org/org/cfg", "v1", "r.example.org/org/provider-x", ">=v1"),
			entry("custom-x-1", "Provider", "r.example.org/org/provider-x", "v1")),
		xpDeployment("v2.3.4"),
	}
	r, _ := releaseDoctor(t, "v2.4.2", true, objs...)
	f := want(t, r, findings.RuleCrossplaneRevisions, 1, findings.Info,
		"Crossplane v2.4 names revisions by a hash of the image digest and the package's generation, v2.3 by the image digest: no current revision keeps its name, so when v2.4.2 starts the package manager makes each of these 4 packages a new revision",
		"3 restart their runtimes (a new Deployment each: nothing reconciles what one manages until its pods are ready): provider/custom-x, provider/org-provider-nop, function/fn",
		"a new revision only: configuration/cfg")
	if *f[0].Count != 4 {
		t.Errorf("count %d", *f[0].Count)
	}
	fs := ruleFindings(r, findings.RuleCrossplaneManual)
	if len(fs) != 2 || fs[0].Object != "provider/hand" || fs[0].Severity != findings.Blocking || fs[1].Object != "configuration/hand-cfg" || fs[1].Severity != findings.Warning {
		t.Fatalf("manual-offline %+v", fs)
	}
	for _, p := range []string{"deactivates the running hand-1 and leaves the new one inactive: its runtime stops and nothing reconciles what it manages until someone activates it",
		"kubectl xpkg upgrade provider/hand --activate", "set its revisionActivationPolicy to Automatic before upgrading"} {
		if !strings.Contains(fs[0].Message, p) {
			t.Errorf("manual-offline does not say %q:\n%s", p, fs[0].Message)
		}
	}
	if !strings.Contains(fs[1].Message, "its definitions and compositions stay, but no revision controls them") {
		t.Errorf("configuration: %s", fs[1].Message)
	}
	want(t, r, findings.RuleCrossplaneTwin, 1, findings.Blocking, "provider/custom-x installs r.example.org/org/provider-x, which configuration/cfg depend(s) on, under a name other than the resolver's (org-provider-x)",
		"the resolver installs it again as provider/org-provider-x", "devantler-tech/platform#3454", "kubectl xpkg rename provider/custom-x")
	want(t, r, findings.RuleTwinName, 1, findings.Warning) // doctor's own rule still says it

	objs[len(objs)-1] = xpDeployment("v2.4.1")
	r, _ = releaseDoctor(t, "v2.4.2", true, objs...)
	for _, rule := range []string{findings.RuleCrossplaneRevisions, findings.RuleCrossplaneManual, findings.RuleCrossplaneTwin} {
		want(t, r, rule, 0, findings.Info)
	}
}

// pushMeta pushes a package whose meta object has the Crossplane
// constraint given ("" none) and returns its reference.
func pushMeta(t *testing.T, reg *fixture.Registry, repo, constraint string) string {
	t.Helper()
	spec := "{}"
	if constraint != "" {
		spec = fmt.Sprintf("{crossplane: {version: %q}}", constraint)
	}
	img, err := fixture.Image([]byte(fmt.Sprintf("apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: %s\nspec: %s\n", repo, spec)))
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/org/" + repo + ":v1.0.0"
	if err := fixture.Push(ref, img); err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestDoctorReleaseConstraints: each package's constraint, read from the
// image its active revision runs (each image once), against the target;
// one that ignores constraints is not read; one that cannot be read warns;
// --offline reads nothing and says so once.
func TestDoctorReleaseConstraints(t *testing.T) {
	reg := fixture.NewRegistry(t)
	old := pushMeta(t, reg, "provider-old", ">=v1.14.0 <v2.4.0")
	fine := pushMeta(t, reg, "provider-fine", ">=v2.0.0")
	free := pushMeta(t, reg, "provider-free", "")
	missing := reg.Host + "/org/provider-missing:v1.0.0"
	ignoring := withSpec(pkgObj("Provider", "ignoring", old, "ignoring-1"), "ignoreCrossplaneConstraints", true)
	objs := []*unstructured.Unstructured{
		// Runs old's image: its spec already names fine's (Manual, not activated yet).
		pkgObj("Provider", "old", fine, "old-2"), pkgRev("Provider", "old", "old-1", old, 1, "Active"), pkgRev("Provider", "old", "old-2", fine, 2, ""),
		pkgObj("Provider", "fine", fine, "fine-1"), pkgRev("Provider", "fine", "fine-1", fine, 1, "Active"),
		pkgObj("Provider", "fine-too", fine, "fine-too-1"), pkgRev("Provider", "fine-too", "fine-too-1", fine, 1, "Active"),
		pkgObj("Provider", "free", free, "free-1"), pkgRev("Provider", "free", "free-1", free, 1, "Active"),
		pkgObj("Provider", "missing", missing, "missing-1"),
		ignoring, pkgRev("Provider", "ignoring", "ignoring-1", old, 1, "Active"),
		xpDeployment("v2.3.4"),
	}
	reg.Reset()
	r, _ := releaseDoctor(t, "v2.4.2", false, objs...)
	// In the order of the packages: missing, then old.
	fs := want(t, r, findings.RuleCrossplaneConstraint, 2, findings.Warning, "provider/missing's Crossplane constraint could not be read: "+missing+" cannot be read",
		"check it against v2.4.2 yourself (kubectl xpkg inspect "+missing+")")
	if f := fs[1]; f.Severity != findings.Blocking || f.Object != "provider/old" {
		t.Errorf("the excluded package: %+v", f)
	}
	for _, p := range []string{"provider/old (" + old + ") needs Crossplane >=v1.14.0 <v2.4.0, which excludes v2.4.2",
		"marks the revision unhealthy (incompatible Crossplane version)", "first upgrade provider/old to a version that admits v2.4.2"} {
		if !strings.Contains(fs[1].Message, p) {
			t.Errorf("crossplane-constraint does not say %q:\n%s", p, fs[1].Message)
		}
	}
	if n := reg.Count("GET", "/manifests/v1.0.0"); n != 4 {
		t.Errorf("%d manifest reads, want 4 (old, fine once for two packages, free, missing; ignoring not read): %v", n, reg.Requests())
	}

	reg.Reset()
	r, _ = releaseDoctor(t, "v2.4.2", true, objs...)
	f := want(t, r, findings.RuleCrossplaneConstraint, 1, findings.Warning, "--offline: the Crossplane constraints of 5 packages", "were not read, and the cluster records them nowhere else")
	if *f[0].Count != 5 || len(reg.Requests()) != 0 {
		t.Errorf("count %d, registry requests %v", *f[0].Count, reg.Requests())
	}
}
