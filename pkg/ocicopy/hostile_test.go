package ocicopy_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
)

// refused copies src to a fresh registry and checks that it fails with
// an error of one line naming the source and holding each of want, and
// that nothing was written to the destination.
func refused(t *testing.T, c *ocicopy.Copier, src ocicopy.Source, want ...string) {
	t.Helper()
	dst := newServer(t)
	_, err := c.ToRegistry(background(), src, dst.ref(t, "mirror/x:v1"), opts())
	if err == nil {
		t.Fatal("the copy succeeded")
	}
	msg := err.Error()
	t.Log(msg)
	for _, w := range append(want, src.String()) {
		if !strings.Contains(msg, w) {
			t.Errorf("the error does not say %q: %s", w, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("the error is more than a line: %s", msg)
	}
	if w := dst.writes(); len(w) > 0 {
		t.Errorf("written to the destination: %q", w)
	}
}

func small() *ocicopy.Copier { return &ocicopy.Copier{Limits: ocicopy.Limits{MaxManifestBytes: 4096}} }

// TestOversizedManifest: a manifest past the limit is refused on the size
// the registry states, before it is fetched.
func TestOversizedManifest(t *testing.T) {
	src := newServer(t)
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.Annotations(img, map[string]string{"padding": strings.Repeat("x", 8192)}).(v1.Image)
	from := src.push(t, "src/big:v1", img)
	refused(t, small(), regSource(from), "refusing manifests over 4096 bytes")
	if n := src.count("GET /v2/src/big/manifests/"); n != 0 {
		t.Errorf("the manifest was fetched %d times", n)
	}
}

// TestOversizedManifestBody: a registry that states no size (no HEAD, a
// chunked answer) is cut off once its manifest passes the limit.
func TestOversizedManifestBody(t *testing.T) {
	src := newServer(t)
	src.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/v2/evil/manifests/v1" {
			return false
		}
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return true
		}
		w.Header().Set("Content-Type", string(types.OCIManifestSchema1))
		_, _ = w.Write([]byte(`{"schemaVersion":2,"annotations":{"padding":"`))
		for range 1024 { // 1 MiB, unless the client hangs up
			w.(http.Flusher).Flush()
			if _, err := w.Write(bytes.Repeat([]byte("x"), 1024)); err != nil {
				break
			}
		}
		return true
	})
	refused(t, small(), regSource(src.ref(t, "evil:v1")), "refusing manifests over 4096 bytes", src.host+"/evil:v1")
}

// TestOversizedChild: an index's child that says it is past the limit is
// refused before it is fetched.
func TestOversizedChild(t *testing.T) {
	src := newServer(t)
	img, _ := random.Image(64, 1)
	d, _ := img.Digest()
	src.push(t, "src/x@"+d.String(), img)
	raw := []byte(fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"manifests":[{"mediaType":%q,"digest":%q,"size":%d}]}`,
		types.OCIImageIndex, types.OCIManifestSchema1, d, 10<<20))
	src.putRaw(t, "src/x:v1", raw, types.OCIImageIndex)
	src.reset()
	refused(t, small(), regSource(src.ref(t, "src/x:v1")), d.String(), "refusing manifests over 4096 bytes")
	if n := src.count("GET /v2/src/x/manifests/" + d.String()); n != 0 {
		t.Errorf("the child was fetched")
	}
}

// TestLyingRegistry: a registry that serves, for a digest, an index
// listing that digest as its own child (bytes that cannot hash to it) is
// caught by the digest check.
func TestLyingRegistry(t *testing.T) {
	src := newServer(t)
	claimed := sha([]byte("not the index"))
	raw := []byte(fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"manifests":[{"mediaType":%q,"digest":%q,"size":200}]}`,
		types.OCIImageIndex, types.OCIImageIndex, claimed))
	src.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, "/v2/evil/manifests/") {
			return false
		}
		w.Header().Set("Content-Type", string(types.OCIImageIndex))
		w.Header().Set("Docker-Content-Digest", claimed.String())
		w.Header().Set("Content-Length", fmt.Sprint(len(raw)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(raw)
		}
		return true
	})
	refused(t, &ocicopy.Copier{}, regSource(src.ref(t, "evil:v1")), claimed.String())
}

// nested is n indexes, each holding the next, around one image.
func nested(t *testing.T, n int) (v1.ImageIndex, []v1.Hash) {
	t.Helper()
	img, _ := random.Image(64, 1)
	var idx v1.ImageIndex = mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img})
	var digests []v1.Hash
	for range n - 1 {
		idx = mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: idx})
	}
	for inner := idx; ; {
		d, _ := inner.Digest()
		digests = append(digests, d)
		im, _ := inner.IndexManifest()
		next, err := inner.ImageIndex(im.Manifests[0].Digest)
		if err != nil || !im.Manifests[0].MediaType.IsIndex() {
			return idx, digests // outermost first
		}
		inner = next
	}
}

// TestTooDeep: an index nested past MaxDepth is refused before the index
// too deep is fetched; within the limit the copy works.
func TestTooDeep(t *testing.T) {
	src := newServer(t)
	idx, digests := nested(t, 5)
	from := src.push(t, "src/deep:v1", idx)
	refused(t, &ocicopy.Copier{}, regSource(from), digests[4].String(), "nested 5 levels deep", "more than 4 levels")
	if n := src.count("GET /v2/src/deep/manifests/" + digests[4].String()); n != 0 {
		t.Error("the index too deep was fetched")
	}
	c := &ocicopy.Copier{Limits: ocicopy.Limits{MaxDepth: 5}}
	if _, err := c.ToRegistry(background(), regSource(from), newServer(t).ref(t, "mirror/deep:v1"), opts()); err != nil {
		t.Errorf("within the limit: %v", err)
	}
}

