package ocicopy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The OCI image layout's names.
const (
	layoutFile    = "oci-layout"
	indexFile     = "index.json"
	layoutVersion = "1.0.0"
	// RefNameAnnotation names an index.json entry.
	RefNameAnnotation = "org.opencontainers.image.ref.name"
)

// maxIndexBytes bounds a layout's index.json, which may come from across
// an air gap: a few hundred bytes an entry.
const maxIndexBytes = 64 << 20

// Layout is an OCI image layout being written. Its blobs appear under
// their names only whole and verified, and an image's index.json entry
// only once all of its blobs are there: a copy that stops half way leaves
// nothing a reader could take for the image. Copies into one Layout may
// run at once; two processes must not write one layout at once.
type Layout struct {
	dir string
	mu  sync.Mutex // index.json's read, change and write
}

// Entry is one index.json entry.
type Entry struct {
	RefName   string
	Digest    v1.Hash
	MediaType types.MediaType
	Size      int64
}

// OpenLayout opens the OCI image layout dir for writing, creating it when
// dir is absent or empty; a directory that holds something else is
// refused.
func OpenLayout(dir string) (*Layout, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0:
		if err := initLayout(dir); err != nil {
			return nil, fmt.Errorf("create the OCI layout %s: %w", dir, err)
		}
	case err != nil:
		return nil, fmt.Errorf("open the OCI layout %s: %w", dir, err)
	default:
		if err := checkLayout(dir); errors.Is(err, errNoLayout) {
			return nil, fmt.Errorf("%s is neither an OCI image layout nor empty: choose an empty or new directory", dir)
		} else if err != nil {
			return nil, err
		}
		removeTemps(dir)
	}
	return &Layout{dir: dir}, nil
}

// removeTemps removes what copies that crashed left: temporary files,
// which only one writer at a time can tell from its own.
func removeTemps(dir string) {
	for _, pattern := range []string{"." + indexFile + ".tmp-*", "blobs/*/.*.tmp-*"} {
		left, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, f := range left {
			os.Remove(f)
		}
	}
}

// Dir is the layout's directory.
func (l *Layout) Dir() string { return l.dir }

// initLayout writes the oci-layout file first: a layout whose creation
// stopped before index.json is still one, with no entries.
func initLayout(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o755); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, layoutFile), []byte(`{"imageLayoutVersion":"`+layoutVersion+`"}`)); err != nil {
		return err
	}
	return writeIndex(dir, &v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{}})
}

var errNoLayout = errors.New("it has no " + layoutFile + " file")

func checkLayout(dir string) error {
	raw, err := os.ReadFile(filepath.Join(dir, layoutFile))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is no OCI image layout: %w", dir, errNoLayout)
	}
	if err != nil {
		return fmt.Errorf("open the OCI layout %s: %w", dir, err)
	}
	var l struct {
		Version string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(raw, &l); err != nil || l.Version == "" {
		return fmt.Errorf("%s: its %s file names no imageLayoutVersion: it is no OCI image layout", dir, layoutFile)
	}
	return nil
}

// ReadLayout lists the entries of the OCI image layout dir's index.json,
// each with its ref name ("" for an entry without one).
func ReadLayout(dir string) ([]Entry, error) {
	if err := checkLayout(dir); err != nil {
		return nil, err
	}
	im, err := readIndex(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(im.Manifests))
	for _, d := range im.Manifests {
		out = append(out, Entry{RefName: d.Annotations[RefNameAnnotation], Digest: d.Digest, MediaType: d.MediaType, Size: d.Size})
	}
	return out, nil
}

// readIndex reads index.json; a layout without one has no entries.
func readIndex(dir string) (*v1.IndexManifest, error) {
	f, err := os.Open(filepath.Join(dir, indexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return &v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the OCI layout %s: %w", dir, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxIndexBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the OCI layout %s: %w", dir, err)
	}
	if len(raw) > maxIndexBytes {
		return nil, fmt.Errorf("the %s of the OCI layout %s is larger than %d bytes: refused", indexFile, dir, maxIndexBytes)
	}
	var im v1.IndexManifest
	if err := json.Unmarshal(raw, &im); err != nil {
		return nil, fmt.Errorf("the %s of the OCI layout %s is corrupt: %w", indexFile, dir, err)
	}
	return &im, nil
}

func writeIndex(dir string, im *v1.IndexManifest) error {
	raw, err := json.Marshal(im)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, indexFile), raw)
}

// setEntry makes d the entry named refName, in place of any entry of
// that name, keeping the others.
func (l *Layout) setEntry(refName string, d v1.Descriptor) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	im, err := readIndex(l.dir)
	if err != nil {
		return err
	}
	d.Annotations = map[string]string{RefNameAnnotation: refName}
	kept := make([]v1.Descriptor, 0, len(im.Manifests)+1)
	placed := false
	for _, e := range im.Manifests {
		switch {
		case e.Annotations[RefNameAnnotation] != refName:
			kept = append(kept, e)
		case !placed:
			kept = append(kept, d) // where the old entry was
			placed = true
		}
	}
	if !placed {
		kept = append(kept, d)
	}
	im.Manifests = kept
	if err := writeIndex(l.dir, im); err != nil {
		return fmt.Errorf("write the %s of the OCI layout %s: %w", indexFile, l.dir, err)
	}
	return nil
}

// entry is the entry named refName in index.json, if any.
func (l *Layout) entry(refName string) (v1.Descriptor, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	im, err := readIndex(l.dir)
	if err != nil {
		return v1.Descriptor{}, false, err
	}
	for _, e := range im.Manifests {
		if e.Annotations[RefNameAnnotation] == refName {
			return e, true, nil
		}
	}
	return v1.Descriptor{}, false, nil
}

// blobPath is where a blob lives in a layout; a digest that is none (a
// path in disguise) is refused.
func blobPath(dir string, h v1.Hash) (string, error) {
	if _, err := v1.NewHash(h.String()); err != nil {
		return "", fmt.Errorf("%q is no digest: %w", h.String(), err)
	}
	return filepath.Join(dir, "blobs", h.Algorithm, h.Hex), nil
}

// writeAtomic replaces path with data whole or not at all, and makes it
// survive a crash.
func writeAtomic(path string, data []byte) error {
	if err := writeStream(path, bytes.NewReader(data)); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// writeStream writes r to a temporary file beside path and renames it to
// path once r has ended without error: path is never a part of r. A
// temporary name starts with a dot, which no digest does.
func writeStream(path string, r io.Reader) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// syncDir makes the names written in dir survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
