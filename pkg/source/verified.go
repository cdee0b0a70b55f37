package source

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// verifyUncompressed reads an image tarball's layer once, whole, and
// checks it against its diff ID.
func verifyUncompressed(l v1.Layer, diffID v1.Hash, limit int64, what string) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	defer rc.Close()
	vr, err := newVerifyReader(newLimitReader(rc, limit, what), diffID, 0, what)
	if err != nil {
		return err
	}
	return vr.verify()
}

// openFlattened reads an image without a base layer as the flattened
// filesystem of its layers, each verified: a registry's or layout's by its
// digest, an image tarball's by the diff ID its config lists. The checks
// finish when the package is closed, or, with VerifyFirst, every layer is
// read and checked once before the filesystem is read.
func openFlattened(img v1.Image, what string, verifyBlobs bool, o Options) (*openedLayer, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("read layers of %s: %w", what, err)
	}
	var diffIDs []v1.Hash
	if !verifyBlobs {
		cfg, err := configFile(img, what)
		if err != nil {
			return nil, err
		}
		if len(cfg.RootFS.DiffIDs) != len(layers) {
			return nil, fmt.Errorf("the image config of %s lists %d diff IDs for %d layers: the layers cannot be verified", what, len(cfg.RootFS.DiffIDs), len(layers))
		}
		diffIDs = cfg.RootFS.DiffIDs
	}
	v := &verifiedLayers{Image: img, what: what, limit: o.MaxUncompressed}
	for i, l := range layers {
		vl := &verifiedLayer{Layer: l, owner: v, what: fmt.Sprintf("layer %d of %s", i+1, what)}
		if diffIDs != nil {
			vl.diffID = &diffIDs[i]
		}
		if o.VerifyFirst {
			if err := vl.check(); err != nil {
				return nil, err
			}
		}
		v.layers = append(v.layers, vl)
	}
	rc := mutate.Extract(v)
	tar := newLimitReader(rc, o.MaxUncompressed, "the flattened filesystem of "+what)
	return &openedLayer{
		tar: tar,
		finish: func() error {
			// The filesystem is written by a goroutine that closes each
			// layer when it is done with it: read to the end, so that
			// every layer has been read and closed, and so verified.
			if _, err := io.Copy(io.Discard, tar); err != nil {
				return readError("the flattened filesystem of "+what, err)
			}
			return v.finish()
		},
		close: rc.Close,
	}, nil
}

// verifiedLayers is an image whose layers verify their content when they
// are closed.
type verifiedLayers struct {
	v1.Image
	what   string
	limit  int64
	layers []*verifiedLayer

	mu     sync.Mutex
	closed int
	errs   []error
}

func (v *verifiedLayers) Layers() ([]v1.Layer, error) {
	out := make([]v1.Layer, len(v.layers))
	for i, l := range v.layers {
		out[i] = l
	}
	return out, nil
}

// finish is what checking every layer found; all must have been read.
func (v *verifiedLayers) finish() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := errors.Join(v.errs...); err != nil {
		return err
	}
	if v.closed != len(v.layers) {
		return fmt.Errorf("%d of the %d layers of %s were read: the others are unverified", v.closed, len(v.layers), v.what)
	}
	return nil
}

// closing drains and checks a layer as it is closed, and keeps the result.
func (v *verifiedLayers) closing(vr *verifyReader, rc io.Closer) error {
	err := vr.verify()
	cerr := rc.Close()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.closed++
	if err != nil {
		v.errs = append(v.errs, err)
	}
	return errors.Join(err, cerr)
}

// verifiedLayer hashes what is read of its content: the compressed bytes
// against the layer's digest, or the uncompressed ones against diffID.
type verifiedLayer struct {
	v1.Layer
	owner  *verifiedLayers
	what   string
	diffID *v1.Hash
}

func (l *verifiedLayer) Uncompressed() (io.ReadCloser, error) {
	vr, rc, err := l.open()
	if err != nil {
		return nil, err
	}
	closing := func() error { return l.owner.closing(vr, rc) }
	if l.diffID != nil {
		return readCloser{vr, closing}, nil
	}
	plain, closeDec, err := decompress(bufio.NewReaderSize(vr, 256<<10), l.what)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return readCloser{plain, func() error { closeDec(); return closing() }}, nil
}

// open starts reading the bytes the layer is verified by.
func (l *verifiedLayer) open() (*verifyReader, io.ReadCloser, error) {
	if l.diffID != nil {
		rc, err := l.Layer.Uncompressed()
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", l.what, err)
		}
		vr, err := newVerifyReader(newLimitReader(rc, l.owner.limit, l.what), *l.diffID, 0, l.what)
		if err != nil {
			rc.Close()
			return nil, nil, err
		}
		return vr, rc, nil
	}
	rc, vr, err := fetchBlob(l.Layer, l.owner.limit, l.what, nil)
	if err != nil {
		return nil, nil, err
	}
	return vr, rc, nil
}

// check reads the layer whole and verifies it.
func (l *verifiedLayer) check() error {
	vr, rc, err := l.open()
	if err != nil {
		return err
	}
	defer rc.Close()
	return vr.verify()
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }
