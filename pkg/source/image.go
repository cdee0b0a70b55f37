package source

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The xpkg specification's layer annotation.
const (
	AnnotationKey = "io.crossplane.xpkg"
	BaseLayer     = "base"
)

// DefaultPlatform is the image the package manager picks from a
// multi-platform index.
var DefaultPlatform = v1.Platform{OS: "linux", Architecture: "amd64"}

// selectFromIndex applies the index rules: at least one manifest; one is
// used whatever its platform; of several, the one for platform.
func selectFromIndex(idx v1.ImageIndex, platform v1.Platform, what string) (v1.Image, string, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, "", fmt.Errorf("read image index of %s: %w", what, err)
	}
	if len(im.Manifests) == 0 {
		return nil, "", fmt.Errorf("the image index of %s has no manifests: an xpkg index must reference at least one", what)
	}
	pick := 0
	if len(im.Manifests) > 1 {
		pick = slices.IndexFunc(im.Manifests, func(d v1.Descriptor) bool {
			return d.Platform != nil && d.Platform.Satisfies(platform)
		})
		if pick < 0 {
			return nil, "", fmt.Errorf("the image index of %s has no manifest for %s (it has %s): choose one with --platform",
				what, platform.String(), platforms(im.Manifests))
		}
	}
	d := im.Manifests[pick]
	if d.MediaType.IsIndex() {
		return nil, "", fmt.Errorf("the image index of %s points to another index (%s): nested indexes are not xpkg images", what, d.Digest)
	}
	img, err := idx.Image(d.Digest)
	if err != nil {
		return nil, "", fmt.Errorf("read image %s of %s: %w", d.Digest, what, err)
	}
	if err := checkManifest(img, d.Digest, "the manifest "+d.Digest.String()+" of "+what); err != nil {
		return nil, "", err
	}
	note := fmt.Sprintf("image index with one manifest: used %s", d.Digest)
	if len(im.Manifests) > 1 {
		note = fmt.Sprintf("image index with %d manifests: chose %s (%s)", len(im.Manifests), platform.String(), d.Digest)
	}
	return img, note, nil
}

func platforms(ds []v1.Descriptor) string {
	var out []string
	for _, d := range ds {
		if d.Platform == nil {
			out = append(out, "no platform")
			continue
		}
		out = append(out, d.Platform.String())
	}
	return strings.Join(out, ", ")
}

// layerChoice is the layer the base-layer rules select; nil means the
// image's flattened filesystem.
type layerChoice struct {
	layer v1.Layer
	rule  string
}

// selectLayer applies the layer rules: at most one layer annotated
// io.crossplane.xpkg: base, and then only that layer is read. Image tarballs
// lose manifest annotations, so crossplane xpkg build also labels the image
// config with io.crossplane.xpkg:<layer digest>: base; checkConfig reads
// those when the manifest has no annotation. Without either, the flattened
// filesystem of all layers is used.
func selectLayer(img v1.Image, what string) (layerChoice, error) {
	m, err := img.Manifest()
	if err != nil {
		return layerChoice{}, fmt.Errorf("read manifest of %s: %w", what, err)
	}
	var base []v1.Hash
	for _, l := range m.Layers {
		if l.Annotations[AnnotationKey] == BaseLayer {
			base = append(base, l.Digest)
		}
	}
	rule := "base layer annotated in the manifest"
	if len(base) == 0 {
		if base, err = labelledLayers(img, what); err != nil {
			return layerChoice{}, err
		}
		rule = "base layer labelled in the image config"
	}
	switch len(base) {
	case 0:
		return layerChoice{rule: fmt.Sprintf("no base layer annotation: flattened filesystem of %d layers", len(m.Layers))}, nil
	case 1:
		l, err := img.LayerByDigest(base[0])
		if err != nil {
			return layerChoice{}, fmt.Errorf("%s: base layer %s: %w", what, base[0], err)
		}
		return layerChoice{layer: l, rule: rule}, nil
	}
	return layerChoice{}, fmt.Errorf("%s has %d layers annotated %s: %s: at most one is allowed", what, len(base), AnnotationKey, BaseLayer)
}

// MaxConfigBytes bounds an image config blob: it is kilobytes (labels,
// history); megabytes are no image config to read whole.
const MaxConfigBytes = 1 << 20

// checkConfigSize refuses, before it is fetched, a config blob whose
// manifest says it is larger than MaxConfigBytes (the blob's size is then
// verified as it is read).
func checkConfigSize(img v1.Image, what string) error {
	m, err := img.Manifest()
	if err != nil {
		return fmt.Errorf("read manifest of %s: %w", what, err)
	}
	if m.Config.Size > MaxConfigBytes {
		return fmt.Errorf("the image config of %s is %d bytes: an image config is kilobytes, and more than %d bytes is refused", what, m.Config.Size, MaxConfigBytes)
	}
	return nil
}

// checkManifest checks a manifest read by digest (an OCI layout reads it
// from disk unchecked) against that digest.
func checkManifest(m interface{ RawManifest() ([]byte, error) }, want v1.Hash, what string) error {
	raw, err := m.RawManifest()
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	return CheckDigest(raw, want, what)
}

// configFile reads the image config, no bigger than MaxConfigBytes, and
// checks it against the manifest's config descriptor before parsing it: a
// config says which layer is the package and what its layers hash to.
func configFile(img v1.Image, what string) (*v1.ConfigFile, error) {
	if err := checkConfigSize(img, what); err != nil {
		return nil, err
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("read manifest of %s: %w", what, err)
	}
	want := m.Config.Digest // an image tarball's is computed: its layers are checked against the diff IDs the config lists
	raw, err := img.RawConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read image config of %s: %w", what, err)
	}
	if len(raw) > MaxConfigBytes {
		return nil, fmt.Errorf("the image config of %s is %d bytes: an image config is kilobytes, and more than %d bytes is refused", what, len(raw), MaxConfigBytes)
	}
	vr, err := newVerifyReader(bytes.NewReader(raw), want, 0, "the image config of "+what)
	if err != nil {
		return nil, err
	}
	if err := vr.verify(); err != nil {
		return nil, err
	}
	cfg, err := v1.ParseConfigFile(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("image config of %s: %w", what, err)
	}
	return cfg, nil
}

func labelledLayers(img v1.Image, what string) ([]v1.Hash, error) {
	cfg, err := configFile(img, what)
	if err != nil {
		return nil, err
	}
	var out []v1.Hash
	for k, v := range cfg.Config.Labels {
		ds, ok := strings.CutPrefix(k, AnnotationKey+":")
		if !ok || v != BaseLayer {
			continue
		}
		h, err := v1.NewHash(ds)
		if err != nil {
			return nil, fmt.Errorf("%s: image config label %q names no layer digest", what, k)
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b v1.Hash) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}
