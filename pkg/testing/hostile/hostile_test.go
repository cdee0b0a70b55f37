package hostile

import (
	"archive/tar"
	"bytes"
	"io"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func TestCorpus(t *testing.T) {
	corpus, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 30 {
		t.Errorf("%d cases, want at least 30", len(corpus))
	}
	byName := map[string]Case{}
	var onDisk int64
	for _, c := range corpus {
		byName[c.Name] = c
		if c.KindKnown && c.Outcome != BreaksRules {
			t.Errorf("%s: KindKnown is for packages that break only content rules", c.Name)
		}
		onDisk += blobBytes(t, c.Artifact)
	}
	// What the hardening issue asks the corpus to hold, at least.
	for _, name := range []string{
		"path-traversal", "absolute-path", "escaping-symlink", "escaping-hardlink", "char-device",
		"gzip-bomb", "alias-bomb", "giant-document", "deep-nesting", "duplicate-package-yaml",
		"missing-package-yaml", "empty-index", "index-without-platform", "nested-index", "two-base-layers",
		"wrong-meta-kind", "disallowed-kinds", "digest-mismatch", "truncated-layer", "not-gzip", "non-utf8",
	} {
		if _, ok := byName[name]; !ok {
			t.Errorf("no case %s", name)
		}
	}
	if onDisk > 16<<20 {
		t.Errorf("the corpus takes %d MB of blobs, want it small", onDisk>>20)
	}
	if c := byName["digest-mismatch"]; c.CorruptBlob.Hex == "" {
		t.Error("digest-mismatch names no blob to corrupt")
	}
}

// TestBombsExpand reads the start of each decompression bomb: a tar header
// for a file of BombSize bytes, then zeros.
func TestBombsExpand(t *testing.T) {
	corpus, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range corpus {
		var open func(io.Reader) (io.Reader, error)
		switch c.Name {
		case "gzip-bomb":
			open = func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }
		case "zstd-bomb":
			open = func(r io.Reader) (io.Reader, error) { return zstd.NewReader(r, zstd.WithDecoderConcurrency(1)) }
		default:
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			layers, err := c.Artifact.(v1.Image).Layers()
			if err != nil {
				t.Fatal(err)
			}
			rc, err := layers[0].Compressed()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			plain, err := open(rc)
			if err != nil {
				t.Fatal(err)
			}
			tr := tar.NewReader(plain)
			hdr, err := tr.Next()
			if err != nil || hdr.Name != "filler" || hdr.Size != BombSize {
				t.Fatalf("first entry %+v, %v; want filler of %d bytes", hdr, err, int64(BombSize))
			}
			head := make([]byte, 4<<20)
			if _, err := io.ReadFull(tr, head); err != nil || !bytes.Equal(head, make([]byte, len(head))) {
				t.Errorf("filler does not start with zeros: %v", err)
			}
		})
	}
}

// blobBytes is the size of an artifact's layers as stored.
func blobBytes(t *testing.T, a any) int64 {
	t.Helper()
	img, ok := a.(v1.Image)
	if !ok {
		return 0 // the indexes hold small images
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, l := range layers {
		s, err := l.Size()
		if err != nil {
			t.Fatal(err)
		}
		n += s
	}
	return n
}
