package ocicopy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// ToRegistry copies the image src names to dst whole, byte for byte. When
// dst already resolves to the source's digest nothing is read or sent;
// otherwise blobs the destination has are not sent again, manifests follow
// their blobs and children, and at the end dst must resolve to the
// source's digest. A failed copy reports nothing copied: run it again to
// send what is missing.
func (c *Copier) ToRegistry(ctx context.Context, src Source, dst name.Reference, dstOpts source.Options) (Result, error) {
	res, err := c.toRegistry(ctx, src, dst, dstOpts)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err() // whatever a cancelled request made of it
		}
		return Result{}, fmt.Errorf("copy %s to %s: %w", src, dst.Name(), err)
	}
	return res, nil
}

func (c *Copier) toRegistry(ctx context.Context, src Source, dst name.Reference, dstOpts source.Options) (Result, error) {
	limits := c.Limits.withDefaults()
	r, root, err := c.open(ctx, src)
	if err != nil {
		return Result{}, err
	}
	if d, ok := dst.(name.Digest); ok && d.DigestStr() != root.Digest.String() {
		return Result{}, fmt.Errorf("the destination names the digest %s, and the source is %s: copy to a tag or to the source's digest", d.DigestStr(), root.Digest)
	}
	dstOpts.MaxManifestBytes = limits.MaxManifestBytes
	dstPuller, err := remote.NewPuller(source.RemoteOptions(ctx, dstOpts)...)
	if err != nil {
		return Result{}, err
	}
	if have, err := resolved(ctx, dstPuller, dst); err != nil {
		return Result{}, fmt.Errorf("check the destination: %w", err)
	} else if have != nil && have.Digest == root.Digest {
		img := Image{Digest: have.Digest, MediaType: have.MediaType, Size: have.Size}
		return Result{Image: img, Skipped: true}, nil
	}
	t, err := walk(ctx, r, root, limits)
	if err != nil {
		return Result{}, err
	}
	pusher, err := remote.NewPusher(source.RemoteOptions(ctx, dstOpts)...)
	if err != nil {
		return Result{}, err
	}
	res, err := c.sendBlobs(ctx, r, pusher, dst.Context(), t.blobs)
	if err != nil {
		return Result{}, err
	}
	if err := putManifests(ctx, pusher, dst, t); err != nil {
		return Result{}, err
	}
	if got, err := resolved(ctx, dstPuller, dst); err != nil {
		return Result{}, fmt.Errorf("check the copy: %w", err)
	} else if got == nil || got.Digest != root.Digest {
		return Result{}, fmt.Errorf("after the copy the destination resolves to %v, not %s: another writer changed it, or the registry rewrote the manifest", digestOf(got), root.Digest)
	}
	res.Image = t.image()
	return res, nil
}

func digestOf(d *v1.Descriptor) string {
	if d == nil {
		return "nothing"
	}
	return d.Digest.String()
}

// resolved is what ref names at the destination now: nil for nothing.
func resolved(ctx context.Context, p *remote.Puller, ref name.Reference) (*v1.Descriptor, error) {
	d, err := p.Head(ctx, ref)
	switch {
	case err == nil:
		return d, nil
	case absent(err):
		return nil, nil
	case !source.HeadUnsupported(err):
		return nil, err
	}
	full, err := p.Get(ctx, ref)
	if absent(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &full.Descriptor, nil
}

// absent: not found, or forbidden, which some registries answer for a
// repository that a push would create.
func absent(err error) bool {
	var te *transport.Error
	return source.NotFound(err) || errors.As(err, &te) && te.StatusCode == http.StatusForbidden
}

// sendBlobs uploads the blobs the destination lacks, Jobs at once.
func (c *Copier) sendBlobs(ctx context.Context, r reader, p *remote.Pusher, repo name.Repository, blobs []v1.Descriptor) (Result, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.jobs())
	var mu sync.Mutex
	var res Result
	for _, d := range blobs {
		g.Go(func() error {
			l := &blobLayer{ctx: gctx, r: r, d: d, report: c.OnProgress}
			if err := p.Upload(gctx, repo, l); err != nil {
				l.cancel()
				if se := l.fault(); se != nil {
					// The upload failed on what the source sent: the
					// destination is not to blame.
					return se
				}
				return fmt.Errorf("blob %s: %w", d.Digest, err)
			}
			mu.Lock()
			defer mu.Unlock()
			res.count(l.opened(), d.Size)
			return nil
		})
	}
	return res, g.Wait()
}

// putManifests writes the manifests from their bytes, children first, the
// root last under dst.
func putManifests(ctx context.Context, p *remote.Pusher, dst name.Reference, t *tree) error {
	for _, m := range t.manifests {
		ref := name.Reference(dst.Context().Digest(m.desc.Digest.String()))
		if m.desc.Digest == t.root.Digest {
			ref = dst
		}
		if err := p.Put(ctx, ref, rawManifest(m)); err != nil {
			return fmt.Errorf("write the manifest %s: %w", m.desc.Digest, err)
		}
	}
	return nil
}

// rawManifest is written as its bytes, with its media type.
type rawManifest manifest

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.desc.MediaType, nil }

// blobLayer is a source blob as go-containerregistry uploads it. It is
// opened only when the destination lacks it, which is how a blob sent is
// told from one present; and it is checked against its digest as it is
// sent, so a corrupt source fails the upload before the blob is committed.
type blobLayer struct {
	ctx    context.Context
	r      reader
	d      v1.Descriptor
	report func(int64)

	mu    sync.Mutex
	opens int
	p     *progress
	// read is the latest stream opened; failed the source's fault met
	// opening one.
	read   *sourceReader
	failed *SourceError
}

func (l *blobLayer) Compressed() (io.ReadCloser, error) {
	rc, p, err := openVerified(l.ctx, l.r, l.d, l.report)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		var se *SourceError
		if errors.As(err, &se) && l.failed == nil {
			l.failed = se
		}
		return nil, err
	}
	l.p.cancel() // a body sent again (after a redirect) counts once
	l.p = p
	l.read = rc
	l.opens++
	return rc, nil
}

// fault is the source's fault the upload met, if any.
func (l *blobLayer) fault() *SourceError {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed != nil {
		return l.failed
	}
	return l.read.fault()
}

func (l *blobLayer) opened() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.opens > 0
}

func (l *blobLayer) cancel() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p.cancel()
}

func (l *blobLayer) Digest() (v1.Hash, error)            { return l.d.Digest, nil }
func (l *blobLayer) Size() (int64, error)                { return l.d.Size, nil }
func (l *blobLayer) MediaType() (types.MediaType, error) { return l.d.MediaType, nil }

// A blob is copied as it is stored; nothing decompresses it.
func (l *blobLayer) DiffID() (v1.Hash, error) {
	return v1.Hash{}, errors.New("a copied blob has no diff ID")
}

func (l *blobLayer) Uncompressed() (io.ReadCloser, error) {
	return nil, errors.New("a copied blob is not decompressed")
}
