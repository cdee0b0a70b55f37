package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// The mirror benchmark's registries and closure: a source and a
// destination registry, and a configuration that needs a function and a
// provider, which needs a family provider, each a two-platform index.

// benchRegistry is a CNCF distribution registry (hack/build-registry.sh)
// with htpasswd authentication, started alone by testenv.
type benchRegistry struct {
	host, user, password string
	stopFn               func() error
}

// startBenchRegistry starts a registry whose data and log are in dir.
func startBenchRegistry(ctx context.Context, dir string) (*benchRegistry, error) {
	reg, stop, err := testenv.StartRegistryIn(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &benchRegistry{host: reg.Host, user: reg.Username, password: reg.Password, stopFn: stop}, nil
}

func (r *benchRegistry) stop() { _ = r.stopFn() }

func (r *benchRegistry) auth() remote.Option {
	return remote.WithAuth(&authn.Basic{Username: r.user, Password: r.password})
}

// writeDockerAuths writes a docker config.json with the credentials of
// each registry, under its host and under each of its aliases (a proxy
// in front of it).
func writeDockerAuths(dir string, regs map[string]*benchRegistry) error {
	auths := map[string]any{}
	for host, r := range regs {
		auths[host] = map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(r.user + ":" + r.password))}
	}
	b, err := json.Marshal(map[string]any{"auths": auths})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600)
}

// mirrorSize is one size of the closure: the random runtime layer of
// each provider's and of the function's image, per platform (the
// configuration has only its package.yaml).
type mirrorSize struct {
	name               string
	provider, function int64
}

var mirrorSizes = []mirrorSize{
	{name: "small", provider: 5 << 20, function: 1 << 20},
	{name: "large", provider: 100 << 20, function: 20 << 20},
}

// mirrorPlatforms are every image's platforms.
var mirrorPlatforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// mirrorPkg is one package of the closure: its repository (under the
// registry host), tag, random layer per platform and what it depends on.
type mirrorPkg struct {
	kind, repo, tag string
	layer           int64
	deps            []mirrorDep
	digest          string // of the index, once pushed
}

type mirrorDep struct{ kind, repo, constraint string }

func (p *mirrorPkg) ref(host string) string { return host + "/" + p.repo + ":" + p.tag }

// closure is the size's four packages, the root first: each constraint
// admits exactly the one tag pushed.
func (s mirrorSize) closure() []*mirrorPkg {
	repo := func(n string) string { return "bench-" + s.name + "/org/" + n }
	return []*mirrorPkg{
		{kind: "Configuration", repo: repo("configuration-platform"), tag: "v1.0.0", deps: []mirrorDep{
			{"function", repo("function-patch"), ">=v0.1.0"}, {"provider", repo("provider-aws-s3"), ">=v1.0.0 <v2.0.0"}}},
		{kind: "Function", repo: repo("function-patch"), tag: "v0.3.0", layer: s.function},
		{kind: "Provider", repo: repo("provider-aws-s3"), tag: "v1.1.0", layer: s.provider, deps: []mirrorDep{
			{"provider", repo("provider-family-aws"), ">=v1.0.0"}}},
		{kind: "Provider", repo: repo("provider-family-aws"), tag: "v1.2.0", layer: s.provider},
	}
}

// stream is the package's package.yaml, its dependencies on host.
func (p *mirrorPkg) stream(host string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: meta.pkg.crossplane.io/v1\nkind: %s\nmetadata:\n  name: %s\n", p.kind, p.repo[strings.LastIndex(p.repo, "/")+1:])
	if len(p.deps) > 0 {
		b.WriteString("spec:\n  dependsOn:\n")
		for _, d := range p.deps {
			fmt.Fprintf(&b, "  - %s: %s/%s\n    version: %q\n", d.kind, host, d.repo, d.constraint)
		}
	}
	return []byte(b.String())
}

// push pushes the package as an index of mirrorPlatforms, each image
// its package.yaml (the base layer) and, for all but a configuration,
// a random layer of its own; it records the index's digest and returns
// the bytes of its manifests and blobs, and how many distinct blobs.
func (p *mirrorPkg) push(host string, auth remote.Option) (int64, int, error) {
	var imgs []fixture.PlatformImage
	for _, pl := range mirrorPlatforms {
		img, err := fixture.ImageFor(p.stream(host), pl)
		if err == nil && p.layer > 0 {
			var l v1.Layer
			if l, err = randomLayer(p.repo+" "+pl.String(), p.layer); err == nil {
				img, err = mutate.AppendLayers(img, l)
			}
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%s for %s: %w", p.repo, pl, err)
		}
		imgs = append(imgs, fixture.PlatformImage{Platform: pl, Image: img})
	}
	idx := fixture.Index(imgs...)
	d, err := idx.Digest()
	if err != nil {
		return 0, 0, err
	}
	p.digest = d.String()
	if err := fixture.Push(p.ref(host), idx, auth); err != nil {
		return 0, 0, err
	}
	return indexBytes(idx)
}

// indexBytes sums an index's manifests and its images' distinct blobs,
// and counts those blobs.
func indexBytes(idx v1.ImageIndex) (int64, int, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return 0, 0, err
	}
	raw, err := idx.RawManifest()
	if err != nil {
		return 0, 0, err
	}
	n, seen := int64(len(raw)), map[v1.Hash]bool{}
	for _, m := range im.Manifests {
		img, err := idx.Image(m.Digest)
		if err != nil {
			return 0, 0, err
		}
		mf, err := img.Manifest()
		if err != nil {
			return 0, 0, err
		}
		n += m.Size
		for _, b := range append([]v1.Descriptor{mf.Config}, mf.Layers...) {
			if !seen[b.Digest] {
				seen[b.Digest], n = true, n+b.Size
			}
		}
	}
	return n, len(seen), nil
}

// randomLayer is a layer holding one file of n random bytes from a
// generator seeded by seed, made again each time it is read (never held
// whole) and stored in its gzip stream uncompressed: as incompressible
// as a runtime image's binaries, and quick to make.
func randomLayer(seed string, n int64) (v1.Layer, error) {
	key := sha256.Sum256([]byte(seed))
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() {
			tw := tar.NewWriter(pw)
			err := tw.WriteHeader(&tar.Header{Name: "runtime/blob", Typeflag: tar.TypeReg, Mode: 0o644, Size: n, ModTime: time.Unix(0, 0)})
			if err == nil {
				_, err = io.CopyN(tw, mrand.NewChaCha8(key), n)
			}
			if err == nil {
				err = tw.Close()
			}
			pw.CloseWithError(err)
		}()
		return pr, nil
	}, tarball.WithCompressionLevel(gzip.NoCompression))
}

// headDigest is the digest ref names at its registry.
func headDigest(ref string, auth remote.Option) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	d, err := remote.Head(r, auth)
	if err != nil {
		return "", fmt.Errorf("HEAD %s: %w", ref, err)
	}
	return d.Digest.String(), nil
}
