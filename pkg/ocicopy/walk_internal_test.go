package ocicopy

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// fakeReader serves manifests by digest without checking them: what a
// source that lies and a check that misses would let through.
type fakeReader map[v1.Hash]string

func (f fakeReader) resolve(context.Context) (v1.Descriptor, error) { return v1.Descriptor{}, nil }

func (f fakeReader) manifest(_ context.Context, d v1.Descriptor) ([]byte, types.MediaType, error) {
	return []byte(f[d.Digest]), "", nil
}

func (f fakeReader) blob(context.Context, v1.Descriptor) (io.ReadCloser, bool, error) {
	return nil, false, fmt.Errorf("no blobs")
}

func (f fakeReader) name() string { return "fake" }

func label(s string) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%064x", s)[:64]}
}

func index(children ...v1.Hash) string {
	var ds []string
	for _, c := range children {
		ds = append(ds, fmt.Sprintf(`{"mediaType":%q,"digest":%q,"size":0}`, types.OCIImageIndex, c))
	}
	return fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"manifests":[%s]}`, types.OCIImageIndex, strings.Join(ds, ","))
}

// TestCycleRefused: with the digest check out of the way, an index that
// lists itself, or an ancestor, is refused by the cycle check before the
// child is fetched again, rather than walked for ever.
func TestCycleRefused(t *testing.T) {
	a, b := label("a"), label("b")
	for name, r := range map[string]fakeReader{
		"itself":      {a: index(a)},
		"an ancestor": {a: index(b), b: index(a)},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWalker(r, Limits{}.withDefaults())
			w.check = func([]byte, v1.Hash, string) error { return nil }
			_, err := w.walk(context.Background(), v1.Descriptor{Digest: a, MediaType: types.OCIImageIndex})
			if err == nil || !strings.Contains(err.Error(), "refusing a cyclic image") || !strings.Contains(err.Error(), a.String()) {
				t.Errorf("error %v", err)
			}
		})
	}
}

// TestSharedChildWalkedOnce: a manifest two indexes list (no cycle) is
// read and counted once.
func TestSharedChildWalkedOnce(t *testing.T) {
	root, left, right, img, cfg := label("root"), label("left"), label("right"), label("img"), label("cfg")
	image := fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"config":{"mediaType":%q,"digest":%q,"size":3},"layers":[]}`,
		types.OCIManifestSchema1, types.OCIConfigJSON, cfg)
	imgChild := strings.Replace(index(img), string(types.OCIImageIndex)+`","digest`, string(types.OCIManifestSchema1)+`","digest`, 1)
	r := fakeReader{root: index(left, right), left: imgChild, right: imgChild, img: image}
	w := newWalker(r, Limits{}.withDefaults())
	w.check = func([]byte, v1.Hash, string) error { return nil }
	tr, err := w.walk(context.Background(), v1.Descriptor{Digest: root, MediaType: types.OCIImageIndex})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.manifests) != 4 || len(tr.blobs) != 1 || tr.manifests[len(tr.manifests)-1].desc.Digest != root || tr.manifests[0].desc.Digest != img {
		t.Errorf("manifests %d (root last, image first), blobs %d", len(tr.manifests), len(tr.blobs))
	}
}
