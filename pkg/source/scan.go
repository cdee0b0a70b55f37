package source

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"testing/fstest"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// Names the xpkg specification gives.
const (
	// StreamFile is the package stream's path at the root of the image.
	StreamFile = "package.yaml"
	// LegacyRoot is the directory of the older .registry/ package layout.
	LegacyRoot = ".registry"
)

// maxLegacyFile bounds one .registry/ file held in memory.
const maxLegacyFile = 16 << 20

// scanner walks a layer's tar stream, refusing hostile entries: paths that
// are absolute or climb out of the root, links that point outside it,
// device files, and duplicate package.yaml entries.
type scanner struct {
	tr     *tar.Reader
	what   string // names the layer in messages
	legacy fstest.MapFS
	stream bool // a package.yaml entry was seen
	seen   []string
}

func newScanner(r io.Reader, what string) *scanner {
	return &scanner{tr: tar.NewReader(r), what: what, legacy: fstest.MapFS{}}
}

// findStream advances to the package.yaml entry and returns a reader of its
// content; io.EOF means the layer has none.
func (s *scanner) findStream() (io.Reader, error) {
	for {
		h, name, err := s.next()
		if err != nil {
			return nil, err
		}
		if name == StreamFile {
			if err := s.acceptStream(h); err != nil {
				return nil, err
			}
			return s.tr, nil
		}
		if err := s.keepLegacy(h, name); err != nil {
			return nil, err
		}
	}
}

// finish checks the entries after package.yaml: a second package.yaml or a
// hostile entry anywhere in the layer fails the read.
func (s *scanner) finish() error {
	for {
		h, name, err := s.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if name == StreamFile {
			return s.acceptStream(h)
		}
	}
}

func (s *scanner) acceptStream(h *tar.Header) error {
	if s.stream {
		return fmt.Errorf("%s holds more than one %s", s.what, StreamFile)
	}
	s.stream = true
	if h.Typeflag != tar.TypeReg {
		return fmt.Errorf("%s: %s is not a regular file (tar type %q)", s.what, StreamFile, h.Typeflag)
	}
	return nil
}

// keepLegacy holds .registry/ files in memory for the legacy translation.
func (s *scanner) keepLegacy(h *tar.Header, name string) error {
	if h.Typeflag != tar.TypeReg || (name != LegacyRoot && !strings.HasPrefix(name, LegacyRoot+"/")) {
		return nil
	}
	if h.Size > maxLegacyFile {
		return fmt.Errorf("%s: %s is %d bytes, more than the %d allowed for a .registry file", s.what, name, h.Size, maxLegacyFile)
	}
	b, err := io.ReadAll(s.tr)
	if err != nil {
		return s.readError(err)
	}
	s.legacy[name] = &fstest.MapFile{Data: b, Mode: fs.FileMode(h.Mode) & fs.ModePerm}
	return nil
}

// next returns the next entry and its cleaned name, checking it.
func (s *scanner) next() (*tar.Header, string, error) {
	h, err := s.tr.Next()
	if errors.Is(err, io.EOF) {
		return nil, "", io.EOF
	}
	if err != nil {
		return nil, "", s.readError(err)
	}
	name, err := checkEntry(h)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", s.what, err)
	}
	if len(s.seen) < 5 {
		s.seen = append(s.seen, name)
	}
	return h, name, nil
}

func (s *scanner) readError(err error) error {
	var le *limitError
	if errors.As(err, &le) {
		return err
	}
	return readError(s.what, err)
}

// readError says what went wrong reading a layer in the user's words.
func readError(what string, err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s is truncated: %w", what, err)
	case errors.As(err, &corrupt), errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
		return fmt.Errorf("%s is corrupt: bad gzip data (%w)", what, err)
	}
	return fmt.Errorf("read %s: %w", what, err)
}

// checkEntry returns the entry's name relative to the root, or why the
// entry is refused.
func checkEntry(h *tar.Header) (string, error) {
	name, err := entryName(h.Name)
	if err != nil {
		return "", err
	}
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeDir, tar.TypeXGlobalHeader, tar.TypeXHeader:
	case tar.TypeSymlink:
		if err := checkLinkTarget(name, h.Linkname, true); err != nil {
			return "", err
		}
	case tar.TypeLink:
		if err := checkLinkTarget(name, h.Linkname, false); err != nil {
			return "", err
		}
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return "", fmt.Errorf("entry %q is a device or pipe (tar type %q): packages hold only files", h.Name, h.Typeflag)
	default:
		return "", fmt.Errorf("entry %q has unsupported tar type %q", h.Name, h.Typeflag)
	}
	return name, nil
}

// entryName cleans a tar entry name; "./package.yaml" is "package.yaml".
func entryName(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("entry with an empty name")
	}
	if strings.HasPrefix(raw, "/") {
		return "", fmt.Errorf("entry %q has an absolute path", raw)
	}
	for part := range strings.SplitSeq(raw, "/") {
		if part == ".." {
			return "", fmt.Errorf("entry %q climbs out of the package root", raw)
		}
	}
	if strings.ContainsRune(raw, 0) {
		return "", fmt.Errorf("entry %q has a NUL byte in its name", raw)
	}
	return path.Clean(raw), nil
}

// checkLinkTarget refuses links that resolve outside the root. A symlink's
// target is relative to the link's directory, a hard link's to the root.
func checkLinkTarget(name, target string, symlink bool) error {
	if target == "" || strings.HasPrefix(target, "/") {
		return fmt.Errorf("link %q points to %q, outside the package", name, target)
	}
	resolved := target
	if symlink {
		resolved = path.Join(path.Dir(name), target)
	}
	if resolved = path.Clean(resolved); resolved == ".." || strings.HasPrefix(resolved, "../") {
		return fmt.Errorf("link %q points to %q, outside the package", name, target)
	}
	return nil
}
