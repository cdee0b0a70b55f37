package releases

import (
	"github.com/Masterminds/semver/v3"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// VersionLabel is the label Crossplane's Helm chart sets on its
// Deployment: the chart's appVersion, which its release packaging sets to
// the chart version, without a leading v ("2.4.2"; _helpers.tpl,
// crossplane.labels).
const VersionLabel = "app.kubernetes.io/version"

// Running reads the release a Crossplane Deployment runs from what the
// Deployment records: its labels and its containers' images. The image
// tag is what runs (the chart tags it "v" + appVersion unless
// image.tag overrides it), so a tag that is a version decides; the label
// decides for an image without one (pinned by digest alone, or tagged
// "latest"). The answer is canonical ("v2.4.2") whenever a version was
// found, else the label or tag as read, so that a message can show it;
// ok is false when the Deployment records neither.
func Running(labels map[string]string, images []string) (release string, ok bool) {
	var tags []string
	for _, image := range images {
		if tag := reference.Tag(image); tag != "" {
			if v, err := Parse(tag); err == nil {
				return Name(v), true
			}
			tags = append(tags, tag)
		}
	}
	label := labels[VersionLabel]
	if v, err := Parse(label); err == nil {
		return Name(v), true
	}
	if label != "" {
		return label, true
	}
	if len(tags) > 0 {
		return tags[0], true
	}
	return "", false
}

// Name is how kubectl xpkg writes a Crossplane release: v and the
// semantic version, as Crossplane tags its releases ("v2.4.2").
func Name(v *semver.Version) string { return "v" + v.String() }
