// Package ocicopy copies OCI images whole between registries and OCI image
// layouts: an index with every platform's manifest, nested indexes, every
// config and layer. Manifests are written from the bytes read, so every
// digest and annotation survives the copy; everything read is checked
// against its digest; blobs stream through, never held whole; and a
// hostile source is refused within Limits before anything is written.
// It is the engine of mirroring packages into a private registry or into
// a layout carried across an air gap.
package ocicopy

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// Source is one image (a single manifest or an index) to read: from a
// registry, or an entry of an OCI image layout.
type Source struct {
	// Ref is a registry source (tag or digest); nil when LayoutDir is set.
	Ref name.Reference
	// Options are the registry options for Ref.
	Options source.Options
	// LayoutDir is an OCI image layout to read instead.
	LayoutDir string
	// Digest is the layout entry's manifest digest (layout sources only).
	Digest v1.Hash
}

// String names the source in errors: the reference, or layout@digest.
func (s Source) String() string {
	if s.Ref != nil {
		return s.Ref.Name()
	}
	return s.LayoutDir + "@" + s.Digest.String()
}

// Image is what reading an image's manifests found.
type Image struct {
	// Digest, MediaType and Size describe the root manifest or index.
	Digest    v1.Hash
	MediaType types.MediaType
	Size      int64
	// Platforms are an index's platforms ("linux/amd64", ...), entries
	// without one left out; empty for a single manifest.
	Platforms []string
	// Manifests counts the manifests of the tree, the root included.
	Manifests int
	// Blobs are the configs and layers of the tree, each once. Foreign
	// (non-distributable) layers are left out: registries do not hold
	// them, and they are not copied.
	Blobs []v1.Descriptor
	// Bytes is the size of the blobs and manifests together.
	Bytes int64
}

// Result is what one copy did. A copy that fails reports nothing copied.
type Result struct {
	// Image is what was copied. When Skipped, only its Digest, MediaType
	// and Size are known: the rest of the tree was not read.
	Image Image
	// Skipped: the destination already had exactly this digest under this
	// reference (or ref name), and nothing was sent.
	Skipped bool
	// BlobsSent were copied; BlobsPresent were there already.
	BlobsSent    int
	BlobsPresent int
	// BytesSent is the size of the blobs sent (manifests not counted).
	BytesSent int64
}

// count adds a blob: sent (of size bytes), or found at the destination.
func (r *Result) count(sent bool, size int64) {
	if sent {
		r.BlobsSent++
		r.BytesSent += size
	} else {
		r.BlobsPresent++
	}
}

// Copier copies images within its Limits. Its zero value works; it may be
// used for several copies at once.
type Copier struct {
	Limits Limits
	// Jobs is how many blobs of one image are copied at once (default 4).
	Jobs int
	// OnProgress, when set, is called with the bytes of blobs as they are
	// sent, and with the negative count of a blob's bytes when that blob
	// fails (they will be sent again). It is called from several
	// goroutines at once.
	OnProgress func(delta int64)
}

// DefaultJobs is how many blobs are copied at once when Jobs is 0.
const DefaultJobs = 4

func (c *Copier) jobs() int {
	if c.Jobs > 0 {
		return c.Jobs
	}
	return DefaultJobs
}

// Inspect reads and checks every manifest of the image src names (no
// blob) within the limits, and says what it holds.
func (c *Copier) Inspect(ctx context.Context, src Source) (Image, error) {
	t, err := c.read(ctx, src)
	if err != nil {
		return Image{}, fmt.Errorf("inspect %s: %w", src, err)
	}
	return t.image(), nil
}

// read resolves src and walks its tree.
func (c *Copier) read(ctx context.Context, src Source) (*tree, error) {
	r, root, err := c.open(ctx, src)
	if err != nil {
		return nil, err
	}
	return walk(ctx, r, root, c.Limits.withDefaults())
}

// open makes src's reader and resolves its root.
func (c *Copier) open(ctx context.Context, src Source) (reader, v1.Descriptor, error) {
	limits := c.Limits.withDefaults()
	var r reader
	switch {
	case src.Ref != nil && src.LayoutDir != "":
		return nil, v1.Descriptor{}, errors.New("a source is a registry reference or an OCI layout entry, not both")
	case src.Ref != nil:
		rr, err := newRegistryReader(ctx, src.Ref, src.Options, limits)
		if err != nil {
			return nil, v1.Descriptor{}, err
		}
		r = rr
	case src.LayoutDir != "":
		r = &layoutReader{dir: src.LayoutDir, root: src.Digest, limit: limits.MaxManifestBytes}
	default:
		return nil, v1.Descriptor{}, errors.New("a source needs a registry reference or an OCI layout entry")
	}
	root, err := r.resolve(ctx)
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	if root.Size > limits.MaxManifestBytes {
		return nil, v1.Descriptor{}, tooLarge(root, limits.MaxManifestBytes)
	}
	return r, root, nil
}