// TestTooManyManifests: an index with more children than MaxManifests
// allows is refused before any is fetched.
func TestTooManyManifests(t *testing.T) {
	src := newServer(t)
	idx, err := random.Index(64, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	from := src.push(t, "src/many:v1", idx)
	c := &ocicopy.Copier{Limits: ocicopy.Limits{MaxManifests: 3}}
	refused(t, c, regSource(from), "more than 3 manifests")
	im, _ := idx.IndexManifest()
	for _, ch := range im.Manifests {
		if src.count("GET /v2/src/many/manifests/"+ch.Digest.String()) != 0 {
			t.Errorf("the child %s was fetched", ch.Digest)
		}
	}
	c.Limits.MaxManifests = 4
	if _, err := c.Inspect(background(), regSource(from)); err != nil {
		t.Errorf("within the limit: %v", err)
	}
}

// TestUnknownMediaType: an index child that is neither an image nor an
// index cannot be copied whole, and is refused.
func TestUnknownMediaType(t *testing.T) {
	src := newServer(t)
	raw := []byte(fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"manifests":[{"mediaType":"application/vnd.example.thing+json","digest":%q,"size":10}]}`,
		types.OCIImageIndex, sha([]byte("thing"))))
	src.putRaw(t, "src/odd:v1", raw, types.OCIImageIndex)
	refused(t, &ocicopy.Copier{}, regSource(src.ref(t, "src/odd:v1")), `media type "application/vnd.example.thing+json"`)
}

// TestCorruptLayout: a layout blob whose content does not match its name
// fails the copy naming it; a corrupt manifest fails it before anything
// is written; a corrupt layer is never committed nor given its name.
func TestCorruptLayout(t *testing.T) {
	src := newServer(t)
	idx := multiPlatform(t)
	from := src.push(t, "src/provider:v1", idx)
	dir := t.TempDir()
	l, err := ocicopy.OpenLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&ocicopy.Copier{}).ToLayout(background(), regSource(from), l, "provider"); err != nil {
		t.Fatal(err)
	}
	root, _ := idx.Digest()
	layer := baseLayer(t, idx)
	corrupt(t, dir, layer)
	fromLayout := ocicopy.Source{LayoutDir: dir, Digest: root}

	dst := newServer(t)
	_, err = (&ocicopy.Copier{}).ToRegistry(background(), fromLayout, dst.ref(t, "mirror/provider:v1"), opts())
	if err == nil || !strings.Contains(err.Error(), layer.String()+" is corrupt") {
		t.Errorf("error %v", err)
	}
	if committed(dst)[layer.String()] || headDigest(t, dst.ref(t, "mirror/provider:v1")) != "" {
		t.Error("the corrupt layer was committed, or the image tagged")
	}
	other, _ := ocicopy.OpenLayout(t.TempDir())
	if _, err := (&ocicopy.Copier{}).ToLayout(background(), fromLayout, other, "provider"); err == nil {
		t.Error("copied a corrupt layer into a layout")
	}
	if _, err := os.Stat(filepath.Join(other.Dir(), "blobs", "sha256", layer.Hex)); !os.IsNotExist(err) {
		t.Errorf("the corrupt layer is in the layout under its name: %v", err)
	}
	layoutBlobsSound(t, other.Dir())

	child := children(t, rawManifest(t, from))[1].Digest
	corrupt(t, dir, child)
	refused(t, &ocicopy.Copier{}, fromLayout, child.String()+" is corrupt")
}

// corrupt changes a layout blob's content, keeping its size.
func corrupt(t *testing.T, dir string, d v1.Hash) {
	t.Helper()
	path := filepath.Join(dir, "blobs", d.Algorithm, d.Hex)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptRegistryBlob: a registry that serves other bytes for a
// blob, of the same length or more, fails the copy naming the blob, and
// the destination commits none of it.
func TestCorruptRegistryBlob(t *testing.T) {
	for name, mangle := range map[string]func([]byte) []byte{
		"one byte flipped": func(b []byte) []byte { b = append([]byte(nil), b...); b[len(b)/2] ^= 0xff; return b },
		"longer":           func(b []byte) []byte { return append(append([]byte(nil), b...), "trailing"...) },
		"shorter":          func(b []byte) []byte { return b[:len(b)-1] },
	} {
		t.Run(name, func(t *testing.T) {
			src := newServer(t)
			idx := multiPlatform(t)
			from := src.push(t, "src/provider:v1", idx)
			d := baseLayer(t, idx)
			body := mangle(blobBytes(t, idx, d))
			src.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+d.String()) {
					return false
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
				_, _ = w.Write(body)
				return true
			})
			dst := newServer(t)
			to := dst.ref(t, "mirror/provider:v1")
			_, err := (&ocicopy.Copier{}).ToRegistry(background(), regSource(from), to, opts())
			if err == nil || !strings.Contains(err.Error(), d.String()) {
				t.Fatalf("a corrupt blob copied: %v", err)
			}
			if committed(dst)[d.String()] {
				t.Errorf("the destination committed the corrupt blob %s", d)
			}
			if got := headDigest(t, to); got != "" {
				t.Errorf("the destination has the tag: %s", got)
			}
		})
	}
}
