package source

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// openImage reads the package out of an image: the base layer if the rules
// select one, the flattened filesystem otherwise. verifyBlobs is false for
// image tarballs, whose layers carry no digest of their own to check.
func openImage(img v1.Image, info Info, o Options, verifyBlobs bool) (*Package, error) {
	what := info.Source
	if d, err := img.Digest(); err == nil {
		info.Digest = d.String()
	}
	choice, err := selectLayer(img, what)
	if err != nil {
		return nil, err
	}
	info.Rule = choice.rule
	var cfg *v1.ConfigFile
	if o.Inspect { // inspect reads the config too
		if cfg, err = configFile(img, what); err != nil {
			return nil, err
		}
	}
	describeImage(img, &info, cfg)
	var opened *openedLayer
	layerWhat := "the flattened filesystem of " + what
	if choice.layer != nil {
		d, _ := choice.layer.Digest()
		info.Layer = d.String()
		layerWhat = "layer " + d.String() + " of " + what
		info.Image.Base = &LayerInfo{Digest: d.String()}
		if o.Inspect { // the diff ID is in the config: one more request
			if id, err := choice.layer.DiffID(); err == nil {
				info.Image.Base.DiffID = id.String()
			}
		}
		if n, err := choice.layer.Size(); err == nil {
			info.Image.Base.Size = n
		}
	}
	switch {
	case choice.layer == nil:
		opened, err = openFlattened(img, what, verifyBlobs, o)
	case verifyBlobs:
		opened, err = openBlob(choice.layer, o.MaxUncompressed, layerWhat, o.Progress)
	default:
		var diffID v1.Hash
		if diffID, err = configDiffID(img, choice.layer, what); err != nil {
			break
		}
		if o.VerifyFirst {
			if err = verifyUncompressed(choice.layer, diffID, o.MaxUncompressed, layerWhat); err != nil {
				break
			}
		}
		opened, err = openUncompressed(choice.layer, diffID, o.MaxUncompressed, layerWhat)
	}
	if err != nil {
		return nil, err
	}
	if b := info.Image.Base; b != nil {
		opened.tar = &countingReader{r: opened.tar, n: &b.Uncompressed}
	}
	p, err := readLayer(opened, info, layerWhat)
	if err != nil {
		if o.VerifyFirst && verifyBlobs {
			err = opened.blame(err)
		}
		opened.close()
		return nil, err
	}
	if o.VerifyFirst {
		return p.readWhole()
	}
	return p, nil
}

// readLayer finds package.yaml (or a .registry/ tree) in a layer's tar stream.
func readLayer(l *openedLayer, info Info, what string) (*Package, error) {
	s := newScanner(l.tar, what)
	stream, err := s.findStream()
	switch {
	case err == nil:
		info.Format = FormatStream
		return &Package{Info: info, stream: stream, close: l.close, finish: func() error {
			return joinDistinct(s.finish(), l.finish())
		}}, nil
	case !errors.Is(err, io.EOF):
		return nil, err
	case len(s.legacy) == 0:
		return nil, fmt.Errorf("%s has no %s at its root (first entries: %s)", what, StreamFile, seen(s.seen))
	}
	if err := l.finish(); err != nil {
		return nil, err
	}
	info.Format = FormatLegacy
	return &Package{Info: info, legacy: s.legacy, close: l.close}, nil
}

// readWhole reads the package's stream to an unlinked temporary file and
// checks the rest of its layer (a second package.yaml, a truncated tar or
// gzip stream, the digest) before handing out a byte: for VerifyFirst,
// nothing of a package that is then refused reaches its reader. The layer
// is read once: its blob is hashed as it is decompressed and scanned.
func (p *Package) readWhole() (*Package, error) {
	if p.stream == nil {
		return p, nil
	}
	s, err := newSpool()
	if err != nil {
		p.Close()
		return nil, err
	}
	err = s.fill(p.stream)
	if ferr := p.finish(); ferr != nil && !errors.Is(err, errSpool) {
		err = ferr // the layer's fault says more than the stream it broke
	}
	if err == nil {
		err = s.rewind()
	}
	if err != nil {
		s.Close()
		p.close()
		return nil, err
	}
	closeLayer := p.close
	p.stream, p.finish = s, func() error { return nil }
	p.close = func() error { return errors.Join(s.Close(), closeLayer()) }
	return p, nil
}

// joinDistinct joins errors, each message once: a source that fails the
// read of the rest of a layer fails its scan and its check alike.
func joinDistinct(errs ...error) error {
	var out []error
	for _, err := range errs {
		if err != nil && !slices.ContainsFunc(out, func(o error) bool { return o.Error() == err.Error() }) {
			out = append(out, err)
		}
	}
	return errors.Join(out...)
}

func seen(names []string) string {
	if len(names) == 0 {
		return "none: the layer is empty"
	}
	return strings.Join(names, ", ")
}

// describeImage records what the image's manifest says (an index the
// caller chose it from is recorded already), and what its config says when
// the caller read it (one more request to a registry).
func describeImage(img v1.Image, info *Info, cfg *v1.ConfigFile) {
	if info.Image == nil {
		info.Image = &ImageInfo{}
	}
	ii := info.Image
	ii.Manifest = info.Digest
	if mt, err := img.MediaType(); err == nil {
		ii.MediaType = string(mt)
	}
	if m, err := img.Manifest(); err == nil {
		ii.Config = m.Config.Digest.String()
		ii.Layers = len(m.Layers)
	}
	if cfg != nil {
		ii.Entrypoint, ii.Cmd = cfg.Config.Entrypoint, cfg.Config.Cmd
	}
}

// indexInfo records the index an image is chosen from.
func indexInfo(idx v1.ImageIndex) *ImageInfo {
	ii := &ImageInfo{}
	if d, err := idx.Digest(); err == nil {
		ii.Index = d.String()
	}
	if im, err := idx.IndexManifest(); err == nil {
		for _, d := range im.Manifests {
			if d.Platform != nil {
				ii.Platforms = append(ii.Platforms, d.Platform.String())
			} else {
				ii.Platforms = append(ii.Platforms, "no platform")
			}
		}
	}
	return ii
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}
