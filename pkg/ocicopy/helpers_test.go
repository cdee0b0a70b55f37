package ocicopy_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// server is go-containerregistry's in-memory registry on a loopback port,
// logging the requests it serves ("METHOD /path", "?digest=" when a
// query names one, " (intercepted)" when intercept answered); intercept, when set, answers a request
// in its place (returning true) or lets it through.
type server struct {
	host string
	mu   sync.Mutex
	log  []string
	// committed are the digests of the uploads the registry accepted
	// (a PUT ?digest= answered 201 Created) since the last reset.
	committed []string
	// intercept is set before the requests it is for.
	intercept func(w http.ResponseWriter, r *http.Request) bool
}

func newServer(t *testing.T) *server {
	t.Helper()
	s := &server{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		i := len(s.log)
		s.log = append(s.log, r.Method+" "+r.URL.Path+query(r))
		icpt := s.intercept
		s.mu.Unlock()
		if icpt != nil && icpt(w, r) {
			s.mu.Lock()
			if i < len(s.log) {
				s.log[i] += " (intercepted)"
			}
			s.mu.Unlock()
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		reg.ServeHTTP(sw, r)
		if d := r.URL.Query().Get("digest"); r.Method == http.MethodPut && d != "" && sw.status == http.StatusCreated {
			s.mu.Lock()
			s.committed = append(s.committed, d)
			s.mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	s.host = strings.TrimPrefix(srv.URL, "http://")
	return s
}

// statusWriter keeps the status a response was sent with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func query(r *http.Request) string {
	if d := r.URL.Query().Get("digest"); d != "" {
		return "?digest=" + d
	}
	return ""
}

func (s *server) setIntercept(f func(w http.ResponseWriter, r *http.Request) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intercept = f
}

func (s *server) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log, s.committed = nil, nil
}

// requests are those logged since the last reset, the /v2/ pings (one
// per repository a client opens) left out.
func (s *server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.log {
		if !strings.HasSuffix(l, " /v2/") {
			out = append(out, l)
		}
	}
	return out
}

// count is how many logged requests start with prefix ("PUT /v2/dst/blobs").
func (s *server) count(prefix string) int {
	n := 0
	for _, l := range s.requests() {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// writes are the requests that change the registry.
func (s *server) writes() []string {
	var out []string
	for _, l := range s.requests() {
		if !strings.HasPrefix(l, "GET ") && !strings.HasPrefix(l, "HEAD ") {
			out = append(out, l)
		}
	}
	return out
}

func (s *server) ref(t *testing.T, repoTag string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s.host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (s *server) push(t *testing.T, repoTag string, artifact remote.Taggable) name.Reference {
	t.Helper()
	if err := fixture.Push(s.host+"/"+repoTag, artifact); err != nil {
		t.Fatal(err)
	}
	s.reset()
	return s.ref(t, repoTag)
}

// putRaw writes raw bytes as a manifest, which the in-memory registry
// stores without checking what they reference.
func (s *server) putRaw(t *testing.T, ref string, raw []byte, mt types.MediaType) v1.Hash {
	t.Helper()
	if err := remote.Put(s.ref(t, ref), rawTaggable{raw, mt}); err != nil {
		t.Fatal(err)
	}
	return sha(raw)
}

type rawTaggable struct {
	raw []byte
	mt  types.MediaType
}

func (r rawTaggable) RawManifest() ([]byte, error)        { return r.raw, nil }
func (r rawTaggable) MediaType() (types.MediaType, error) { return r.mt, nil }

// opts are anonymous, without retries: the faults the tests make are
// meant to fail at once.
func opts() source.Options {
	return source.Options{Keychain: authn.NewMultiKeychain(), Retry: source.Retry{MaxTime: time.Minute, Stall: time.Minute}}
}

func regSource(ref name.Reference) ocicopy.Source { return ocicopy.Source{Ref: ref, Options: opts()} }

func sha(b []byte) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sha256.Sum256(b))}
}

// headDigest is what ref resolves to, or "" when nothing.
func headDigest(t *testing.T, ref name.Reference) string {
	t.Helper()
	d, err := remote.Head(ref, remote.WithAuth(authn.Anonymous))
	if err != nil {
		if source.NotFound(err) {
			return ""
		}
		t.Fatal(err)
	}
	return d.Digest.String()
}

func rawManifest(t *testing.T, ref name.Reference) []byte {
	t.Helper()
	d, err := remote.Get(ref, remote.WithAuth(authn.Anonymous))
	if err != nil {
		t.Fatal(err)
	}
	return d.Manifest
}

// multiPlatform is a two-platform xpkg index: two configs, and one base
// layer, annotated, that both share.
func multiPlatform(t *testing.T) v1.ImageIndex {
	t.Helper()
	stream := []byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: test\n")
	var imgs []fixture.PlatformImage
	for _, arch := range []string{"amd64", "arm64"} {
		p := v1.Platform{OS: "linux", Architecture: arch}
		img, err := fixture.ImageFor(stream, p)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, fixture.PlatformImage{Platform: p, Image: img})
	}
	return fixture.Index(imgs...)
}

// children are an index's manifest descriptors.
func children(t *testing.T, raw []byte) []v1.Descriptor {
	t.Helper()
	var im v1.IndexManifest
	if err := json.Unmarshal(raw, &im); err != nil {
		t.Fatal(err)
	}
	return im.Manifests
}

// layoutBlobsSound fails the test unless every file under a blob's name
// in the layout holds that blob, and no temporary file is left.
func layoutBlobsSound(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "blobs", "sha256", "*"))
	hidden, _ := filepath.Glob(filepath.Join(dir, "blobs", "sha256", ".*"))
	if len(hidden) > 0 {
		t.Errorf("temporary files left: %v", hidden)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := sha(b).Hex; got != filepath.Base(f) {
			t.Errorf("the blob file %s holds content hashing to %s", f, got)
		}
	}
}

func background() context.Context { return context.Background() }
