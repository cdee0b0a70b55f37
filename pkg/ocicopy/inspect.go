package ocicopy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// tree is an image read whole but for its blobs: every manifest, each
// after the ones it references (the order they are written in, so that a
// destination never holds a manifest whose children are missing), and
// every blob once.
type tree struct {
	root          v1.Descriptor
	manifests     []manifest
	blobs         []v1.Descriptor
	platforms     []string
	manifestBytes int64
}

// manifest is one manifest's descriptor and the bytes it is written from.
type manifest struct {
	desc v1.Descriptor
	raw  []byte
}

func (t *tree) image() Image {
	img := Image{
		Digest: t.root.Digest, MediaType: t.root.MediaType, Size: t.root.Size,
		Platforms: t.platforms, Manifests: len(t.manifests), Blobs: t.blobs, Bytes: t.manifestBytes,
	}
	for _, b := range t.blobs {
		img.Bytes += b.Size
	}
	return img
}

// walker reads a tree within the limits.
type walker struct {
	r      reader
	limits Limits
	// check checks a manifest against its digest; the tests of the checks
	// that follow it replace it.
	check func(raw []byte, want v1.Hash, what string) error
	t     tree
	seen  map[v1.Hash]bool // manifests read
	blobs map[v1.Hash]int64
}

func newWalker(r reader, limits Limits) *walker {
	return &walker{r: r, limits: limits, check: source.CheckDigest, seen: map[v1.Hash]bool{}, blobs: map[v1.Hash]int64{}}
}

// walk reads and checks every manifest of the image rooted at root.
func walk(ctx context.Context, r reader, root v1.Descriptor, limits Limits) (*tree, error) {
	return newWalker(r, limits).walk(ctx, root)
}

func (w *walker) walk(ctx context.Context, root v1.Descriptor) (*tree, error) {
	d, err := w.visit(ctx, root, nil)
	if err != nil {
		return nil, err
	}
	w.t.root = d
	return &w.t, nil
}

// visit reads the manifest d and what it references; path holds the
// digests of the indexes above it.
func (w *walker) visit(ctx context.Context, d v1.Descriptor, path []v1.Hash) (v1.Descriptor, error) {
	raw, d, err := w.read(ctx, d)
	if err != nil {
		return d, err
	}
	if d.MediaType.IsIndex() {
		err = w.index(ctx, d, raw, path)
	} else {
		err = w.image(d, raw)
	}
	if err != nil {
		return d, err
	}
	w.t.manifests = append(w.t.manifests, manifest{desc: d, raw: raw})
	return d, nil
}

// read fetches one manifest within the limits and checks it against its
// digest and the size its parent states.
func (w *walker) read(ctx context.Context, d v1.Descriptor) ([]byte, v1.Descriptor, error) {
	if d.Size > w.limits.MaxManifestBytes {
		return nil, d, tooLarge(d, w.limits.MaxManifestBytes)
	}
	if len(w.seen) >= w.limits.MaxManifests {
		return nil, d, tooMany(w.limits.MaxManifests)
	}
	raw, declared, err := w.r.manifest(ctx, d)
	if err != nil {
		return nil, d, err
	}
	if int64(len(raw)) > w.limits.MaxManifestBytes {
		return nil, d, tooLarge(v1.Descriptor{Digest: d.Digest, Size: int64(len(raw))}, w.limits.MaxManifestBytes)
	}
	what := "the manifest " + d.Digest.String()
	if err := w.check(raw, d.Digest, what); err != nil {
		return nil, d, err
	}
	if d.Size > 0 && int64(len(raw)) != d.Size {
		return nil, d, fmt.Errorf("%s is %d bytes, not the %d its descriptor states", what, len(raw), d.Size)
	}
	if w.t.manifestBytes += int64(len(raw)); w.t.manifestBytes > w.limits.MaxTotalManifestBytes {
		return nil, d, tooMuch(w.limits.MaxTotalManifestBytes)
	}
	mt, err := mediaType(raw, d, declared)
	if err != nil {
		return nil, d, err
	}
	w.seen[d.Digest] = true
	return raw, v1.Descriptor{MediaType: mt, Digest: d.Digest, Size: int64(len(raw))}, nil
}

