package legacy

import (
	"reflect"
	"testing"
)

func TestImageReferences(t *testing.T) {
	cases := []struct {
		ref, name, tag, base string
		registry             bool
	}{
		{"redis/redis-crossplane-controller:2.0.9", "redis/redis-crossplane-controller", "2.0.9", "redis-crossplane-controller", false},
		{"crossplane/provider-gcp:v0.1.0", "crossplane/provider-gcp", "v0.1.0", "provider-gcp", false},
		{"private-user/image", "private-user/image", "", "image", false},
		{"redis", "redis", "", "redis", false},
		{"quay.io/crossplane/stack:v1", "quay.io/crossplane/stack", "v1", "stack", true},
		{"registry:5000/stack:v1", "registry:5000/stack", "v1", "stack", true},
		{"localhost/stack", "localhost/stack", "", "stack", true},
		{"registry:5000/stack", "registry:5000/stack", "", "stack", true},
		{"crossplane/stack@sha256:abcd", "crossplane/stack", "", "stack", false},
		{"crossplane/stack:v2@sha256:abcd", "crossplane/stack", "v2", "stack", false},
	}
	for _, tc := range cases {
		name, tag := splitImage(tc.ref)
		if name != tc.name || tag != tc.tag || imageBaseName(tc.ref) != tc.base || hasRegistry(tc.ref) != tc.registry {
			t.Errorf("%s: name %q tag %q base %q registry %v; want %q %q %q %v", tc.ref,
				name, tag, imageBaseName(tc.ref), hasRegistry(tc.ref), tc.name, tc.tag, tc.base, tc.registry)
		}
	}
}

// installWith is an install.yaml whose containers have the given images
// ("" leaves the image out), with one init container.
func installWith(images ...string) string {
	s := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: redis-controller
spec:
  template:
    spec:
      initContainers:
      - name: init
        image: busybox:1.36
      containers:
`
	for _, img := range images {
		s += "      - name: c\n"
		if img != "" {
			s += "        image: " + img + "\n"
		}
	}
	return s
}

// podSpec is the controller's pod spec in a record.
func podSpec(t *testing.T, res *Result) map[string]any {
	t.Helper()
	return field(t, res.Package.Object, "spec", "controller", "deployment", "spec", "template", "spec").(map[string]any)
}

func images(t *testing.T, res *Result, list string) []string {
	t.Helper()
	var out []string
	for _, c := range podSpec(t, res)[list].([]any) {
		img, _ := c.(map[string]any)["image"].(string)
		out = append(out, img)
	}
	return out
}

// TestSourcePrefix applies the design's PackageInstall example (a private
// registry source, pull secret, pull policy and service-account
// annotations): images naming no registry get the source, others are left
// alone, and an omitted image is the package image, prefixed too.
func TestSourcePrefix(t *testing.T) {
	files := map[string]string{
		"app.yaml":     minimalApp,
		"install.yaml": installWith("redis/redis-crossplane-controller:2.0.9", "quay.io/crossplane/x:v1", "localhost:5000/y", ""),
	}
	opts := Options{
		Source:                    "private.registry.example.com/",
		Image:                     "private-user/image",
		ImagePullPolicy:           "Always",
		ImagePullSecrets:          []string{"private-registry-secret"},
		ServiceAccountAnnotations: map[string]string{"iam-service-annotation": "special-value"},
	}
	res := mustTranslate(t, regTree(files), opts)
	want := []string{
		"private.registry.example.com/redis/redis-crossplane-controller:2.0.9",
		"quay.io/crossplane/x:v1",
		"localhost:5000/y",
		"private.registry.example.com/private-user/image",
	}
	if got := images(t, res, "containers"); !reflect.DeepEqual(got, want) {
		t.Errorf("container images = %q, want %q", got, want)
	}
	if got := images(t, res, "initContainers"); !reflect.DeepEqual(got, []string{"private.registry.example.com/busybox:1.36"}) {
		t.Errorf("init container images = %q", got)
	}
	pod := podSpec(t, res)
	for _, c := range pod["containers"].([]any) {
		if p := c.(map[string]any)["imagePullPolicy"]; p != "Always" {
			t.Errorf("imagePullPolicy = %v, want Always", p)
		}
	}
	checkFields(t, res.Package.Object, map[string]any{
		"spec.controller.deployment.spec.template.spec.imagePullSecrets": []any{map[string]any{"name": "private-registry-secret"}},
		"spec.serviceAccount.annotations":                                map[string]any{"iam-service-annotation": "special-value"},
		"metadata.name":                                                  "image",
	})

	res = mustTranslate(t, regTree(files), Options{Image: "private-user/image"})
	want = []string{"redis/redis-crossplane-controller:2.0.9", "quay.io/crossplane/x:v1", "localhost:5000/y", "private-user/image"}
	if got := images(t, res, "containers"); !reflect.DeepEqual(got, want) {
		t.Errorf("without a source, images = %q, want %q", got, want)
	}
}

// TestNoImageToFill reports a container left without an image.
func TestNoImageToFill(t *testing.T) {
	res := mustTranslate(t, regTree(map[string]string{"app.yaml": minimalApp, "install.yaml": installWith("")}), Options{Source: "r.example.com"})
	if _, set := podSpec(t, res)["containers"].([]any)[0].(map[string]any)["image"]; set {
		t.Error("image set with no package image to fill it")
	}
	if !hasWarning(res, "install.yaml", "containers[0] has no image") {
		t.Errorf("warnings = %q", res.Warnings)
	}
}

// TestVersionFromImageTag fills an omitted app.yaml version from the
// package image's tag, and reports a version that differs from it.
func TestVersionFromImageTag(t *testing.T) {
	res := mustTranslate(t, regTree(map[string]string{"app.yaml": "title: T\n"}), Options{Image: "crossplane/provider-gcp:v0.1.0"})
	checkFields(t, res.Package.Object, map[string]any{"spec.version": "v0.1.0", "metadata.name": "provider-gcp"})

	res = mustTranslate(t, regTree(map[string]string{"app.yaml": "title: T\nversion: 0.1.0\n"}), Options{Image: "crossplane/provider-gcp:v0.1.0"})
	if len(res.Warnings) != 0 {
		t.Errorf("0.1.0 and tag v0.1.0 should match; warnings = %q", res.Warnings)
	}
	res = mustTranslate(t, regTree(map[string]string{"app.yaml": "title: T\nversion: 0.2.0\n"}), Options{Image: "crossplane/provider-gcp:v0.1.0"})
	checkFields(t, res.Package.Object, map[string]any{"spec.version": "0.2.0"})
	if !hasWarning(res, "app.yaml", `version "0.2.0" does not match the tag`) {
		t.Errorf("warnings = %q", res.Warnings)
	}
}
