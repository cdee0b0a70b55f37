package source_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func layerOf(t *testing.T, files ...fixture.File) v1.Layer {
	t.Helper()
	l, err := fixture.Layer(files...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestHostileLayers: each malformed or hostile layer gets its own clear
// error, whether it comes from a registry or a layout.
func TestHostileLayers(t *testing.T) {
	s := stream(t, "Provider")
	pkgFile := fixture.File{Name: "package.yaml", Body: s}
	cases := []struct {
		name    string
		layer   v1.Layer
		limit   int64
		wantErr string
	}{
		{"traversal", layerOf(t, fixture.File{Name: "../../etc/passwd", Body: []byte("x")}, pkgFile), 0,
			`entry "../../etc/passwd" climbs out of the package root`},
		{"absolute path", layerOf(t, fixture.File{Name: "/package.yaml", Body: s}), 0,
			`entry "/package.yaml" has an absolute path`},
		{"escaping symlink", layerOf(t, pkgFile, fixture.File{Name: "crds/evil", Typeflag: tar.TypeSymlink, Linkname: "../../../root"}), 0,
			`link "crds/evil" points to "../../../root", outside the package`},
		{"absolute symlink", layerOf(t, fixture.File{Name: "evil", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow"}, pkgFile), 0,
			`link "evil" points to "/etc/shadow", outside the package`},
		{"escaping hardlink", layerOf(t, fixture.File{Name: "evil", Typeflag: tar.TypeLink, Linkname: "../outside"}, pkgFile), 0,
			`link "evil" points to "../outside", outside the package`},
		{"device file", layerOf(t, fixture.File{Name: "dev/sda", Typeflag: tar.TypeBlock}, pkgFile), 0,
			`entry "dev/sda" is a device or pipe`},
		{"package.yaml is a symlink", layerOf(t, fixture.File{Name: "real.yaml", Body: s}, fixture.File{Name: "package.yaml", Typeflag: tar.TypeSymlink, Linkname: "real.yaml"}), 0,
			"package.yaml is not a regular file"},
		{"decompression bomb", layerOf(t, fixture.File{Name: "package.yaml", Body: bytes.Repeat([]byte("# padding\n"), 200_000)}), 1 << 20,
			"decompresses to more than 1048576 bytes"},
		{"not gzip", fixture.RawLayer([]byte(strings.Repeat("this is not a compressed tar stream ", 30))), 0,
			"is not a gzip, zstd or tar stream"},
		{"corrupt gzip", fixture.RawLayer(append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, bytes.Repeat([]byte{0xff}, 64)...)), 0,
			"layer sha256:"},
		{"truncated gzip", fixture.RawLayer(truncated(t, layerOf(t, pkgFile, fixture.File{Name: "big", Body: bytes.Repeat([]byte("ab"), 50000)}))), 0,
			"is truncated"},
		{"empty layer", fixture.RawLayer(gzipped(t, nil)), 0, "has no package.yaml at its root (first entries: none: the layer is empty)"},
	}
	reg := newRegistry(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img, err := fixture.ImageOf([]v1.Layer{c.layer}, 0)
			if err != nil {
				t.Fatal(err)
			}
			o := testOptions()
			o.MaxUncompressed = c.limit
			for _, src := range []string{reg.push(t, "hostile:"+strings.ReplaceAll(c.name, " ", "-"), img), writeLayout(t, img)} {
				_, _, err := readAll(t, src, o)
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("%s: err = %v\nwant it to contain %q", src, err, c.wantErr)
				}
			}
		})
	}
}

func truncated(t *testing.T, l v1.Layer) []byte {
	t.Helper()
	rc, err := l.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.ReadFrom(rc)
	return buf.Bytes()[:buf.Len()/2]
}

