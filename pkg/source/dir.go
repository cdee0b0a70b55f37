package source

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MetaFile is the package metadata file at the root of a package source
// directory (the on-disk format of seed 001).
const MetaFile = "crossplane.yaml"

// DirStream builds the package.yaml stream of a package source directory the
// way crossplane xpkg build does: crossplane.yaml first, then every other
// YAML file in lexical path order. examples/ directories, hidden directories
// and non-YAML files are skipped; symbolic links are not followed.
func DirStream(dir string) ([]byte, error) {
	r, err := OpenDirStream(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// OpenDirStream is DirStream read file by file, as it is consumed: the
// stream is never whole in memory.
func OpenDirStream(dir string) (io.ReadCloser, error) {
	path, err := rootFile(dir, MetaFile)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("package directory %s: %w", dir, err)
	}
	files, err := yamlFiles(dir)
	if err != nil {
		return nil, err
	}
	return &dirReader{files: append([]string{path}, files...)}, nil
}

// dirReader reads files one after the other, joined as a package build joins them:
// each file's leading "---" line dropped, a "---" line between files, and
// a final newline added to a file that lacks one.
type dirReader struct {
	files   []string
	f       *os.File
	br      *bufio.Reader // buf while a file is open
	buf     *bufio.Reader
	pending []byte
	written int64 // bytes of the stream so far
	inFile  int64 // bytes of the current file so far
	last    byte
}

func (d *dirReader) Read(p []byte) (int, error) {
	for {
		if len(d.pending) > 0 {
			n := copy(p, d.pending)
			d.pending = d.pending[n:]
			d.written += int64(n)
			return n, nil
		}
		if d.br == nil {
			if len(d.files) == 0 {
				return 0, io.EOF
			}
			f, err := os.Open(d.files[0])
			if err != nil {
				return 0, err
			}
			d.files = d.files[1:]
			if d.buf == nil {
				d.buf = bufio.NewReaderSize(f, 64<<10)
			} else {
				d.buf.Reset(f) // one buffer for every file
			}
			d.f, d.br, d.inFile = f, d.buf, 0
			if head, _ := d.br.Peek(4); string(head) == "---\n" {
				_, _ = d.br.Discard(4)
			}
			if d.written > 0 {
				d.pending = []byte("---\n")
			}
			continue
		}
		n, err := d.br.Read(p)
		if n > 0 {
			d.written += int64(n)
			d.inFile += int64(n)
			d.last = p[n-1]
			return n, nil
		}
		if errors.Is(err, io.EOF) {
			d.f.Close()
			d.f, d.br = nil, nil
			if d.inFile > 0 && d.last != '\n' {
				d.pending = []byte("\n")
			}
			continue
		}
		if err != nil {
			return 0, err
		}
	}
}

// Close closes the file being read.
func (d *dirReader) Close() error {
	d.files = nil
	if d.f != nil {
		return d.f.Close()
	}
	return nil
}

// rootFile is the path of a file at the root of a package directory. A
// symbolic link is followed only where it stays inside the directory: a
// package directory that names a file elsewhere (a user's secrets, a
// device) is refused, as the tar rules refuse such links in an image.
func rootFile(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return path, nil // missing or a plain file: reading it says which
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("package directory %s: %w", dir, err)
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("package directory %s: %s is a symbolic link that leads nowhere: %w", dir, name, err)
	}
	rel, err := filepath.Rel(root, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("package directory %s: refusing %s, a symbolic link to %s outside the directory", dir, name, target)
	}
	if tst, err := os.Stat(target); err != nil || !tst.Mode().IsRegular() {
		return "", fmt.Errorf("package directory %s: refusing %s, a symbolic link to %s, which is no regular file", dir, name, target)
	}
	return target, nil
}

func yamlFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (name == "examples" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || path == filepath.Join(dir, MetaFile) {
			return nil
		}
		if ext := filepath.Ext(name); ext == ".yaml" || ext == ".yml" {
			files = append(files, path)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}
