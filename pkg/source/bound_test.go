package source_test

import (
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// endlessRegistry serves one image whose layer blob is a gzip stream that
// never ends, under a manifest that states the layer's size as declared.
type endlessRegistry struct {
	manifest, config []byte
	configDigest     string
	layerDigest      string
	fetched          atomic.Int64 // blob requests
}

func (e *endlessRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v2/":
		w.WriteHeader(http.StatusOK)
	case strings.HasSuffix(r.URL.Path, "/manifests/v1"):
		w.Header().Set("Content-Type", string(types.OCIManifestSchema1))
		w.Write(e.manifest)
	case strings.HasSuffix(r.URL.Path, "/blobs/"+e.configDigest):
		w.Write(e.config)
	case strings.HasSuffix(r.URL.Path, "/blobs/"+e.layerDigest):
		e.fetched.Add(1)
		zw := gzip.NewWriter(w)
		buf := make([]byte, 64<<10)
		for i := 0; r.Context().Err() == nil && i < 1024; i++ { // 64 MiB at most: the test stops here at the latest
			rand.Read(buf)
			if _, err := zw.Write(buf); err != nil {
				return
			}
		}
	default:
		http.NotFound(w, r)
	}
}

func newEndlessRegistry(t *testing.T, declared int64) (*endlessRegistry, string) {
	t.Helper()
	img, err := fixture.Image(stream(t, "Provider"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	m = m.DeepCopy()
	m.MediaType = types.OCIManifestSchema1
	m.Layers[0].Size = declared
	e := &endlessRegistry{configDigest: m.Config.Digest.String(), layerDigest: m.Layers[0].Digest.String()}
	if e.manifest, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if e.config, err = img.RawConfigFile(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return e, strings.TrimPrefix(srv.URL, "http://") + "/hostile/endless:v1"
}

// TestCompressedBytesAreBounded: a hostile registry's layer whose gzip
// never ends, declared at 1 TiB: no more than the declared size is ever
// read, so such a layer is refused before a byte of it is fetched, and no
// spool grows without bound, whichever way the content is read (verified
// first, as extract to stdout reads it, or as a stream).
func TestCompressedBytesAreBounded(t *testing.T) {
	const maxSize = 1 << 20
	for _, verifyFirst := range []bool{true, false} {
		o := testOptions()
		o.MaxUncompressed = maxSize
		o.VerifyFirst = verifyFirst

		e, ref := newEndlessRegistry(t, 1<<40)
		_, _, err := readAll(t, ref, o)
		if err == nil || !strings.Contains(err.Error(), "declares 1099511627776 compressed bytes, more than a layer of at most 1048576 bytes (--max-size) can take") {
			t.Errorf("verify first %v, a layer declared at 1 TiB: %v", verifyFirst, err)
		}
		if n := e.fetched.Load(); n != 0 {
			t.Errorf("verify first %v: the 1 TiB layer was fetched %d times", verifyFirst, n)
		}
	}
}
