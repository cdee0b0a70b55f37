package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/faultproxy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// mirrorSetup is a configuration in the environment's registry that
// needs provider-aws (a 7 MB layer), and an empty second registry behind
// a fault proxy to mirror it to.
type mirrorSetup struct {
	src, dst *testenv.Registry
	proxy    *faultproxy.Proxy
	root     string // the configuration's reference
	deps     []string
	x        *clitest.Test
}

func newMirrorSetup(t *testing.T) *mirrorSetup {
	t.Helper()
	env := testenv.Get(t)
	s := &mirrorSetup{src: env.RequireRegistry(t), dst: testenv.StartRegistry(t)}
	aws, _ := pushSample(t, env, "provider-aws", "v0.58.0")
	repo := strings.TrimSuffix(aws, ":v0.58.0")
	meta := fmt.Sprintf("apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: mirror-faults\nspec:\n  dependsOn:\n  - provider: %s\n    version: \">=v0.58.0\"\n", repo)
	img, err := fixture.Image([]byte(meta))
	if err != nil {
		t.Fatal(err)
	}
	s.root = s.src.Host + "/cli/mirror-faults:v1.0.0"
	if err := fixture.Push(s.root, img, remote.WithAuth(&authn.Basic{Username: s.src.Username, Password: s.src.Password})); err != nil {
		t.Fatal(err)
	}
	s.deps = []string{s.root, aws}
	if s.proxy, err = faultproxy.Start(s.dst.Host); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.proxy.Close() })
	s.x = clitest.New(t).WithEnv(env).WithLogin(s.proxy.Host, s.dst.Username, s.dst.Password)
	return s
}

func (s *mirrorSetup) to() string { return s.proxy.Host + "/m" }

// mirrored is the digest under which the destination has ref's copy, or
// "" when it has none.
func (s *mirrorSetup) mirrored(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(strings.Replace(ref, s.src.Host, s.dst.Host+"/m", 1))
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r, remote.WithAuth(&authn.Basic{Username: s.dst.Username, Password: s.dst.Password}))
	if err != nil {
		return ""
	}
	return d.Digest.String()
}

