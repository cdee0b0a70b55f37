package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// extensions are the files a directory contributes, as kubectl's.
var extensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// readPath reads one -f argument.
func (r *reader) readPath(path string) {
	if path == "-" {
		r.readStdin()
		return
	}
	info, err := os.Stat(path)
	if err != nil {
		r.pathError(path, "%s", describe(err))
		return
	}
	if !info.IsDir() {
		// A file named outright is read whatever its name or type: a
		// process substitution (-f <(kustomize build)) is a pipe.
		r.readFile(path)
		return
	}
	if r.opts.Recursive {
		r.walk(path)
		return
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		r.pathError(path, "%s", describe(err))
		return
	}
	for _, e := range entries { // sorted by name
		if !e.IsDir() {
			r.readEntry(filepath.Join(path, e.Name()), e)
		}
	}
}

// walk reads a directory tree in lexical order. WalkDir does not follow
// links to directories, so a link cannot make it loop.
func (r *reader) walk(root string) {
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			r.pathError(path, "%s", describe(err))
			return nil // go on with the rest of the tree
		}
		if !d.IsDir() {
			r.readEntry(path, d)
		}
		return nil
	})
}

// readEntry reads a file found in a directory if its extension is a
// manifest's. Only regular files (or links to them) are read: a pipe or a
// device left in a directory would block or never end.
func (r *reader) readEntry(path string, d fs.DirEntry) {
	if !extensions[filepath.Ext(path)] {
		return
	}
	mode := d.Type()
	if mode&fs.ModeSymlink != 0 {
		info, err := os.Stat(path)
		if err != nil {
			r.pathError(path, "broken link: %s", describe(err))
			return
		}
		if info.IsDir() {
			return // links to directories are not followed, as kubectl -R
		}
		mode = info.Mode().Type()
	}
	if !mode.IsRegular() {
		r.pathError(path, "not a regular file; name it with -f to read it anyway")
		return
	}
	r.readFile(path)
}

// readFile reads one file once, within the size limit.
func (r *reader) readFile(path string) {
	if key, ok := fileKey(path); ok {
		if r.files[key] {
			return
		}
		r.files[key] = true
	}
	f, err := os.Open(path)
	if err != nil {
		r.pathError(path, "%s", describe(err))
		return
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > r.opts.MaxBytes {
		r.pathError(path, "%s", tooLarge(info.Size(), r.opts.MaxBytes))
		return
	}
	data, err := readLimited(f, r.opts.MaxBytes)
	if err != nil {
		r.pathError(path, "%s", describe(err))
		return
	}
	r.readContent(path, data, filepath.Ext(path) == ".json")
}

// readStdin reads standard input, which can be read only once.
func (r *reader) readStdin() {
	switch {
	case r.stdinRead:
		r.pathError("-", "standard input given twice; give - once")
		return
	case r.opts.Stdin == nil:
		r.pathError("-", "no standard input to read")
		return
	}
	r.stdinRead = true
	data, err := readLimited(r.opts.Stdin, r.opts.MaxBytes)
	if err != nil {
		r.pathError("-", "%s", describe(err))
		return
	}
	r.readContent(StdinSource, data, false)
}

// readLimited reads all of rd, failing past max bytes rather than stopping
// quietly: a truncated manifest would read as valid.
func readLimited(rd io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(rd, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errors.New(tooLarge(-1, max))
	}
	return data, nil
}

// tooLarge says a file passed the limit; size < 0 means not known.
func tooLarge(size, max int64) string {
	if size < 0 {
		return fmt.Sprintf("more than the %s a manifest file may hold; split it", bytesString(max))
	}
	return fmt.Sprintf("%d bytes, more than the %s a manifest file may hold; split it", size, bytesString(max))
}

// bytesString writes a size in MiB when it is a whole number of them.
func bytesString(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// fileKey identifies a file however it was named.
func fileKey(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, true
	}
	return abs, true
}

// describe turns a file error into its message without repeating the path,
// which the caller puts first.
func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}