func writeLayout(t *testing.T, artifact any) string {
	t.Helper()
	dir := t.TempDir()
	if err := fixture.WriteLayout(dir, artifact); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCorruptBlobInLayout changes a blob on disk after the manifest was
// written: its digest no longer matches.
func TestCorruptBlobInLayout(t *testing.T) {
	s := stream(t, "Provider")
	img, err := fixture.Image(s)
	if err != nil {
		t.Fatal(err)
	}
	dir := writeLayout(t, img)
	layers, _ := img.Layers()
	d, _ := layers[0].Digest()
	blob := filepath.Join(dir, "blobs", "sha256", d.Hex)
	content, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	// Same length, one byte of the gzip trailer changed: gzip may not
	// notice before the tar ends, the digest check must.
	content[len(content)-1] ^= 0xff
	if err := os.WriteFile(blob, content, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = readAll(t, dir, testOptions())
	want := "layer " + d.String() + " of " + dir + " is corrupt: its content hashes to sha256:"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// TestPackageDirectoryLinksStayInside: a package directory whose root
// crossplane.yaml or package.yaml is a symbolic link to a file outside it
// is refused, naming the link; a link inside the directory is read.
func TestPackageDirectoryLinksStayInside(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n"
	if err := os.WriteFile(outside, []byte(meta), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{source.MetaFile, source.StreamFile} {
		dir := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		_, _, err := readAll(t, dir, testOptions())
		if err == nil || !strings.Contains(err.Error(), "refusing "+name+", a symbolic link to "+outside+" outside the directory") {
			t.Errorf("%s linked outside: %v", name, err)
		}

		// Inside the directory, a link is fine.
		inside := t.TempDir()
		if err := os.WriteFile(filepath.Join(inside, "real.yaml.txt"), []byte(meta), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real.yaml.txt", filepath.Join(inside, name)); err != nil {
			t.Fatal(err)
		}
		if _, got, err := readAll(t, inside, testOptions()); err != nil || !strings.Contains(string(got), "kind: Provider") {
			t.Errorf("%s linked inside: %v %q", name, err, got)
		}
	}
}

// TestHugeConfigIsRefused: an image without a base layer annotation has
// its config read for the label: a config of megabytes is refused before
// it is fetched, from a registry and for inspect alike.
func TestHugeConfigIsRefused(t *testing.T) {
	img, err := fixture.Unannotated(stream(t, "Provider"))
	if err != nil {
		t.Fatal(err)
	}
	img = withConfig(t, img, func(cfg *v1.ConfigFile) {
		cfg.Config.Labels = map[string]string{"padding": strings.Repeat("x", 2<<20)}
	})
	reg := newRegistry(t)
	ref := reg.push(t, "hostile/huge-config:v1", img)
	for _, inspect := range []bool{false, true} {
		o := testOptions()
		o.Inspect = inspect
		_, _, err := readAll(t, ref, o)
		if err == nil || !strings.Contains(err.Error(), "an image config is kilobytes, and more than 1048576 bytes is refused") {
			t.Errorf("inspect %v: %v", inspect, err)
		}
		for _, r := range reg.requests() {
			if strings.Contains(r, "/blobs/") {
				t.Errorf("inspect %v fetched %s", inspect, r)
			}
		}
		reg.reset()
	}
}

// TestTarballLayerMustMatchItsDiffID: an image tarball names its layers
// by file, so its layer is checked against the diff ID its config lists:
// a layer whose content is not what the config says is refused.
func TestTarballLayerMustMatchItsDiffID(t *testing.T) {
	img, err := fixture.Image(stream(t, "Provider"))
	if err != nil {
		t.Fatal(err)
	}
	bogus := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}
	tampered := withConfig(t, img, func(cfg *v1.ConfigFile) { cfg.RootFS.DiffIDs = []v1.Hash{bogus} })
	path := filepath.Join(t.TempDir(), "tampered.xpkg")
	if err := fixture.WriteTarball(path, "example.org/tampered:v1", tampered); err != nil {
		t.Fatal(err)
	}
	_, _, err = readAll(t, path, testOptions())
	if err == nil || !strings.Contains(err.Error(), "is corrupt: its content hashes to sha256:") || !strings.Contains(err.Error(), bogus.String()) {
		t.Fatalf("a tampered tarball: %v", err)
	}
	// The untampered tarball reads.
	good := filepath.Join(t.TempDir(), "good.xpkg")
	if err := fixture.WriteTarball(good, "example.org/good:v1", img); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readAll(t, good, testOptions()); err != nil {
		t.Fatalf("a good tarball: %v", err)
	}
}

// TestUnverifiableDigestIsRefused: content under a digest algorithm that
// cannot be checked here is refused, not passed unchecked.
func TestUnverifiableDigestIsRefused(t *testing.T) {
	_, err := source.NewVerifyReader(strings.NewReader("x"), v1.Hash{Algorithm: "md5", Hex: "9dd4e461268c8034f5c8564e155c67a6"}, 0, "layer x")
	if err == nil || !strings.Contains(err.Error(), `uses "md5", which cannot be verified here`) {
		t.Errorf("md5: %v", err)
	}
}

// withConfig is img with its config file changed by edit.
func withConfig(t *testing.T, img v1.Image, edit func(*v1.ConfigFile)) v1.Image {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	edit(cfg)
	out, err := mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// corruptBlob changes a gzip layer blob of an OCI layout on disk where
// gzip itself does not look: the modification time in its header. The
// content reads as before; only the digest check can tell.
func corruptBlob(t *testing.T, dir string, d v1.Hash) {
	t.Helper()
	blob := filepath.Join(dir, "blobs", d.Algorithm, d.Hex)
	content, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	content[4] ^= 0xff // MTIME
	if err := os.WriteFile(blob, content, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLayoutConfigMustMatchItsDigest: an OCI layout's config blob is read
// from disk by the digest the manifest names; content that does not hash
// to it is refused wherever the config is used (the base layer label of
// an unannotated image, inspect's entrypoint).
func TestLayoutConfigMustMatchItsDigest(t *testing.T) {
	img, err := fixture.Unannotated(stream(t, "Provider"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeLayout(t, img)
	cfgName, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := readAll(t, dir, testOptions()); err != nil {
		t.Fatalf("the untouched layout: %v", err)
	}
	blob := filepath.Join(dir, "blobs", cfgName.Algorithm, cfgName.Hex)
	raw, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	// Same length, one byte changed: still valid JSON.
	raw = []byte(strings.Replace(string(raw), `"type":"layers"`, `"type":"layerz"`, 1))
	if err := os.WriteFile(blob, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, inspect := range []bool{false, true} {
		o := testOptions()
		o.Inspect = inspect
		_, _, err := readAll(t, dir, o)
		if err == nil || !strings.Contains(err.Error(), "the image config of "+dir+" is corrupt: its content hashes to sha256:") {
			t.Errorf("inspect %v: a tampered config: %v", inspect, err)
		}
	}
}

// TestFlattenedLayersAreVerified: an image without a base layer is read as
// the flattened filesystem of its layers, and each layer is verified: an
// image tarball's against the diff IDs its config lists, an OCI layout's
// against its digest.
func TestFlattenedLayersAreVerified(t *testing.T) {
	img, err := fixture.Unannotated(stream(t, "Provider"))
	if err != nil {
		t.Fatal(err)
	}
	// An image tarball whose config lists a wrong diff ID for layer 1.
	bogus := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}
	tampered := withConfig(t, img, func(cfg *v1.ConfigFile) { cfg.RootFS.DiffIDs[0] = bogus })
	path := filepath.Join(t.TempDir(), "tampered.xpkg")
	if err := fixture.WriteTarball(path, "example.org/tampered:v1", tampered); err != nil {
		t.Fatal(err)
	}
	for _, first := range []bool{false, true} {
		o := testOptions()
		o.VerifyFirst = first
		_, _, err = readAll(t, path, o)
		if err == nil || !strings.Contains(err.Error(), "layer 1 of "+path+" is corrupt: its content hashes to sha256:") {
			t.Errorf("verify first %v: a tarball layer unlike its diff ID: %v", first, err)
		}
	}

	// An OCI layout whose second layer's blob changed on disk.
	dir := writeLayout(t, img)
	layers, _ := img.Layers()
	d, _ := layers[1].Digest()
	corruptBlob(t, dir, d)
	_, _, err = readAll(t, dir, testOptions())
	if err == nil || !strings.Contains(err.Error(), "layer 2 of "+dir+" is corrupt: its content hashes to sha256:") {
		t.Errorf("a corrupt layout layer: %v", err)
	}

	// Untouched, both read.
	good := filepath.Join(t.TempDir(), "good.xpkg")
	if err := fixture.WriteTarball(good, "example.org/good:v1", img); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{good, writeLayout(t, img)} {
		if _, got, err := readAll(t, src, testOptions()); err != nil || !strings.Contains(string(got), "kind: Provider") {
			t.Errorf("%s: %v %q", src, err, got)
		}
	}
}

// TestVerifyFirstHandsOutNothingUnverified: with VerifyFirst, a layer that
// does not match its digest (a layout's blob, a registry's) or its diff ID
// (an image tarball's) fails Open: not one byte of its content is handed
// out. Without it, the content reads and Close reports the mismatch.
func TestVerifyFirstHandsOutNothingUnverified(t *testing.T) {
	img, err := fixture.Image(stream(t, "Provider"))
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	d, _ := layers[0].Digest()
	layout := writeLayout(t, img)
	corruptBlob(t, layout, d)

	tarball := filepath.Join(t.TempDir(), "tampered.xpkg")
	bogus := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}
	if err := fixture.WriteTarball(tarball, "example.org/tampered:v1", withConfig(t, img, func(cfg *v1.ConfigFile) { cfg.RootFS.DiffIDs = []v1.Hash{bogus} })); err != nil {
		t.Fatal(err)
	}

	for _, src := range []string{layout, tarball} {
		o := testOptions()
		o.VerifyFirst = true
		if p, err := source.Open(context.Background(), src, o); err == nil || !strings.Contains(err.Error(), "is corrupt: its content hashes to") {
			if p != nil {
				p.Close()
			}
			t.Errorf("%s, verify first: Open = %v, want the mismatch", src, err)
		}
		o.VerifyFirst = false
		p, err := source.Open(context.Background(), src, o)
		if err != nil {
			t.Fatalf("%s: Open: %v", src, err)
		}
		b, err := io.ReadAll(p.Stream())
		if err != nil || !strings.Contains(string(b), "kind: Provider") {
			t.Errorf("%s: without verify first the content reads: %v %q", src, err, b)
		}
		if err := p.Close(); err == nil || !strings.Contains(err.Error(), "is corrupt") {
			t.Errorf("%s: Close = %v, want the mismatch", src, err)
		}
	}
	// A good layer reads with VerifyFirst, and leaves no temporary file.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	o := testOptions()
	o.VerifyFirst = true
	if _, got, err := readAll(t, writeLayout(t, img), o); err != nil || !strings.Contains(string(got), "kind: Provider") {
		t.Errorf("a good layout, verify first: %v %q", err, got)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestLayoutManifestMustMatchItsDigest: an OCI layout's manifest is read
// from disk by the digest index.json names; a manifest changed on disk
// (here its base layer annotation) is refused.
func TestLayoutManifestMustMatchItsDigest(t *testing.T) {
	img, err := fixture.Image(stream(t, "Provider"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeLayout(t, img)
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(dir, "blobs", d.Algorithm, d.Hex)
	raw, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(raw), `"io.crossplane.xpkg":"base"`, `"io.crossplane.xpkg":"basf"`, 1)
	if changed == string(raw) {
		t.Fatalf("no base annotation in %s", raw)
	}
	if err := os.WriteFile(blob, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = readAll(t, dir, testOptions())
	if err == nil || !strings.Contains(err.Error(), "the manifest "+d.String()+" of "+dir+" is corrupt: its content hashes to sha256:") {
		t.Errorf("a tampered manifest: %v", err)
	}
}
