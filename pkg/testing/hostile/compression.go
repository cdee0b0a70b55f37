package hostile

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// BombSize is how far the decompression bombs expand: far past the
// default --max-size (1 GiB).
const BombSize = 8 << 30

// compressionCases are layers whose compressed bytes are hostile or broken.
func compressionCases(b *builder) {
	// 8 GiB of zeros in a file before package.yaml.
	head, tail := tarHeader(b, "filler", BombSize), tarOf(b, pkgFile)
	b.add(Case{Name: "gzip-bomb", About: "an 8 MB gzip layer expanding to 8 GiB of zeros before package.yaml",
		Artifact: b.based(fixture.RawLayer(gzFlood(head, []byte{0}, BombSize, tail))), Want: "decompresses to more than 1073741824 bytes"})

	// The same as zstd, whose frames declare the window the decoder keeps:
	// here the largest zstd readers accept by default, 512 MiB.
	zst := zstdBomb(head, BombSize, tail)
	zl := fixture.RawLayer(zst)
	zd, err := zl.Digest()
	b.fail("zstd bomb", err)
	b.add(Case{Name: "zstd-bomb", About: "a 256 KiB zstd layer with a 512 MiB window expanding to 8 GiB of zeros before package.yaml",
		// --max-size keeps the bomb's run short; the window alone makes
		// decoders hold 512 MiB.
		Artifact: b.based(zl), Want: "layer " + zd.String(), Flags: []string{"--max-size=520Mi"}})

	b.add(Case{Name: "not-gzip", About: "a base layer of plain text served as a gzip layer",
		Artifact: b.based(fixture.RawLayer([]byte(strings.Repeat("this is not a compressed tar stream\n", 40)))), Want: "is not a gzip, zstd or tar stream"})

	// A gzip header, then a deflate block of the reserved type 3.
	b.add(Case{Name: "corrupt-gzip", About: "a gzip header followed by an invalid deflate block",
		Artifact: b.based(fixture.RawLayer(append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, bytes.Repeat([]byte{0xff}, 64)...))), Want: "bad gzip data"})

	// package.yaml, then 64 KiB of noise; cut in the noise.
	noisy := gz(tarOf(b, pkgFile, fixture.File{Name: "bin/provider", Body: noise(64 << 10)}))
	b.add(Case{Name: "truncated-layer", About: "a gzip layer cut in half, after package.yaml: found when the layer is read to its end",
		Artifact: b.based(fixture.RawLayer(noisy[:len(noisy)/2])), Want: "is truncated"})

	// An uncompressed tar (readers take it by its magic bytes) whose middle
	// byte falls in a padding file: served with that byte flipped, the tar
	// still reads and only the digest tells.
	plain := fixture.RawLayer(tarOf(b, pkgFile, fixture.File{Name: "README", Body: bytes.Repeat([]byte("x"), 64<<10)}))
	pd, err := plain.Digest()
	b.fail("digest mismatch", err)
	b.add(Case{Name: "digest-mismatch", About: "a layer served with one byte changed, so that it no longer matches its digest",
		Artifact: b.based(plain), Want: pd.String(), CorruptBlob: pd})
}

// tarHeader is the header of a regular file of size bytes, as a tar
// stream holds it before the file's content.
func tarHeader(b *builder, name string, size int64) []byte {
	var h bytes.Buffer
	tw := tar.NewWriter(&h)
	b.fail("tar", tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size, ModTime: time.Unix(0, 0)}))
	// The header is written at once; the writer is dropped unclosed.
	return bytes.Clone(h.Bytes())
}

// gzFlood is head, size bytes of unit repeated, and tail, as concatenated
// gzip members (which gzip readers read as one stream): a member of 1 MiB
// of units, which compresses to about 1 KiB, is made once and repeated.
// size is a multiple of 1 MiB, and 1 MiB a multiple of len(unit).
func gzFlood(head, unit []byte, size int64, tail []byte) []byte {
	const chunk = 1 << 20
	member := gz(bytes.Repeat(unit, chunk/len(unit)))
	var out bytes.Buffer
	out.Write(gz(head))
	for range size / chunk {
		out.Write(member)
	}
	out.Write(gz(tail))
	return out.Bytes()
}

// zstdBomb is one zstd frame: head as a raw block, size zeros as RLE blocks
// of 128 KiB (4 bytes each), tail as the last raw block.
func zstdBomb(head []byte, size int64, tail []byte) []byte {
	const block = 128 << 10
	// Magic, a frame header descriptor without content size, checksum or
	// dictionary, and a window descriptor of exponent 19: 2^(10+19) bytes.
	out := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 19 << 3}
	blockHeader := func(typ, size uint32, last bool) {
		h := size<<3 | typ<<1
		if last {
			h |= 1
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16))
	}
	blockHeader(0, uint32(len(head)), false)
	out = append(out, head...)
	for n := int64(0); n < size; n += block {
		blockHeader(1, block, false)
		out = append(out, 0)
	}
	blockHeader(0, uint32(len(tail)), true)
	return append(out, tail...)
}

// gz is b, gzip-compressed.
func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// noise is n bytes that do not compress, the same each time.
func noise(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(r.Uint32())
	}
	return out
}

// gzStream is an image whose base layer holds package.yaml with stream,
// compressed once (fixture.Image compresses on every read, which large
// streams make slow).
func (b *builder) gzStream(stream []byte) v1.Image {
	return b.based(fixture.RawLayer(gz(tarOf(b, fixture.File{Name: fixture.StreamFile, Body: stream}))))
}
