package source_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// TestAnnotatedBaseLayerCostsTwoRequests: with an annotated base layer, only
// the manifest and that one blob are fetched — not the config, not the other
// (large) layer. An index adds its own manifest.
func TestAnnotatedBaseLayerCostsTwoRequests(t *testing.T) {
	s := stream(t, "Provider")
	img, err := fixture.Image(s)
	if err != nil {
		t.Fatal(err)
	}
	img, err = fixture.WithExtraLayer(img, fixture.File{Name: "bin/provider", Body: bytes.Repeat([]byte{1}, 1<<20)})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := img.Manifest()
	base := m.Layers[0].Digest.String()

	reg := newRegistry(t)
	ref := reg.push(t, "counted/provider:v1", img)
	_, got, err := readAll(t, ref, testOptions())
	if err != nil || !bytes.Equal(got, s) {
		t.Fatalf("read: %v %q", err, got)
	}
	want := []string{"GET /v2/counted/provider/manifests/v1", "GET /v2/counted/provider/blobs/" + base}
	if !slices.Equal(reg.requests(), want) {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(reg.requests(), "\n"), strings.Join(want, "\n"))
	}

	idxRef := reg.push(t, "counted/provider:multi", fixture.Index(
		fixture.PlatformImage{Platform: arm64, Image: img},
		fixture.PlatformImage{Platform: amd64, Image: img}))
	if _, _, err := readAll(t, idxRef, testOptions()); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	want = []string{"GET /v2/counted/provider/manifests/multi", "GET /v2/counted/provider/manifests/" + d.String(),
		"GET /v2/counted/provider/blobs/" + base}
	if !slices.Equal(reg.requests(), want) {
		t.Errorf("requests through an index:\n%s\nwant:\n%s", strings.Join(reg.requests(), "\n"), strings.Join(want, "\n"))
	}

	// inspect reads the config too (the entrypoint, the diff IDs), and
	// still not the other layer; the index's platforms and the base
	// layer's sizes are reported.
	o := testOptions()
	o.Inspect = true
	reg.reset()
	p, _, err := readAll(t, idxRef, o)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"GET /v2/counted/provider/manifests/multi", "GET /v2/counted/provider/manifests/" + d.String(),
		"GET /v2/counted/provider/blobs/" + m.Config.Digest.String(), "GET /v2/counted/provider/blobs/" + base}
	if got := reg.requests(); !sameElements(got, want) {
		t.Errorf("requests of inspect:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ii := p.Image
	if ii == nil || ii.Index == "" || strings.Join(ii.Platforms, ",") != "linux/arm64,linux/amd64" || ii.Layers != 2 ||
		ii.Base == nil || ii.Base.Digest != base || ii.Base.Size != m.Layers[0].Size || ii.Base.Uncompressed <= int64(len(s)) || ii.Base.DiffID == "" {
		t.Errorf("image info %+v (base %+v)", ii, ii.Base)
	}
}

// sameElements compares two lists as multisets.
func sameElements(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestTarballUsesConfigLabel: an image tarball keeps no manifest
// annotations, so the base layer is found through the config label that
// crossplane xpkg build writes.
func TestTarballUsesConfigLabel(t *testing.T) {
	s := stream(t, "Function")
	img, err := fixture.Image(s)
	if err != nil {
		t.Fatal(err)
	}
	img, err = fixture.WithExtraLayer(img, fixture.File{Name: "package.yaml", Body: []byte("kind: Decoy\n")})
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/fn.xpkg"
	if err := fixture.WriteTarball(path, "example.test/fn:v1", img); err != nil {
		t.Fatal(err)
	}
	p, got, err := readAll(t, path, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, s) || p.Rule != "base layer labelled in the image config" || p.Type != "tarball" {
		t.Errorf("got %q by %q from a %s", got, p.Rule, p.Type)
	}
}

func TestUnqualifiedReferenceUsesDefaultRegistry(t *testing.T) {
	reg := newRegistry(t)
	img, _ := fixture.Image(stream(t, "Provider"))
	reg.push(t, "crossplane-contrib/provider-nop:v0.4.0", img)
	o := testOptions()
	o.Registry = reg.host
	p, _, err := readAll(t, "crossplane-contrib/provider-nop:v0.4.0", o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Reference != reg.host+"/crossplane-contrib/provider-nop:v0.4.0" {
		t.Errorf("resolved reference = %q", p.Reference)
	}
	t.Setenv("XPKG_REGISTRY", reg.host)
	p, _, err = readAll(t, "crossplane-contrib/provider-nop:v0.4.0", testOptions())
	if err != nil || p.Reference != reg.host+"/crossplane-contrib/provider-nop:v0.4.0" {
		t.Errorf("XPKG_REGISTRY not used: %v", err)
	}
}
