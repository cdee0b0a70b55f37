package hostile

import (
	"bytes"
	"encoding/json"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// imageCases are image indexes and manifests that break the xpkg OCI rules.
func imageCases(b *builder) {
	b.add(Case{Name: "empty-index", About: "an OCI image index with no manifests",
		Artifact: mutate.IndexMediaType(empty.Index, types.OCIImageIndex), Want: "has no manifests"})

	arm := v1.Platform{OS: "linux", Architecture: "arm64"}
	s390x := v1.Platform{OS: "linux", Architecture: "s390x"}
	b.add(Case{Name: "index-without-platform", About: "an index of linux/arm64 and linux/s390x images, read for linux/amd64",
		Artifact: fixture.Index(fixture.PlatformImage{Platform: arm, Image: b.platformImage(arm)}, fixture.PlatformImage{Platform: s390x, Image: b.platformImage(s390x)}),
		Want:     "has no manifest for linux/amd64 (it has linux/arm64, linux/s390x)"})

	amd := v1.Platform{OS: "linux", Architecture: "amd64"}
	inner := fixture.Index(fixture.PlatformImage{Platform: amd, Image: b.platformImage(amd)}, fixture.PlatformImage{Platform: arm, Image: b.platformImage(arm)})
	b.add(Case{Name: "nested-index", About: "an index whose only manifest is another index",
		Artifact: mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), mutate.IndexAddendum{Add: inner}),
		Want:     "nested indexes are not xpkg images"})

	// A manifest may state any size for a layer: registries check only that
	// the blob exists. This one states half the real size.
	img := b.stream(goodStream)
	m, err := img.Manifest()
	if err != nil {
		b.fail("size mismatch", err)
		return
	}
	m = m.DeepCopy()
	m.Layers[0].Size /= 2
	raw, err := json.Marshal(m)
	b.fail("size mismatch", err)
	b.add(Case{Name: "size-mismatch", About: "a manifest stating half its base layer's real size",
		Artifact: rawManifest{Image: img, raw: raw}, Want: "does not match expected size"})
}

// platformImage is a valid package image for p.
func (b *builder) platformImage(p v1.Platform) v1.Image {
	img, err := fixture.ImageFor(goodStream, p)
	b.fail("platform image", err)
	return img
}

// rawManifest is an image with its manifest replaced by raw, the blobs
// unchanged.
type rawManifest struct {
	v1.Image
	raw []byte
}

func (r rawManifest) RawManifest() ([]byte, error) { return r.raw, nil }

func (r rawManifest) Manifest() (*v1.Manifest, error) {
	return v1.ParseManifest(bytes.NewReader(r.raw))
}

func (r rawManifest) Digest() (v1.Hash, error) {
	h, _, err := v1.SHA256(bytes.NewReader(r.raw))
	return h, err
}

func (r rawManifest) Size() (int64, error) { return int64(len(r.raw)), nil }
