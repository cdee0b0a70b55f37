package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// openedLayer is a layer's tar stream and what finishing it takes.
type openedLayer struct {
	tar    io.Reader
	finish func() error // drains the rest and verifies the digest
	close  func() error
}

// blame is the cause of err, a failure to read the layer's tar stream:
// the blob itself when, read to its end, it does not match its digest (a
// corrupt blob breaks its gzip or tar stream too, which says less), else
// err.
func (l *openedLayer) blame(err error) error {
	if ferr := l.finish(); ferr != nil {
		return ferr
	}
	return err
}

// openBlob reads a layer as a blob (registry, OCI layout): the compressed
// bytes are hashed against the manifest's digest, and decompressed by what
// their first bytes say they are.
func openBlob(l v1.Layer, limit int64, what string, progress io.Writer) (*openedLayer, error) {
	rc, vr, err := fetchBlob(l, limit, what, progress)
	if err != nil {
		return nil, err
	}
	return openCompressed(vr, vr.verify, rc.Close, limit, what)
}

// openCompressed decompresses a layer's compressed bytes r as a tar
// stream; finish checks them, closeSrc releases where they come from.
func openCompressed(r io.Reader, finish, closeSrc func() error, limit int64, what string) (*openedLayer, error) {
	plain, closeDec, err := decompress(bufio.NewReaderSize(r, 256<<10), what)
	if err != nil {
		closeSrc()
		return nil, err
	}
	return &openedLayer{
		tar:    newLimitReader(plain, limit, what),
		finish: finish,
		close: func() error {
			closeDec()
			return closeSrc()
		},
	}, nil
}

// fetchBlob starts reading a layer's compressed bytes (rc, to close),
// hashed against its digest and size as they are read through vr: no more
// than the size the manifest states is read. That size is bounded too
// (compressedBound of limit, the bound on decompressed bytes): a layer
// that declares more is refused before a byte of it is fetched, so that a
// hostile registry fills neither a spool nor the disk.
func fetchBlob(l v1.Layer, limit int64, what string, progress io.Writer) (rc io.ReadCloser, vr *verifyReader, err error) {
	digest, err := l.Digest()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	size, _ := l.Size()
	if bound := compressedBound(limit); size > bound {
		return nil, nil, fmt.Errorf("%s declares %d compressed bytes, more than a layer of at most %d bytes (--max-size) can take (%d): refused before fetching it (raise --max-size if the package is really that large)",
			what, size, limit, bound)
	}
	if rc, err = l.Compressed(); err != nil {
		return nil, nil, fmt.Errorf("fetch %s: %w", what, err)
	}
	if vr, err = newVerifyReader(withProgress(rc, progress, "Pulling "+digest.String()[:19], size), digest, size, what); err != nil {
		rc.Close()
		return nil, nil, err
	}
	return rc, vr, nil
}

// compressedBound is the most compressed bytes a layer of at most limit
// decompressed bytes can take: gzip and zstd store incompressible data
// with a few bytes per 16-128 KiB block, far less than 1/128, plus headers.
func compressedBound(limit int64) int64 {
	if limit <= 0 || limit > math.MaxInt64/2 {
		return math.MaxInt64
	}
	return limit + limit/128 + 1<<20
}

// openUncompressed reads a layer of an image tarball, whose manifest
// names files, not digests: the uncompressed content is hashed against
// diffID, the layer's entry in the image config's rootfs.diff_ids.
func openUncompressed(l v1.Layer, diffID v1.Hash, limit int64, what string) (*openedLayer, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	vr, err := newVerifyReader(rc, diffID, 0, what)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return &openedLayer{
		tar:    newLimitReader(vr, limit, what),
		finish: vr.verify,
		close:  rc.Close,
	}, nil
}

// decompress picks gzip, zstd or plain tar by the stream's magic bytes.
func decompress(br *bufio.Reader, what string) (io.Reader, func(), error) {
	head, err := br.Peek(512)
	if err != nil && len(head) == 0 {
		return nil, nil, fmt.Errorf("%s is empty or unreadable: %w", what, err)
	}
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(br)
		switch {
		case errors.Is(err, gzip.ErrHeader):
			return nil, nil, fmt.Errorf("%s: bad gzip header: %w", what, err)
		case err != nil:
			// The stream broke off within the header: cut short, or its
			// source failed (a registry that stalled).
			return nil, nil, readError(what, err)
		}
		return zr, func() { zr.Close() }, nil
	case bytes.HasPrefix(head, zstdMagic):
		// The window a frame asks for is memory the decoder allocates:
		// bound it (package layers are far smaller than 64 MiB windows).
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: bad zstd header: %w", what, err)
		}
		return zr, zr.Close, nil
	case len(head) >= 262 && bytes.Equal(head[257:262], []byte("ustar")):
		return br, func() {}, nil
	}
	return nil, nil, fmt.Errorf("%s is not a gzip, zstd or tar stream", what)
}

// configDiffID is the diff ID the image config lists for layer l: what
// its uncompressed content must hash to.
func configDiffID(img v1.Image, l v1.Layer, what string) (v1.Hash, error) {
	m, err := img.Manifest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("read manifest of %s: %w", what, err)
	}
	d, err := l.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	i := slices.IndexFunc(m.Layers, func(desc v1.Descriptor) bool { return desc.Digest == d })
	cfg, err := configFile(img, what)
	if err != nil {
		return v1.Hash{}, err
	}
	if i < 0 || i >= len(cfg.RootFS.DiffIDs) {
		return v1.Hash{}, fmt.Errorf("the image config of %s lists %d diff IDs for %d layers: the layer cannot be verified", what, len(cfg.RootFS.DiffIDs), len(m.Layers))
	}
	return cfg.RootFS.DiffIDs[i], nil
}