// layer is the digest of ref's (one) layer.
func (s *mirrorSetup) layer(t *testing.T, ref string) string {
	t.Helper()
	img, err := remote.Image(s.parse(t, ref), s.srcAuth())
	if err != nil {
		t.Fatal(err)
	}
	ls, err := img.Layers()
	if err != nil || len(ls) != 1 {
		t.Fatalf("layers of %s: %d, %v", ref, len(ls), err)
	}
	d, err := ls[0].Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

func (s *mirrorSetup) parse(t *testing.T, ref string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (s *mirrorSetup) srcAuth() remote.Option {
	return remote.WithAuth(&authn.Basic{Username: s.src.Username, Password: s.src.Password})
}

func (s *mirrorSetup) source(t *testing.T, ref string) string {
	t.Helper()
	d, err := remote.Head(s.parse(t, ref), s.srcAuth())
	if err != nil {
		t.Fatal(err)
	}
	return d.Digest.String()
}

// honest: a package the output says was mirrored is at the destination
// at the source's digest; one it says was not, is not.
func (s *mirrorSetup) honest(t *testing.T, stderr string) (mirrored int) {
	t.Helper()
	for _, ref := range s.deps {
		said := strings.Contains(stderr, "Mirrored "+ref+" to ")
		got := s.mirrored(t, ref)
		switch {
		case said && got != s.source(t, ref):
			t.Errorf("said %s was mirrored, but the destination has %q", ref, got)
		case said:
			mirrored++
		case strings.Contains(stderr, "Not mirrored: "+ref) && got != "":
			t.Errorf("said %s was not mirrored, but the destination has it", ref)
		}
	}
	return mirrored
}

// TestMirrorDestinationFaults: a destination that refuses blobs midway
// (a 500; a 507, as a registry with a full disk answers) fails the run
// with a line naming what was not mirrored and prints no ImageConfig; a
// run again sends only what is missing.
func TestMirrorDestinationFaults(t *testing.T) {
	s := newMirrorSetup(t)
	fast := []string{"--retries=1", "--retry-timeout=10s"}
	for _, f := range []faultproxy.Fault{
		{Match: "PATCH /v2/", Status: 500, Skip: 1},
		{Match: "PUT /v2/", Status: 507, Skip: 1},
	} {
		s.proxy.Clear()
		s.proxy.Add(f)
		r := s.x.Run(append([]string{"mirror", s.root, "--to", s.to()}, fast...)...).Fails(t, 1)
		if r.Stdout != "" {
			t.Errorf("%d midway: ImageConfigs printed for a mirror that failed:\n%s", f.Status, r.Stdout)
		}
		if !strings.Contains(r.Stderr, "not mirrored") || !strings.Contains(r.Stderr, "run the command again to finish") {
			t.Errorf("%d midway:\n%s", f.Status, r.Stderr)
		}
		s.honest(t, r.Stderr)
	}
	s.proxy.Clear()
	r := s.x.Run("mirror", s.root, "--to", s.to()).Succeeds(t)
	if n := s.honest(t, r.Stderr); n != 2 {
		t.Errorf("the run again mirrored %d of 2:\n%s", n, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "already there") || !strings.Contains(r.Stdout, "kind: ImageConfig") {
		t.Errorf("the run again sent everything, or printed no ImageConfig:\n%s%s", r.Stderr, r.Stdout)
	}
	s.proxy.Clear()
	r = s.x.Run("mirror", s.root, "--to", s.to()).Succeeds(t)
	if !strings.Contains(r.Stderr, "0 copied (0 blob(s), 0 B sent; 0 blob(s) already there), 2 already there") {
		t.Errorf("a third run copied something:\n%s", r.Stderr)
	}
	if n := s.proxy.Count("/blobs/"); n != 0 {
		t.Errorf("a third run touched %d blobs: %v", n, s.proxy.Requests())
	}
}

// TestInterruptedMirror: Ctrl-C while a blob is on its way stops the
// mirror (exit 130), reports only what is verified there, and a run
// again finishes; into a layout, nothing half-written is left under a
// blob's name and no unfinished package is in its index.
func TestInterruptedMirror(t *testing.T) {
	s := newMirrorSetup(t)
	s.proxy.Add(faultproxy.Fault{Match: "PATCH /v2/", Hold: time.Minute})
	run := s.x.Start("mirror", s.root, "--to", s.to())
	eventually(t, "a blob upload held", func() bool { return s.proxy.Count("PATCH /v2/") > 0 })
	if err := run.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := run.Wait()
	if r.ExitCode != 130 || r.Stdout != "" || !strings.Contains(r.Stderr, "interrupted") {
		t.Errorf("Ctrl-C: exit %d\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	s.honest(t, r.Stderr)
	s.proxy.Clear()
	r = s.x.Run("mirror", s.root, "--to", s.to()).Succeeds(t)
	if n := s.honest(t, r.Stderr); n != 2 {
		t.Errorf("the run again mirrored %d of 2:\n%s", n, r.Stderr)
	}

	src, err := faultproxy.Start(s.src.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	x := s.x.WithLogin(src.Host, s.src.Username, s.src.Password)
	// provider-aws alone (the configuration names its dependency at the
	// registry itself, not behind this proxy).
	root := strings.Replace(s.deps[1], s.src.Host, src.Host, 1)
	layout := filepath.Join(t.TempDir(), "layout")
	// The resolution reads provider-aws's layer for its meta object; the
	// copy's read of it stalls.
	layer := "GET /v2/cli/provider-aws/blobs/" + s.layer(t, s.deps[1])
	src.Add(faultproxy.Fault{Match: layer, Skip: 1, StallAfter: 64 << 10, Stall: time.Minute})
	run = x.Start("mirror", root, "--to-layout", layout)
	eventually(t, "the copy's read of the layer, stalled", func() bool { return src.Count(layer) > 1 })
	if err := run.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if r = run.Wait(); r.ExitCode != 130 {
		t.Errorf("Ctrl-C into a layout: exit %d\n%s", r.ExitCode, r.Stderr)
	}
	checkLayoutBlobs(t, layout)
	entries, _ := ocicopy.ReadLayout(layout)
	for _, e := range entries {
		if !strings.Contains(r.Stderr, "Mirrored "+e.RefName+" ") {
			t.Errorf("the layout names %s, which the interrupted run did not report", e.RefName)
		}
	}
	src.Clear()
	x.Run("mirror", root, "--to-layout", layout).Succeeds(t)
	checkLayoutBlobs(t, layout)
	if entries, err := ocicopy.ReadLayout(layout); err != nil || len(entries) != 1 || entries[0].RefName != root {
		t.Errorf("the layout after a run again: %v %+v", err, entries)
	}
}

// blobFiles are the files under the layout's blobs/sha256.
func blobFiles(t *testing.T, layout string) []string {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(layout, "blobs", "sha256"))
	var out []string
	for _, e := range entries {
		out = append(out, filepath.Join(layout, "blobs", "sha256", e.Name()))
	}
	return out
}

// checkLayoutBlobs: every file named as a blob holds that blob.
func checkLayoutBlobs(t *testing.T, layout string) {
	t.Helper()
	for _, f := range blobFiles(t, layout) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != filepath.Base(f) {
			t.Errorf("%s does not hold the blob it is named after", f)
		}
	}
}

// TestMirrorRefusesHostileLayouts: an index that names itself (its bytes
// cannot hash to the digest it is read by), and a manifest past the
// limit, are refused before anything is sent.
func TestMirrorRefusesHostileLayouts(t *testing.T) {
	s := newMirrorSetup(t)
	self := hostileLayout(t, func(digest string) []byte {
		return fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"%s","size":200}]}`, digest)
	})
	big := hostileLayout(t, func(string) []byte {
		return fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":2},"layers":[],"annotations":{"pad":"%s"}}`, strings.Repeat("0", 64), strings.Repeat("x", 5<<20))
	})
	for what, dir := range map[string]string{"an index naming itself": self, "a 5 MiB manifest": big} {
		r := s.x.Run("mirror", "--from-layout", dir, "--to", s.to()).Fails(t, 1)
		t.Logf("%s: %s", what, r.Stderr)
		if r.Stdout != "" || strings.Contains(r.Stderr, "Mirrored xpkg.example.com") {
			t.Errorf("%s: reported or printed as mirrored:\n%s%s", what, r.Stdout, r.Stderr)
		}
		if n := s.proxy.Count("PUT /v2/"); n != 0 {
			t.Errorf("%s: %d writes reached the destination", what, n)
		}
	}
}

