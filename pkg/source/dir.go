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
	meta, err := os.ReadFile(filepath.Join(dir, MetaFile))
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