// mediaType is what the manifest says it is, else what its parent or the
// source declares; only images and indexes are copied.
func mediaType(raw []byte, d v1.Descriptor, declared types.MediaType) (types.MediaType, error) {
	var probe struct {
		MediaType types.MediaType `json:"mediaType"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return "", fmt.Errorf("the manifest %s is not JSON: %w", d.Digest, err)
	}
	mt := cmp.Or(probe.MediaType, d.MediaType, declared)
	if !mt.IsImage() && !mt.IsIndex() {
		return "", unknownType(d.Digest, mt)
	}
	return mt, nil
}

func unknownType(h v1.Hash, mt types.MediaType) error {
	return fmt.Errorf("the manifest %s has the media type %q: only OCI and Docker v2 images and indexes are copied", h, mt)
}

// index checks an index's children before fetching any, and visits them.
func (w *walker) index(ctx context.Context, d v1.Descriptor, raw []byte, path []v1.Hash) error {
	level := len(path) + 1
	if level > w.limits.MaxDepth {
		return tooDeep(d, level, w.limits.MaxDepth)
	}
	im, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("the image index %s: %w", d.Digest, err)
	}
	path = append(slices.Clone(path), d.Digest)
	fresh := map[v1.Hash]bool{}
	for _, c := range im.Manifests {
		switch {
		case slices.Contains(path, c.Digest):
			return cyclic(d.Digest, c.Digest)
		case !c.MediaType.IsIndex() && !c.MediaType.IsImage():
			return unknownType(c.Digest, c.MediaType)
		case c.MediaType.IsIndex() && level+1 > w.limits.MaxDepth:
			return tooDeep(c, level+1, w.limits.MaxDepth)
		case c.Size > w.limits.MaxManifestBytes:
			return tooLarge(c, w.limits.MaxManifestBytes)
		}
		if !w.seen[c.Digest] {
			fresh[c.Digest] = true
		}
	}
	if len(w.seen)+len(fresh) > w.limits.MaxManifests {
		return tooMany(w.limits.MaxManifests)
	}
	for _, c := range im.Manifests {
		w.platform(c.Platform)
		if w.seen[c.Digest] {
			continue
		}
		if _, err := w.visit(ctx, c, path); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) platform(p *v1.Platform) {
	if p == nil {
		return
	}
	if s := p.String(); s != "" && !slices.Contains(w.t.platforms, s) {
		w.t.platforms = append(w.t.platforms, s)
	}
}

// image adds an image's config and layers to the blobs.
func (w *walker) image(d v1.Descriptor, raw []byte) error {
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("the manifest %s: %w", d.Digest, err)
	}
	if m.Config.Digest == (v1.Hash{}) {
		return fmt.Errorf("the manifest %s names no config: it is no image manifest", d.Digest)
	}
	if err := w.blob(d, m.Config); err != nil {
		return err
	}
	for _, l := range m.Layers {
		if !l.MediaType.IsDistributable() {
			continue // a foreign layer: fetched from its URLs, never stored by a registry
		}
		if err := w.blob(d, l); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) blob(m v1.Descriptor, b v1.Descriptor) error {
	size, seen := w.blobs[b.Digest]
	switch {
	case b.Size < 0:
		return fmt.Errorf("the manifest %s lists the blob %s with the size %d", m.Digest, b.Digest, b.Size)
	case seen && size != b.Size:
		return fmt.Errorf("the blob %s is listed with the sizes %d and %d: one is wrong", b.Digest, size, b.Size)
	case seen:
		return nil
	}
	w.blobs[b.Digest] = b.Size
	w.t.blobs = append(w.t.blobs, b)
	return nil
}
