package crossplane

import (
	"slices"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/releases"
)

// TestReleaseDeploymentIsTheCharts: the Deployment recorded is labelled
// as Crossplane's Helm chart labels it (appVersion without v, the chart
// name and version), runs the image tagged with v, and reads back as the
// release.
func TestReleaseDeploymentIsTheCharts(t *testing.T) {
	d := ReleaseDeployment("v2.4.2")
	for k, want := range map[string]string{
		"app.kubernetes.io/version": "2.4.2", "helm.sh/chart": "crossplane-2.4.2", "app.kubernetes.io/managed-by": "Helm",
		"app.kubernetes.io/name": "crossplane", "app.kubernetes.io/instance": "crossplane", "app": "crossplane", "release": "crossplane",
	} {
		if got := d.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	spec := d.Spec.Template.Spec
	var images []string
	for _, c := range append(spec.Containers, spec.InitContainers...) {
		if c.Image != "xpkg.crossplane.io/crossplane/crossplane:v2.4.2" {
			t.Errorf("container %s runs %s", c.Name, c.Image)
		}
		images = append(images, c.Image)
	}
	if v, ok := releases.Running(d.Labels, images); v != "v2.4.2" || !ok {
		t.Errorf("read back as %q, %v", v, ok)
	}
	if v, ok := releases.Running(d.Labels, nil); v != "v2.4.2" || !ok {
		t.Errorf("the label read back as %q, %v", v, ok)
	}
}

// TestReleaseDeploymentArgs: the arguments a cluster admin sets (Helm's
// --set args={...}) follow `core start` in the crossplane container, in
// their order; without any the container runs `core start` alone.
func TestReleaseDeploymentArgs(t *testing.T) {
	for _, args := range [][]string{nil, {"--enable-dependency-version-upgrades", "--enable-dependency-version-downgrades"}} {
		c := ReleaseDeployment("v2.4.2", args...).Spec.Template.Spec.Containers[0]
		want := append([]string{"core", "start"}, args...)
		if c.Name != "crossplane" || !slices.Equal(c.Args, want) {
			t.Errorf("args %q: container %s runs %q, want %q", args, c.Name, c.Args, want)
		}
	}
}
