package ocicopy_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
)

// bigLayer is the size of the layer the streaming tests copy.
const bigLayer = 64 << 20

// generated is bigLayer pseudo-random bytes, the same each time, made as
// they are read: the test holds no copy of them.
func generated() io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{7}), bigLayer)
}

// serveBigImage makes src serve an image of one bigLayer layer, generated
// as it is sent, as src/big:v1.
func serveBigImage(t *testing.T, src *server) {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, generated()); err != nil {
		t.Fatal(err)
	}
	layer := "sha256:" + hex.EncodeToString(h.Sum(nil))
	config := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	cfg := sha(config)
	src.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/v2/src/big/blobs/" + layer:
			w.Header().Set("Content-Length", fmt.Sprint(bigLayer))
			_, _ = io.Copy(w, generated())
		case "/v2/src/big/blobs/" + cfg.String():
			_, _ = w.Write(config)
		default:
			return false
		}
		return true
	})
	raw := fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"config":{"mediaType":%q,"digest":%q,"size":%d},"layers":[{"mediaType":%q,"digest":%q,"size":%d}]}`,
		types.OCIManifestSchema1, types.OCIConfigJSON, cfg, len(config), types.OCILayer, layer, bigLayer)
	src.putRaw(t, "src/big:v1", []byte(raw), types.OCIManifestSchema1)
	src.reset()
}

// sink makes dst take blob uploads by hashing and dropping them (the
// in-memory registry would hold them), and say it has them afterwards.
func sink(dst *server) map[string]int64 {
	var mu sync.Mutex
	uploads := map[string]hash.Hash{}
	sizes := map[string]int64{}
	have := map[string]int64{}
	dst.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/blobs/uploads/"):
			h, ok := uploads[r.URL.Path]
			if !ok {
				h = sha256.New()
				uploads[r.URL.Path] = h
			}
			n, _ := io.Copy(h, r.Body)
			sizes[r.URL.Path] += n
			w.Header().Set("Location", r.URL.Path)
			w.Header().Set("Range", fmt.Sprintf("0-%d", sizes[r.URL.Path]-1))
			w.WriteHeader(http.StatusAccepted)
		case r.Method == http.MethodPut && uploads[r.URL.Path] != nil:
			d := r.URL.Query().Get("digest")
			if got := "sha256:" + hex.EncodeToString(uploads[r.URL.Path].Sum(nil)); got != d {
				http.Error(w, "digest mismatch", http.StatusBadRequest)
				return true
			}
			have[d] = sizes[r.URL.Path]
			w.Header().Set("Docker-Content-Digest", d)
			w.WriteHeader(http.StatusCreated)
		case r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/blobs/sha256:"):
			d := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
			if _, ok := have[d]; !ok {
				return false
			}
			w.Header().Set("Content-Length", fmt.Sprint(have[d]))
		default:
			return false
		}
		return true
	})
	return have
}

// allocated is how many bytes run allocates, on the heap, all goroutines
// together (the in-process registries' included).
func allocated(run func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	run()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestStreamed: copying a 64 MiB layer allocates a fraction of it, into a
// registry and into a layout: the layer streams through, never held.
func TestStreamed(t *testing.T) {
	src := newServer(t)
	serveBigImage(t, src)
	from := regSource(src.ref(t, "src/big:v1"))
	c := &ocicopy.Copier{}

	t.Run("registry", func(t *testing.T) {
		dst := newServer(t)
		have := sink(dst)
		var res ocicopy.Result
		var err error
		n := allocated(func() { res, err = c.ToRegistry(background(), from, dst.ref(t, "mirror/big:v1"), opts()) })
		if err != nil {
			t.Fatal(err)
		}
		if res.BytesSent < bigLayer || len(have) != 2 {
			t.Errorf("result %+v, blobs received %v", res, have)
		}
		if n > bigLayer/4 {
			t.Errorf("copying a %d-byte layer allocated %d bytes", bigLayer, n)
		}
		t.Logf("allocated %d bytes for a %d-byte layer", n, bigLayer)
	})
	t.Run("layout", func(t *testing.T) {
		l, err := ocicopy.OpenLayout(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var res ocicopy.Result
		n := allocated(func() { res, err = c.ToLayout(background(), from, l, "big") })
		if err != nil {
			t.Fatal(err)
		}
		if res.BytesSent < bigLayer {
			t.Errorf("result %+v", res)
		}
		if n > bigLayer/4 {
			t.Errorf("copying a %d-byte layer allocated %d bytes", bigLayer, n)
		}
		t.Logf("allocated %d bytes for a %d-byte layer", n, bigLayer)
	})
}
