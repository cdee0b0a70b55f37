package hostile

import (
	"archive/tar"
	"bytes"
	"fmt"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// Escapee is the name the escaping entries aim at: a test can check that
// no file of that name appeared anywhere it looks.
const Escapee = "xpkg-hostile-escapee"

// layerCases are hostile tar entries and package.yaml entries.
func layerCases(b *builder) {
	entry := func(name, about string, want string, files ...fixture.File) {
		b.add(Case{Name: name, About: about, Artifact: b.based(b.layer(files...)), Want: want})
	}
	entry("path-traversal", "an entry ../../../../tmp/"+Escapee+" before package.yaml",
		`climbs out of the package root`,
		fixture.File{Name: "../../../../tmp/" + Escapee, Body: []byte("escaped\n")}, pkgFile)
	entry("traversal-after-package-yaml", "package.yaml, then an entry crds/../../"+Escapee+": found only when the layer is read to its end",
		`entry "crds/../../`+Escapee+`" climbs out of the package root`,
		pkgFile, fixture.File{Name: "crds/../../" + Escapee, Body: []byte("escaped\n")})
	entry("absolute-path", "package.yaml at /package.yaml",
		`entry "/package.yaml" has an absolute path`,
		fixture.File{Name: "/package.yaml", Body: goodStream})
	entry("escaping-symlink", "package.yaml, then a symlink crds/evil -> ../../../tmp/"+Escapee,
		`link "crds/evil" points to "../../../tmp/`+Escapee+`", outside the package`,
		pkgFile, fixture.File{Name: "crds/evil", Typeflag: tar.TypeSymlink, Linkname: "../../../tmp/" + Escapee})
	entry("absolute-symlink", "a symlink evil -> /etc/shadow before package.yaml",
		`link "evil" points to "/etc/shadow", outside the package`,
		fixture.File{Name: "evil", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow"}, pkgFile)
	entry("escaping-hardlink", "a hard link evil -> ../"+Escapee+" before package.yaml",
		`link "evil" points to "../`+Escapee+`", outside the package`,
		fixture.File{Name: "evil", Typeflag: tar.TypeLink, Linkname: "../" + Escapee}, pkgFile)
	entry("char-device", "a character device dev/null before package.yaml",
		`entry "dev/null" is a device or pipe`,
		fixture.File{Name: "dev/null", Typeflag: tar.TypeChar}, pkgFile)
	entry("block-device", "package.yaml, then a block device dev/sda",
		`entry "dev/sda" is a device or pipe`,
		pkgFile, fixture.File{Name: "dev/sda", Typeflag: tar.TypeBlock})
	entry("fifo", "a named pipe fifo before package.yaml",
		`entry "fifo" is a device or pipe`,
		fixture.File{Name: "fifo", Typeflag: tar.TypeFifo}, pkgFile)
	entry("package-yaml-symlink", "package.yaml is a symlink to real.yaml",
		"package.yaml is not a regular file",
		fixture.File{Name: "real.yaml", Body: goodStream}, fixture.File{Name: "package.yaml", Typeflag: tar.TypeSymlink, Linkname: "real.yaml"})
	entry("package-yaml-hardlink", "package.yaml is a hard link to real.yaml",
		"package.yaml is not a regular file",
		fixture.File{Name: "real.yaml", Body: goodStream}, fixture.File{Name: "package.yaml", Typeflag: tar.TypeLink, Linkname: "real.yaml"})
	entry("duplicate-package-yaml", "package.yaml, then ./package.yaml with another meta object",
		"holds more than one package.yaml",
		pkgFile, fixture.File{Name: "./package.yaml", Body: []byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: decoy\n")})
	entry("missing-package-yaml", "the package's objects, but no package.yaml",
		"has no package.yaml at its root (first entries: crossplane.yaml, crds/widgets.yaml)",
		fixture.File{Name: "crossplane.yaml", Body: []byte(metaDoc)}, fixture.File{Name: "crds/widgets.yaml", Body: []byte(crdDoc)})

	// Without a base annotation the flattened filesystem is read: the second
	// layer's whiteout deletes the first layer's package.yaml.
	first := b.layer(pkgFile)
	second := b.layer(fixture.File{Name: ".wh.package.yaml"})
	b.add(Case{Name: "whiteout-removes-package-yaml", About: "two unannotated layers: package.yaml, then its whiteout",
		Artifact: b.image([]v1.Layer{first, second}), Want: "has no package.yaml at its root"})

	b.add(Case{Name: "empty-layer", About: "a base layer that is an empty tar stream",
		Artifact: b.based(fixture.RawLayer(gz(nil))), Want: "has no package.yaml at its root (first entries: none: the layer is empty)"})
	b.add(Case{Name: "zero-byte-layer", About: "a base layer blob of zero bytes",
		Artifact: b.based(fixture.RawLayer(nil)), Want: "is empty or unreadable"})

	corrupt := tarOf(b, pkgFile)
	corrupt[148] ^= 0x07 // a digit of the header checksum
	b.add(Case{Name: "corrupt-tar-header", About: "an uncompressed tar whose first header's checksum is wrong",
		Artifact: b.based(fixture.RawLayer(corrupt)), Want: "invalid tar header"})

	// A PAX extended header of 2 MiB: tar readers hold PAX records in
	// memory, so they refuse those over 1 MiB.
	pax := typed(b, tar.TypeXHeader, "PaxHeaders/package.yaml", 2<<20)
	pax = append(pax, bytes.Repeat([]byte("9"), 2<<20)...)
	b.add(Case{Name: "pax-header-bomb", About: "a 2 MiB PAX extended header before package.yaml",
		Artifact: b.based(fixture.RawLayer(gz(append(pax, tarOf(b, pkgFile)...)))), Want: "header field too long"})

	// A legacy (.registry/) package's files are held in memory, within a limit.
	legacy := b.layer(fixture.File{Name: ".registry/app.yaml", Body: []byte("title: hostile\n")},
		fixture.File{Name: ".registry/resources/huge.crd.yaml", Body: make([]byte, 17<<20)})
	b.add(Case{Name: "oversized-legacy-file", About: "a legacy .registry/ package with a 17 MiB file",
		Artifact: b.image([]v1.Layer{legacy}), Want: "more than the 16777216 allowed for a .registry file"})

	twoBase := b.image([]v1.Layer{b.layer(pkgFile), b.layer(fixture.File{Name: "package.yaml", Body: []byte(metaDoc)})}, 0, 1)
	b.add(Case{Name: "two-base-layers", About: "two layers annotated io.crossplane.xpkg: base",
		Artifact: twoBase, Want: "has 2 layers annotated io.crossplane.xpkg: base: at most one is allowed"})

	// Image tarballs keep no manifest annotations, so the base layer may be
	// named by an image config label instead.
	unannotated := b.image([]v1.Layer{b.layer(pkgFile)})
	b.add(Case{Name: "base-label-not-a-digest", About: "an image config label io.crossplane.xpkg:not-a-digest: base",
		Artifact: labelled(b, unannotated, "not-a-digest"), Want: `image config label "io.crossplane.xpkg:not-a-digest" names no layer digest`})
	missing := v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%064x", 0xdead)}
	b.add(Case{Name: "base-label-missing-layer", About: "an image config label naming a base layer the image does not have",
		Artifact: labelled(b, unannotated, missing.String()), Want: missing.String()})
}

// labelled is img with its config labelling digest as the base layer.
func labelled(b *builder, img v1.Image, digest string) v1.Image {
	cfg, err := img.ConfigFile()
	if err != nil {
		b.fail("config", err)
		return img
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Labels = map[string]string{fixture.AnnotationKey + ":" + digest: fixture.BaseLayer}
	out, err := mutate.ConfigFile(img, cfg)
	b.fail("config", err)
	return out
}

// tarOf is an uncompressed tar stream of files.
func tarOf(b *builder, files ...fixture.File) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.Name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(f.Body)), ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}
		b.fail("tar", tw.WriteHeader(hdr))
		_, err := tw.Write(f.Body)
		b.fail("tar", err)
	}
	b.fail("tar", tw.Close())
	return buf.Bytes()
}

// typed is one ustar header of the given type and size, which tar.Writer
// will not write for the special types: a regular file's header with its
// type byte and checksum rewritten.
func typed(b *builder, flag byte, name string, size int64) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	b.fail("tar", tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size, ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}))
	hdr := bytes.Clone(buf.Bytes()[:512])
	hdr[156] = flag
	copy(hdr[148:156], "        ")
	sum := 0
	for _, c := range hdr {
		sum += int(c)
	}
	copy(hdr[148:156], fmt.Sprintf("%06s\x00 ", strconv.FormatInt(int64(sum), 8)))
	return hdr
}
