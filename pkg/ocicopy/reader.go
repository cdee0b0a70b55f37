package ocicopy

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// reader reads one source. Neither method checks what it returns against
// its digest: the walk checks manifests, and the destination checks each
// blob as it writes it, so that every source is checked the same way.
type reader interface {
	// resolve is the root's descriptor: its digest, and its media type
	// and size where the source says them without reading it.
	resolve(ctx context.Context) (v1.Descriptor, error)
	// manifest reads a manifest, no larger than the limit, and the media
	// type the source declares for it ("" if none).
	manifest(ctx context.Context, d v1.Descriptor) ([]byte, types.MediaType, error)
	// blob opens a blob's stream; checked tells that the stream is
	// checked against the digest already (a registry's, as it is read),
	// so that only its size is left to bound.
	blob(ctx context.Context, d v1.Descriptor) (rc io.ReadCloser, checked bool, err error)
	// name names the source in errors.
	name() string
}

// registryReader reads a registry through the plugin's options, and the
// manifest size limit in its transport.
type registryReader struct {
	ref    name.Reference
	puller *remote.Puller
	// fetched is the root when resolving it took a GET.
	fetched *remote.Descriptor
}

func newRegistryReader(ctx context.Context, ref name.Reference, o source.Options, limits Limits) (*registryReader, error) {
	o.MaxManifestBytes = limits.MaxManifestBytes
	p, err := remote.NewPuller(source.RemoteOptions(ctx, o)...)
	if err != nil {
		return nil, err
	}
	return &registryReader{ref: ref, puller: p}, nil
}

func (r *registryReader) name() string { return r.ref.Name() }

// resolve asks for the digest a tag names now with HEAD, which costs no
// manifest: a copy that finds it at the destination ends there. Children
// are then fetched by digest, and checked against it.
func (r *registryReader) resolve(ctx context.Context) (v1.Descriptor, error) {
	if d, ok := r.ref.(name.Digest); ok {
		h, err := v1.NewHash(d.DigestStr())
		return v1.Descriptor{Digest: h}, err
	}
	desc, err := r.puller.Head(ctx, r.ref)
	if err == nil {
		return v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}, nil
	}
	if !source.HeadUnsupported(err) {
		return v1.Descriptor{}, fmt.Errorf("resolve %s: %w", r.ref.Name(), err)
	}
	// Without HEAD, the digest of the manifest got by tag is what its
	// bytes hash to: the digest that is copied and checked at the end.
	full, err := r.puller.Get(ctx, r.ref)
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("resolve %s: %w", r.ref.Name(), err)
	}
	r.fetched = full
	return v1.Descriptor{MediaType: full.MediaType, Digest: full.Digest, Size: full.Size}, nil
}

func (r *registryReader) manifest(ctx context.Context, d v1.Descriptor) ([]byte, types.MediaType, error) {
	if f := r.fetched; f != nil && f.Digest == d.Digest {
		return f.Manifest, f.MediaType, nil
	}
	full, err := r.puller.Get(ctx, r.ref.Context().Digest(d.Digest.String()))
	if err != nil {
		return nil, "", fmt.Errorf("fetch the manifest %s: %w", d.Digest, err)
	}
	return full.Manifest, full.MediaType, nil
}

// blob is checked against its digest by go-containerregistry as it is
// read (an error at its end when it does not match): hashing it again
// would cost a third of a large copy's time.
func (r *registryReader) blob(ctx context.Context, d v1.Descriptor) (io.ReadCloser, bool, error) {
	l, err := r.puller.Layer(ctx, r.ref.Context().Digest(d.Digest.String()))
	if err != nil {
		return nil, false, err
	}
	rc, err := l.Compressed()
	return rc, true, err
}

// layoutReader reads an OCI image layout's blobs, which nothing but the
// walk and the destination check.
type layoutReader struct {
	dir   string
	root  v1.Hash
	limit int64
}

func (r *layoutReader) name() string { return r.dir + "@" + r.root.String() }

// resolve finds the root in index.json for its media type; an entry not
// listed there (a child manifest) is read for what it is.
func (r *layoutReader) resolve(context.Context) (v1.Descriptor, error) {
	if r.root == (v1.Hash{}) {
		return v1.Descriptor{}, fmt.Errorf("%s: an OCI layout source needs the digest of the manifest to copy", r.dir)
	}
	im, err := readIndex(r.dir)
	if err != nil {
		return v1.Descriptor{}, err
	}
	for _, d := range im.Manifests {
		if d.Digest == r.root {
			return v1.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size}, nil
		}
	}
	path, err := blobPath(r.dir, r.root)
	if err != nil {
		return v1.Descriptor{}, err
	}
	if _, err := os.Stat(path); err != nil {
		return v1.Descriptor{}, fmt.Errorf("the OCI layout %s has no manifest %s: %w", r.dir, r.root, err)
	}
	return v1.Descriptor{Digest: r.root}, nil
}

func (r *layoutReader) manifest(_ context.Context, d v1.Descriptor) ([]byte, types.MediaType, error) {
	path, err := blobPath(r.dir, d.Digest)
	if err != nil {
		return nil, "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("read the manifest %s: %w", d.Digest, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, r.limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("read the manifest %s: %w", d.Digest, err)
	}
	if int64(len(raw)) > r.limit {
		st, _ := f.Stat()
		d.Size = st.Size()
		return nil, "", tooLarge(d, r.limit)
	}
	return raw, "", nil
}

func (r *layoutReader) blob(ctx context.Context, d v1.Descriptor) (io.ReadCloser, bool, error) {
	path, err := blobPath(r.dir, d.Digest)
	if err != nil {
		return nil, false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	return ctxReader{ctx: ctx, ReadCloser: f}, false, nil
}

// ctxReader ends a read of a file, which no request carries, when its
// context is done.
type ctxReader struct {
	ctx context.Context
	io.ReadCloser
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.ReadCloser.Read(p)
}
