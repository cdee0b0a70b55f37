package ocicopy_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// TestIndexCopiedWhole: a two-platform index arrives with every manifest
// byte for byte (so every digest is the source's), the base layer's
// annotation intact, each blob sent once, and progress adding up.
func TestIndexCopiedWhole(t *testing.T) {
	src, dst := newServer(t), newServer(t)
	idx := multiPlatform(t)
	want, _ := idx.Digest()
	from := src.push(t, "src/provider:v1", idx)
	to := dst.ref(t, "mirror/provider:v1")

	var progress atomic.Int64
	c := &ocicopy.Copier{OnProgress: func(d int64) { progress.Add(d) }}
	res, err := c.ToRegistry(background(), regSource(from), to, opts())
	if err != nil {
		t.Fatal(err)
	}
	if got := headDigest(t, to); got != want.String() || res.Image.Digest != want {
		t.Fatalf("destination %s, result %s, want %s", got, res.Image.Digest, want)
	}
	img := res.Image
	if img.Manifests != 3 || len(img.Blobs) != 3 || !slices.Equal(img.Platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("image %+v", img)
	}
	if res.Skipped || res.BlobsSent != 3 || res.BlobsPresent != 0 || res.BytesSent != progress.Load() || res.BytesSent == 0 {
		t.Errorf("result %+v, progress %d", res, progress.Load())
	}
	raw := rawManifest(t, to)
	if !bytes.Equal(raw, rawManifest(t, from)) {
		t.Error("the index's bytes changed")
	}
	for _, c := range children(t, raw) {
		got := rawManifest(t, to.Context().Digest(c.Digest.String()))
		if !bytes.Equal(got, rawManifest(t, from.Context().Digest(c.Digest.String()))) {
			t.Errorf("the manifest %s changed", c.Digest)
		}
		var m v1.Manifest
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatal(err)
		}
		if m.Layers[0].Annotations[fixture.AnnotationKey] != fixture.BaseLayer {
			t.Errorf("the manifest %s lost its base layer annotation: %v", c.Digest, m.Layers[0].Annotations)
		}
	}
}

// TestSecondCopySkipped: a destination that already resolves to the
// source's digest costs one HEAD at each end, and nothing is sent.
func TestSecondCopySkipped(t *testing.T) {
	src, dst := newServer(t), newServer(t)
	from := src.push(t, "src/provider:v1", multiPlatform(t))
	to := dst.ref(t, "mirror/provider:v1")
	c := &ocicopy.Copier{}
	if _, err := c.ToRegistry(background(), regSource(from), to, opts()); err != nil {
		t.Fatal(err)
	}
	want := headDigest(t, to)
	src.reset()
	dst.reset()
	res, err := c.ToRegistry(background(), regSource(from), to, opts())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Skipped || res.BlobsSent != 0 || res.Image.Digest.String() != want {
		t.Errorf("second copy %+v", res)
	}
	if got := src.requests(); !slices.Equal(got, []string{"HEAD /v2/src/provider/manifests/v1"}) {
		t.Errorf("source requests %q", got)
	}
	if got := dst.requests(); !slices.Equal(got, []string{"HEAD /v2/mirror/provider/manifests/v1"}) {
		t.Errorf("destination requests %q", got)
	}
}

// TestPresentBlobsNotSent: blobs the destination repository has already
// (here one platform's image) are not sent again; the rest are.
func TestPresentBlobsNotSent(t *testing.T) {
	src, dst := newServer(t), newServer(t)
	idx := multiPlatform(t)
	from := src.push(t, "src/provider:v1", idx)
	im, _ := idx.IndexManifest()
	amd64, _ := idx.Image(im.Manifests[0].Digest)
	dst.push(t, "mirror/provider:amd64", amd64)
	arm64, _ := idx.Image(im.Manifests[1].Digest)
	armConfig, _ := arm64.ConfigName()

	to := dst.ref(t, "mirror/provider:v1")
	res, err := (&ocicopy.Copier{}).ToRegistry(background(), regSource(from), to, opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.BlobsSent != 1 || res.BlobsPresent != 2 {
		t.Errorf("sent %d, present %d; want 1 and 2", res.BlobsSent, res.BlobsPresent)
	}
	commits := slices.DeleteFunc(dst.writes(), func(s string) bool { return !strings.Contains(s, "?digest=") })
	if want := []string{"PUT /v2/mirror/provider/blobs/uploads/?digest=" + armConfig.String()}; len(commits) != 1 || !strings.HasSuffix(commits[0], "?digest="+armConfig.String()) {
		t.Errorf("blobs committed %q, want %q", commits, want)
	}
	if headDigest(t, to) == "" {
		t.Error("nothing at the destination")
	}
}

// TestSourceByDigestOrWithoutHead: a source pinned by digest is read
// without resolving it; a registry that refuses HEAD is read by tag, and
// the digest its bytes hash to is the one copied.
func TestSourceByDigestOrWithoutHead(t *testing.T) {
	src, dst := newServer(t), newServer(t)
	idx := multiPlatform(t)
	want, _ := idx.Digest()
	from := src.push(t, "src/provider:v1", idx)
	pinned := from.Context().Digest(want.String())
	to := dst.ref(t, "mirror/provider@"+want.String())
	if _, err := (&ocicopy.Copier{}).ToRegistry(background(), regSource(pinned), to, opts()); err != nil {
		t.Fatal(err)
	}
	if n := src.count("HEAD "); n != 0 || headDigest(t, to) != want.String() {
		t.Errorf("%d HEAD requests to the source; destination %s", n, headDigest(t, to))
	}

	src.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodHead || !strings.Contains(r.URL.Path, "/manifests/") {
			return false
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
		return true
	})
	tagged := dst.ref(t, "mirror/provider:v1")
	res, err := (&ocicopy.Copier{}).ToRegistry(background(), regSource(from), tagged, opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.Image.Digest != want || headDigest(t, tagged) != want.String() || res.BlobsPresent != 3 {
		t.Errorf("without HEAD: %+v", res)
	}
}

// TestDigestDestinationMustMatch: a destination pinned by digest must be
// the source's digest.
func TestDigestDestinationMustMatch(t *testing.T) {
	src, dst := newServer(t), newServer(t)
	from := src.push(t, "src/provider:v1", multiPlatform(t))
	other := dst.ref(t, "mirror/provider@sha256:"+strings.Repeat("0", 64))
	_, err := (&ocicopy.Copier{}).ToRegistry(background(), regSource(from), other, opts())
	if err == nil || !strings.Contains(err.Error(), "copy to a tag or to the source's digest") {
		t.Fatalf("error %v", err)
	}
	if w := dst.writes(); len(w) > 0 {
		t.Errorf("written: %q", w)
	}
}

// TestInspect reads the manifests and no blob.
func TestInspect(t *testing.T) {
	src := newServer(t)
	idx := multiPlatform(t)
	want, _ := idx.Digest()
	from := src.push(t, "src/provider:v1", idx)
	img, err := (&ocicopy.Copier{}).Inspect(background(), regSource(from))
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, b := range img.Blobs {
		sum += b.Size
	}
	if img.Digest != want || img.Manifests != 3 || len(img.Blobs) != 3 || img.Bytes <= sum || !img.MediaType.IsIndex() {
		t.Errorf("inspected %+v", img)
	}
	if n := src.count("GET /v2/src/provider/blobs/"); n != 0 {
		t.Errorf("%d blobs fetched", n)
	}
}
