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
// and non-YAML files are skipped; a symbolic link is followed only to a
// regular file inside the directory.
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
	r, _, err := openDirStream(dir)
	return r, err
}

// openDirStream is OpenDirStream, and a note naming the YAML files left
// out because they are no regular files ("" when none).
func openDirStream(dir string) (io.ReadCloser, string, error) {
	path, err := rootFile(dir, MetaFile)
	if err != nil {
		return nil, "", err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, "", fmt.Errorf("package directory %s: %w", dir, err)
	}
	files, skipped, err := yamlFiles(dir)
	if err != nil {
		return nil, "", err
	}
	return &dirReader{files: append([]string{path}, files...)}, skippedNote(skipped), nil
}

// skippedNote names the files left out, the first few of them.
func skippedNote(skipped []string) string {
	if len(skipped) == 0 {
		return ""
	}
	const shown = 5
	names := strings.Join(skipped[:min(len(skipped), shown)], ", ")
	if len(skipped) > shown {
		names += fmt.Sprintf(" and %d more", len(skipped)-shown)
	}
	return fmt.Sprintf("left out %d YAML files that are no regular files: %s", len(skipped), names)
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

// yamlFiles are the YAML files of a package directory but crossplane.yaml,
// in lexical order. A symbolic link to a regular file inside the directory
// is read, as a package build reads it; skipped are the other files that
// are no regular files (links that lead outside or nowhere, named pipes,
// devices), which are not read, each with what it is.
func yamlFiles(dir string) (files, skipped []string, err error) {
	targets := map[string]string{} // links, in the order of their names
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
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
		ext := filepath.Ext(name)
		if path == filepath.Join(dir, MetaFile) || ext != ".yaml" && ext != ".yml" {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case d.Type().IsRegular():
		case d.Type()&fs.ModeSymlink != 0:
			target, err := rootFile(dir, rel)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s (a symbolic link that leads outside the directory, nowhere or to no regular file)", rel))
				return nil
			}
			targets[path] = target
		default:
			skipped = append(skipped, fmt.Sprintf("%s (%s)", rel, fileKind(d.Type())))
			return nil
		}
		files = append(files, path)
		return nil
	})
	slices.Sort(files)
	for i, f := range files {
		if t, ok := targets[f]; ok {
			files[i] = t
		}
	}
	slices.Sort(skipped)
	return files, skipped, err
}

// fileKind says what a file that is no regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "no regular file"
}
