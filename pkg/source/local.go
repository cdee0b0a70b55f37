package source

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// openTarball reads an image tarball: what docker save and crossplane xpkg
// build (.xpkg) write.
func openTarball(path string, o Options) (*Package, error) {
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		return nil, fmt.Errorf("%s is not an image tarball (the docker save / .xpkg format): %w", path, err)
	}
	return openImage(img, Info{Source: path, Type: TypeTarball}, o, false)
}

// openDirectory reads an OCI image layout, a package source directory, an
// extracted package.yaml, or a legacy .registry/ tree.
func openDirectory(dir string, o Options) (*Package, error) {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	info := Info{Source: dir, Type: TypeDirectory}
	switch {
	case has("oci-layout"):
		return openLayout(dir, o)
	case has(MetaFile):
		stream, note, err := openDirStream(dir)
		if err != nil {
			return nil, err
		}
		if note != "" {
			info.Notes = append(info.Notes, note)
		}
		info.Rule, info.Format = "package source directory: crossplane.yaml and its YAML files", FormatStream
		return &Package{Info: info, stream: newLimitReader(stream, o.MaxUncompressed, dir), close: stream.Close}, nil
	case has(StreamFile):
		path, err := rootFile(dir, StreamFile)
		if err != nil {
			return nil, err
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		info.Rule, info.Format = "extracted package: package.yaml", FormatStream
		return &Package{Info: info, stream: newLimitReader(f, o.MaxUncompressed, f.Name()), close: f.Close}, nil
	case has(LegacyRoot):
		info.Rule, info.Format = "legacy package directory: .registry/", FormatLegacy
		return &Package{Info: info, legacy: os.DirFS(dir)}, nil
	}
	return nil, fmt.Errorf("%s is not a package: it has no %s, %s, oci-layout or %s/", dir, MetaFile, StreamFile, LegacyRoot)
}

// openLayout reads an OCI image layout. Its index.json lists what the
// layout holds; when that is a single image index (a multi-platform
// package), the index rules apply to that one.
func openLayout(dir string, o Options) (*Package, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%s is not a readable OCI layout: %w", dir, err)
	}
	info := Info{Source: dir, Type: TypeLayout}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("%s: index.json: %w", dir, err)
	}
	if len(im.Manifests) == 1 && im.Manifests[0].MediaType.IsIndex() {
		inner, err := idx.ImageIndex(im.Manifests[0].Digest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		if err := checkManifest(inner, im.Manifests[0].Digest, "the image index "+im.Manifests[0].Digest.String()+" of "+dir); err != nil {
			return nil, err
		}
		idx = inner
	}
	img, note, err := selectFromIndex(idx, *o.Platform, dir)
	if err != nil {
		return nil, err
	}
	info.Notes = append(info.Notes, note)
	if im, err := idx.IndexManifest(); err == nil && len(im.Manifests) > 1 {
		info.Image = indexInfo(idx) // a layout's own index.json is no image index
	}
	return openImage(img, info, o, true)
}
