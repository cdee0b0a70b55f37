package source

import (
	"errors"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
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
	var opened *openedLayer
	layerWhat := "the flattened filesystem of " + what
	if choice.layer != nil {
		d, _ := choice.layer.Digest()
		info.Layer = d.String()
		layerWhat = "layer " + d.String() + " of " + what
	}
	switch {
	case choice.layer == nil:
		rc := mutate.Extract(img)
		opened = &openedLayer{tar: newLimitReader(rc, o.MaxUncompressed, layerWhat), finish: func() error { return nil }, close: rc.Close}
	case verifyBlobs:
		opened, err = openBlob(choice.layer, o.MaxUncompressed, layerWhat, o.Progress)
	default:
		opened, err = openUncompressed(choice.layer, o.MaxUncompressed, layerWhat)
	}
	if err != nil {
		return nil, err
	}
	p, err := readLayer(opened, info, layerWhat)
	if err != nil {
		opened.close()
		return nil, err
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
			return errors.Join(s.finish(), l.finish())
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

func seen(names []string) string {
	if len(names) == 0 {
		return "none: the layer is empty"
	}
	return strings.Join(names, ", ")
}
