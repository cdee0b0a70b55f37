package e2e

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// TestInstallFieldsReachThePackageManager: each spec field install sets is
// taken up by the real package manager: common labels and annotations on
// the objects it installs, the runtime config, pull policy and Crossplane
// constraint override on the revision, and a configuration installed
// without its dependencies.
func TestInstallFieldsReachThePackageManager(t *testing.T) {
	env, reg, c, x := start(t)
	e2e := reg.Host + "/e2e/crossplane-contrib/"
	const (
		prov = "fields-nop"
		cfg  = "fields-stored"
	)
	ctx := context.Background()
	t.Cleanup(func() {
		clitest.New(t).WithEnv(env).Run("uninstall", "configuration/"+cfg, "provider/"+prov, "--force", "--yes", "--wait=2m")
	})

	x.Run("install", "provider", e2e+"provider-nop:v0.4.0", prov, "--wait=5m",
		"--common-labels", "team=platform,tier=one", "--common-annotations", "owner=platform-team",
		"--runtime-config", "default", "--package-pull-policy", "Always", "--ignore-crossplane-constraints").Succeeds(t)
	p := c.get("providers", prov)
	rev, _, _ := unstructured.NestedString(p.Object, "status", "currentRevision")
	r := c.getRevision("providerrevisions", rev)
	for path, want := range map[string]any{
		"spec.commonLabels.team":           "platform",
		"spec.commonAnnotations.owner":     "platform-team",
		"spec.runtimeConfigRef.name":       "default",
		"spec.packagePullPolicy":           "Always",
		"spec.ignoreCrossplaneConstraints": true,
	} {
		if got, _, _ := unstructured.NestedFieldNoCopy(r.Object, splitPath(path)...); got != want {
			t.Errorf("revision %s %s = %v, want %v", rev, path, got, want)
		}
	}
	// The objects the revision installed carry the common labels and
	// annotations.
	mrd, err := c.dyn.Resource(mrds).Get(ctx, "nopresources.nop.crossplane.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := mrd.GetLabels(); l["team"] != "platform" || l["tier"] != "one" {
		t.Errorf("the MRD's labels: %v", l)
	}
	if a := mrd.GetAnnotations(); a["owner"] != "platform-team" {
		t.Errorf("the MRD's annotations: %v", a)
	}

	// Without dependency resolution, the configuration's provider is not
	// installed: once the configuration is healthy, the package manager
	// has made the pass that would have put the dependency in the Lock.
	x.Run("install", "configuration", e2e+"configuration-stored:v1.0.0", cfg, "--skip-dependency-resolution", "--wait=5m").Succeeds(t)
	u := c.get("configurations", cfg)
	rev, _, _ = unstructured.NestedString(u.Object, "status", "currentRevision")
	cr := c.getRevision("configurationrevisions", rev)
	if cr == nil {
		t.Fatalf("the healthy configuration has no revision %q", rev)
	}
	if skip, _, _ := unstructured.NestedBool(cr.Object, "spec", "skipDependencyResolution"); !skip {
		t.Errorf("the configuration's revision does not skip dependency resolution: %v", cr.Object["spec"])
	}
	if got := c.lockEntries(e2e + "provider-stored"); len(got) != 0 {
		t.Errorf("the Lock holds %v for the dependency despite --skip-dependency-resolution", got)
	}
	if u := c.get("providers", "e2e-crossplane-contrib-provider-stored"); u != nil {
		t.Errorf("the dependency was installed despite --skip-dependency-resolution")
	}
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := range len(p) {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}