// hostileLayout writes an OCI layout whose one entry, named
// xpkg.example.com/org/hostile:v1, is the manifest body makes: self
// referencing bodies get the digest they are stored under, which their
// bytes do not hash to.
func hostileLayout(t *testing.T, body func(digest string) []byte) string {
	t.Helper()
	dir := t.TempDir()
	b := body("")
	sum := sha256.Sum256(b)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if again := body(digest); string(again) != string(b) {
		b = again // names the digest of its first form: no longer its own
	}
	mt := "application/vnd.oci.image.manifest.v1+json"
	if strings.Contains(string(b), "image.index") {
		mt = "application/vnd.oci.image.index.v1+json"
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:")), b, 0o644))
	must(os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644))
	index := fmt.Sprintf(`{"schemaVersion":2,"manifests":[{"mediaType":%q,"digest":%q,"size":%d,"annotations":{"org.opencontainers.image.ref.name":"xpkg.example.com/org/hostile:v1"}}]}`, mt, digest, len(b))
	must(os.WriteFile(filepath.Join(dir, "index.json"), []byte(index), 0o644))
	return dir
}

// TestMirrorSourceDisappears: the source loses a blob between the
// resolution and the copy (a 404), then goes away altogether: a clear
// line, exit 1, nothing reported mirrored that is not; back again, a run
// again finishes.
func TestMirrorSourceDisappears(t *testing.T) {
	s := newMirrorSetup(t)
	src, err := faultproxy.Start(s.src.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	x := s.x.WithLogin(src.Host, s.src.Username, s.src.Password)
	root := strings.Replace(s.deps[1], s.src.Host, src.Host, 1)
	layer := "GET /v2/cli/provider-aws/blobs/" + s.layer(t, s.deps[1])
	src.Add(faultproxy.Fault{Match: layer, Skip: 1, Status: 404})
	r := x.Run("mirror", root, "--to", s.to()).Fails(t, 1)
	if r.Stdout != "" || !strings.Contains(r.Stderr, "Not mirrored: "+root) || !strings.Contains(r.Stderr, "error: 1 of 1 package(s) not mirrored") {
		t.Errorf("a blob gone from the source:\n%s%s", r.Stdout, r.Stderr)
	}
	if got := s.mirrored(t, s.deps[1]); got != "" {
		t.Errorf("the destination has %s, whose blob was never read", got)
	}
	src.Clear()
	src.Add(faultproxy.Fault{Match: "/v2/", Status: 503})
	r = x.Run("mirror", root, "--to", s.to(), "--retries=1", "--retry-timeout=5s").Fails(t, 1)
	if r.Stdout != "" || strings.Contains(r.Stderr, "Mirrored "+root) {
		t.Errorf("the source gone:\n%s%s", r.Stdout, r.Stderr)
	}
	src.Clear()
	r = x.Run("mirror", root, "--to", s.to()).Succeeds(t)
	if !strings.Contains(r.Stderr, "Mirrored 1 of 1 package(s)") || s.mirrored(t, s.deps[1]) != s.source(t, s.deps[1]) {
		t.Errorf("back again:\n%s", r.Stderr)
	}
}
