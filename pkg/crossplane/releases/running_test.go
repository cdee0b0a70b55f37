package releases

import "testing"

func TestRunning(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	chart := func(v string) map[string]string { return map[string]string{VersionLabel: v} }
	for _, tc := range []struct {
		name   string
		labels map[string]string
		images []string
		want   string
		ok     bool
	}{
		{"the chart's label, no v", chart("2.4.2"), nil, "v2.4.2", true},
		{"a label with v", chart("v2.4.2"), nil, "v2.4.2", true},
		{"the chart's Deployment", chart("2.4.2"), []string{"xpkg.crossplane.io/crossplane/crossplane:v2.4.2"}, "v2.4.2", true},
		{"the image tag", nil, []string{"xpkg.crossplane.io/crossplane/crossplane:v2.4.2"}, "v2.4.2", true},
		{"a tag without v", nil, []string{"xpkg.crossplane.io/crossplane/crossplane:2.3.4"}, "v2.3.4", true},
		{"a registry port", nil, []string{"registry.local:5000/crossplane/crossplane:v2.3.4"}, "v2.3.4", true},
		{"a mirror host", nil, []string{"mirror.example.com/xpkg/crossplane/crossplane:v2.4.1"}, "v2.4.1", true},
		{"a pre-release", nil, []string{"xpkg.crossplane.io/crossplane/crossplane:v2.4.0-rc.0"}, "v2.4.0-rc.0", true},
		{"a tag pinned by digest", nil, []string{"xpkg.crossplane.io/crossplane/crossplane:v2.4.2@" + digest}, "v2.4.2", true},
		{"a port, a tag and a digest", nil, []string{"registry.local:5000/crossplane:v2.4.2@" + digest}, "v2.4.2", true},
		{"a digest alone: the label decides", chart("2.4.2"), []string{"xpkg.crossplane.io/crossplane/crossplane@" + digest}, "v2.4.2", true},
		{"a port and a digest: the label decides", chart("2.3.4"), []string{"registry.local:5000/crossplane@" + digest}, "v2.3.4", true},
		{"no tag: the label decides", chart("2.4.2"), []string{"registry.local:5000/crossplane/crossplane"}, "v2.4.2", true},
		{"the tag that runs wins over the chart's label", chart("2.4.2"), []string{"xpkg.crossplane.io/crossplane/crossplane:v2.4.1"}, "v2.4.1", true},
		{"latest: the label decides", chart("2.3.4"), []string{"crossplane/crossplane:latest"}, "v2.3.4", true},
		{"the first versioned image", nil, []string{"busybox:latest", "crossplane/crossplane:v2.3.4"}, "v2.3.4", true},
		{"no version: the label as read", chart("main"), []string{"crossplane/crossplane:latest"}, "main", true},
		{"no version and no label: the tag as read", nil, []string{"crossplane/crossplane:latest"}, "latest", true},
		{"a digest alone and no label", nil, []string{"crossplane/crossplane@" + digest}, "", false},
		{"nothing", nil, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Running(tc.labels, tc.images)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Running(%v, %v) = %q, %v; want %q, %v", tc.labels, tc.images, got, ok, tc.want, tc.ok)
			}
		})
	}
}
