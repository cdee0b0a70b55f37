package ocicopy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// ToLayout copies the image src names into l whole, byte for byte, as the
// index.json entry refName (replacing an entry of that name, keeping the
// others). Blobs already in the layout at their size are not written
// again; when refName already names the source's digest nothing is read.
// A copy that fails or is cancelled leaves no entry for the image and no
// partial blob under a blob's name: run it again to write what is missing.
func (c *Copier) ToLayout(ctx context.Context, src Source, l *Layout, refName string) (Result, error) {
	res, err := c.toLayout(ctx, src, l, refName)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return Result{}, fmt.Errorf("copy %s to the OCI layout %s as %q: %w", src, l.dir, refName, err)
	}
	return res, nil
}

func (c *Copier) toLayout(ctx context.Context, src Source, l *Layout, refName string) (Result, error) {
	if refName == "" {
		return Result{}, errors.New("a layout entry needs a ref name")
	}
	r, root, err := c.open(ctx, src)
	if err != nil {
		return Result{}, err
	}
	if have, ok, err := l.entry(refName); err != nil {
		return Result{}, err
	} else if ok && have.Digest == root.Digest && l.holds(have) {
		img := Image{Digest: have.Digest, MediaType: have.MediaType, Size: have.Size}
		return Result{Image: img, Skipped: true}, nil
	}
	t, err := walk(ctx, r, root, c.Limits.withDefaults())
	if err != nil {
		return Result{}, err
	}
	res, err := c.writeBlobs(ctx, r, l, t.blobs)
	if err != nil {
		return Result{}, err
	}
	for _, m := range t.manifests {
		if _, err := l.writeBlob(ctx, m.desc, manifestOpener(m)); err != nil {
			return Result{}, fmt.Errorf("write the manifest %s: %w", m.desc.Digest, err)
		}
	}
	if err := l.syncBlobs(t); err != nil {
		return Result{}, err
	}
	d := v1.Descriptor{MediaType: t.root.MediaType, Digest: t.root.Digest, Size: t.root.Size}
	if err := l.setEntry(refName, d); err != nil {
		return Result{}, err
	}
	res.Image = t.image()
	return res, nil
}

// holds: the entry's manifest is in place. An entry is written only after
// every blob of its image, so that is enough to know the image is whole.
func (l *Layout) holds(d v1.Descriptor) bool {
	path, err := blobPath(l.dir, d.Digest)
	if err != nil {
		return false
	}
	st, err := os.Stat(path)
	return err == nil && st.Size() == d.Size
}

// writeBlobs writes the blobs the layout lacks, Jobs at once.
func (c *Copier) writeBlobs(ctx context.Context, r reader, l *Layout, blobs []v1.Descriptor) (Result, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.jobs())
	var mu sync.Mutex
	var res Result
	for _, d := range blobs {
		g.Go(func() error {
			open := func() (io.ReadCloser, *progress, error) {
				rc, p, err := openVerified(gctx, r, d, c.OnProgress)
				if err != nil {
					return nil, nil, err
				}
				return rc, p, nil
			}
			sent, err := l.writeBlob(gctx, d, open)
			if err != nil {
				return fmt.Errorf("blob %s: %w", d.Digest, err)
			}
			mu.Lock()
			defer mu.Unlock()
			res.count(sent, d.Size)
			return nil
		})
	}
	return res, g.Wait()
}

// opener opens a stream checked against its descriptor.
type opener func() (io.ReadCloser, *progress, error)

func manifestOpener(m manifest) opener {
	return func() (io.ReadCloser, *progress, error) {
		vr, err := source.VerifyingReader(bytes.NewReader(m.raw), m.desc.Digest, m.desc.Size, "the manifest "+m.desc.Digest.String())
		return io.NopCloser(vr), nil, err
	}
}

// writeBlob puts the blob d in place unless a file of its size is there
// already (only whole, checked blobs are ever given a blob's name). sent
// says whether it was written.
func (l *Layout) writeBlob(ctx context.Context, d v1.Descriptor, open opener) (bool, error) {
	path, err := blobPath(l.dir, d.Digest)
	if err != nil {
		return false, err
	}
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() == d.Size {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	rc, p, err := open()
	if err != nil {
		return false, err
	}
	defer rc.Close()
	if err := writeStream(path, ctxReader{ctx: ctx, ReadCloser: rc}); err != nil {
		p.cancel()
		return false, err
	}
	return true, nil
}

// syncBlobs makes the blobs' names survive a crash before index.json
// names the image.
func (l *Layout) syncBlobs(t *tree) error {
	algs := map[string]bool{}
	for _, m := range t.manifests {
		algs[m.desc.Digest.Algorithm] = true
	}
	for _, b := range t.blobs {
		algs[b.Digest.Algorithm] = true
	}
	for a := range algs {
		if err := syncDir(filepath.Join(l.dir, "blobs", a)); err != nil {
			return fmt.Errorf("sync the blobs of the OCI layout %s: %w", l.dir, err)
		}
	}
	return nil
}
