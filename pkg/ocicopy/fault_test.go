package ocicopy_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
)

// TestDestinationFault: a registry that refuses one blob fails the copy
// with an error naming the destination and the blob, reports nothing
// copied, and leaves the tag absent; the next run sends only what the
// first did not commit.
func TestDestinationFault(t *testing.T) {
	src, dst := newServer(t), newServer(t)
	idx := multiPlatform(t)
	from := src.push(t, "src/provider:v1", idx)
	layer := baseLayer(t, idx)
	dst.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut || r.URL.Query().Get("digest") != layer.String() {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"errors":[{"code":"UNKNOWN","message":"no space left on device"}]}`))
		return true
	})
	to := dst.ref(t, "mirror/provider:v1")
	img, err := (&ocicopy.Copier{}).Inspect(background(), regSource(from))
	if err != nil {
		t.Fatal(err)
	}
	var progress atomic.Int64
	// One blob at a time: what is committed before the fault is known.
	c := &ocicopy.Copier{Jobs: 1, OnProgress: func(d int64) { progress.Add(d) }}
	res, err := c.ToRegistry(background(), regSource(from), to, opts())
	if err == nil {
		t.Fatal("the copy succeeded")
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{to.Name(), layer.String(), "no space left on device"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not name %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") || !reflect.DeepEqual(res, ocicopy.Result{}) || headDigest(t, to) != "" {
		t.Errorf("after the fault: result %+v, error %q, destination %q", res, msg, headDigest(t, to))
	}
	first := committed(dst)
	var sent int64
	for _, b := range img.Blobs {
		if first[b.Digest.String()] {
			sent += b.Size
		}
	}
	if len(first) == 0 || first[layer.String()] || progress.Load() != sent {
		t.Errorf("committed %v; progress %d, want %d: the refused blob's bytes are taken back", first, progress.Load(), sent)
	}

	dst.setIntercept(nil)
	dst.reset()
	res, err = c.ToRegistry(background(), regSource(from), to, opts())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	if headDigest(t, to) != want.String() || res.BlobsSent+res.BlobsPresent != 3 || res.BlobsPresent != len(first) {
		t.Errorf("rerun %+v after %d blobs committed", res, len(first))
	}
	for d := range committed(dst) {
		if first[d] {
			t.Errorf("the blob %s was sent twice", d)
		}
	}
}

// baseLayer is the layer both platforms of multiPlatform share.
func baseLayer(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	im, _ := idx.IndexManifest()
	img, _ := idx.Image(im.Manifests[0].Digest)
	m, _ := img.Manifest()
	return m.Layers[0].Digest
}

// committed are the blobs a registry accepted (the last PUT of an upload).
func committed(s *server) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, d := range s.committed {
		out[d] = true
	}
	return out
}

// blockBlob makes s send half of the blob d, then hold the request until
// the client goes; started is closed when it holds.
func blockBlob(s *server, d v1.Hash, body []byte) <-chan struct{} {
	started := make(chan struct{})
	s.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+d.String()) {
			return false
		}
		_, _ = w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		return true
	})
	return started
}

// TestCancelMidBlob: a copy cancelled in the middle of a blob returns the
// context's error; the registry has no tag, the layout no entry and no
// part of the blob under its name.
func TestCancelMidBlob(t *testing.T) {
	src := newServer(t)
	idx := multiPlatform(t)
	from := src.push(t, "src/provider:v1", idx)
	layer := baseLayer(t, idx)
	body := blobBytes(t, idx, layer)

	t.Run("registry", func(t *testing.T) {
		dst := newServer(t)
		to := dst.ref(t, "mirror/provider:v1")
		err := cancelWhen(t, blockBlob(src, layer, body), func(ctx context.Context) error {
			_, err := (&ocicopy.Copier{}).ToRegistry(ctx, regSource(from), to, opts())
			return err
		})
		if !errors.Is(err, context.Canceled) || headDigest(t, to) != "" {
			t.Errorf("error %v, destination %q", err, headDigest(t, to))
		}
	})
	t.Run("layout", func(t *testing.T) {
		l, err := ocicopy.OpenLayout(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		err = cancelWhen(t, blockBlob(src, layer, body), func(ctx context.Context) error {
			_, err := (&ocicopy.Copier{}).ToLayout(ctx, regSource(from), l, "provider")
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v", err)
		}
		if entries, err := ocicopy.ReadLayout(l.Dir()); err != nil || len(entries) != 0 {
			t.Errorf("entries %+v, %v", entries, err)
		}
		if _, err := os.Stat(filepath.Join(l.Dir(), "blobs", "sha256", layer.Hex)); !os.IsNotExist(err) {
			t.Errorf("the cancelled blob is under its name: %v", err)
		}
		layoutBlobsSound(t, l.Dir())
	})
}

// cancelWhen runs copy, and cancels its context once started is closed.
func cancelWhen(t *testing.T, started <-chan struct{}, copy func(context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithCancel(background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- copy(ctx) }()
	select {
	case <-started:
		cancel()
		return <-done
	case err := <-done:
		t.Fatalf("the copy ended before the blob was held: %v", err)
		return nil
	}
}

func blobBytes(t *testing.T, idx v1.ImageIndex, d v1.Hash) []byte {
	t.Helper()
	im, _ := idx.IndexManifest()
	img, _ := idx.Image(im.Manifests[0].Digest)
	l, err := img.LayerByDigest(d)
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := l.Compressed()
	defer rc.Close()
	b := make([]byte, 0, 1024)
	buf := make([]byte, 512)
	for {
		n, err := rc.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			return b
		}
	}
}

// TestCopyCheckedAtTheEnd: a destination that resolves to another digest
// after the copy (a registry rewriting manifests) fails it.
func TestCopyCheckedAtTheEnd(t *testing.T) {
	src, dst := newServer(t), newServer(t)
	from := src.push(t, "src/provider:v1", multiPlatform(t))
	to := dst.ref(t, "mirror/provider:v1")
	var heads atomic.Int32
	dst.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodHead || r.URL.Path != "/v2/mirror/provider/manifests/v1" || heads.Add(1) == 1 {
			return false // the first HEAD finds nothing
		}
		w.Header().Set("Docker-Content-Digest", "sha256:"+strings.Repeat("1", 64))
		w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
		w.Header().Set("Content-Length", "100")
		return true
	})
	_, err := (&ocicopy.Copier{}).ToRegistry(background(), regSource(from), to, opts())
	if err == nil || !strings.Contains(err.Error(), "resolves to sha256:1111") {
		t.Errorf("error %v", err)
	}
}
