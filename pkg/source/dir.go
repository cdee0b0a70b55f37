package source

import (
	"bytes"
	"fmt"
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
	path, err := rootFile(dir, MetaFile)
	if err != nil {
		return nil, err
	}
	meta, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("package directory %s: %w", dir, err)
	}
	files, err := yamlFiles(dir)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	appendDoc(&buf, meta)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		appendDoc(&buf, b)
	}
	return buf.Bytes(), nil
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

// appendDoc adds a file's documents to the stream, separated by "---".
func appendDoc(buf *bytes.Buffer, doc []byte) {
	doc = bytes.TrimPrefix(doc, []byte("---\n"))
	if buf.Len() > 0 {
		buf.WriteString("---\n")
	}
	buf.Write(doc)
	if len(doc) > 0 && !bytes.HasSuffix(doc, []byte("\n")) {
		buf.WriteByte('\n')
	}
}
