package extract

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// File is an output file written atomically: content goes to a temporary
// file beside the target, which replaces the target only on Commit. A
// failed extract leaves nothing behind.
type File struct {
	*os.File
	target string
	done   bool
	// exclusive: Commit never replaces the target (CreateNewFile).
	exclusive bool
}

// CreateFile starts writing path.
func CreateFile(path string) (*File, error) {
	removeStale(path)
	f, err := os.CreateTemp(filepath.Dir(path), stagingPattern(path))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &File{File: f, target: path}, nil
}

// Commit makes the content visible under the target name.
func (f *File) Commit() error {
	f.done = true
	if err := f.Sync(); err != nil {
		f.File.Close()
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.target, err)
	}
	if err := f.File.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.target, err)
	}
	if err := os.Chmod(f.Name(), creationMode(0o666)); err != nil {
		os.Remove(f.Name())
		return err
	}
	if f.exclusive {
		return publishNew(f.Name(), f.target)
	}
	if err := os.Rename(f.Name(), f.target); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.target, err)
	}
	return nil
}

// Abort drops the content; after Commit it does nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.Name())
}

// Dir is an output directory built atomically: files go into a temporary
// directory beside the target, renamed into place on Commit.
type Dir struct {
	tmp, target string
	done        bool
}

// CreateDir starts building dir, which must not exist or be empty.
func CreateDir(dir string) (*Dir, error) {
	dir = filepath.Clean(dir)
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0:
		return nil, fmt.Errorf("output directory %s is not empty: choose another one or remove it", dir)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("output directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o777); err != nil {
		return nil, err
	}
	removeStale(dir)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), stagingPattern(dir))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	return &Dir{tmp: tmp, target: dir}, nil
}

// Path is where a file named name is written before Commit.
func (d *Dir) Path(name string) string { return filepath.Join(d.tmp, name) }

// Commit puts the directory in place.
func (d *Dir) Commit() error {
	d.done = true
	if err := os.Chmod(d.tmp, creationMode(0o777)); err != nil {
		os.RemoveAll(d.tmp)
		return err
	}
	_ = os.Remove(d.target) // an empty directory may stand there
	if err := os.Rename(d.tmp, d.target); err != nil {
		os.RemoveAll(d.tmp)
		return fmt.Errorf("write %s: %w", d.target, err)
	}
	return nil
}

// Abort removes everything written; after Commit it does nothing.
func (d *Dir) Abort() {
	if !d.done {
		d.done = true
		os.RemoveAll(d.tmp)
	}
}
