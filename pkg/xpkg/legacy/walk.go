package legacy

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
)

// fileKind is the role a file's name gives it in the tree.
type fileKind int

const (
	kindOther fileKind = iota
	kindApp
	kindInstall
	kindRBAC
	kindGroup
	kindResource
	kindCRD
	kindIcon
	kindUISchema
	kindMisplaced // a root-only name found below the root
)

// file is one file of the tree that was read.
type file struct {
	name string // path in the fs.FS, for messages
	rel  string // slash path relative to the tree's root
	kind fileKind
	data []byte
}

// dir is the directory of the file relative to the root ("." for the root).
func (f *file) dir() string { return path.Dir(f.rel) }

// base is the file's name without its directory.
func (f *file) base() string { return path.Base(f.rel) }

// tree is every file of the package that plays a role, in lexical order.
type tree struct {
	app, install, rbac *file
	files              []*file // the rest, in walk order
}

// loader walks the tree within the bounds of this package.
type loader struct {
	fsys    fs.FS
	root    string
	entries int
	budget  int64
	warn    *warnings
}

// classify decides a file's role from its name alone, so nothing that plays
// no role is ever read.
func classify(rel string) fileKind {
	base := path.Base(rel)
	atRoot := path.Dir(rel) == "."
	switch base {
	case "app.yaml", "install.yaml", "rbac.yaml":
		return rootFileKind(base, atRoot)
	case "group.yaml":
		return kindGroup
	}
	switch {
	case strings.HasSuffix(base, "resource.yaml"):
		return kindResource
	case strings.HasSuffix(base, "crd.yaml"):
		return kindCRD
	case strings.HasSuffix(base, "ui-schema.yaml"):
		return kindUISchema
	case isIconName(base):
		return kindIcon
	}
	return kindOther
}

// rootFileKind is the role of a file that only counts at the root.
func rootFileKind(base string, atRoot bool) fileKind {
	switch {
	case !atRoot:
		return kindMisplaced
	case base == "app.yaml":
		return kindApp
	case base == "install.yaml":
		return kindInstall
	}
	return kindRBAC
}

// checkRoot refuses a root that is missing, not a directory, or reached
// through a symbolic link (which could lead outside the fs.FS).
func (l *loader) checkRoot() error {
	if l.root != "." {
		for p := l.root; p != "."; p = path.Dir(p) {
			info, err := fs.Lstat(l.fsys, p)
			if errors.Is(err, fs.ErrNotExist) {
				return fileErr(l.root, "not found: no legacy package tree here")
			}
			if err != nil {
				return ioErr(p, err)
			}
			if info.Mode()&fs.ModeSymlink != 0 {
				return fileErr(p, "is a symbolic link; links are not followed")
			}
		}
	}
	info, err := fs.Stat(l.fsys, l.root)
	if err != nil {
		return ioErr(l.root, err)
	}
	if !info.IsDir() {
		return fileErr(l.root, "not a directory")
	}
	return nil
}

// load walks the tree and reads the files that play a role.
func (l *loader) load() (*tree, error) {
	if err := l.checkRoot(); err != nil {
		return nil, err
	}
	t := &tree{}
	err := fs.WalkDir(l.fsys, l.root, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return ioErr(name, err)
		}
		if l.entries++; l.entries > MaxFiles {
			return fileErr(l.root, "%w", tooLarge("holds more than %d entries", MaxFiles))
		}
		if d.IsDir() {
			return nil
		}
		rel := l.rel(name)
		kind := classify(rel)
		if kind == kindOther {
			return nil
		}
		if !d.Type().IsRegular() {
			if kind == kindApp {
				return fileErr(name, "not a regular file; links are not followed")
			}
			l.warn.add(name, "not a regular file (links are not followed); ignored")
			return nil
		}
		if kind == kindMisplaced {
			l.warn.add(name, "%s is only read at the root of the tree; ignored", path.Base(rel))
			return nil
		}
		data, err := l.read(name)
		if err != nil {
			return err
		}
		t.add(&file{name: name, rel: rel, kind: kind, data: data})
		return nil
	})
	return t, err
}

// rel is name relative to the root.
func (l *loader) rel(name string) string {
	if l.root == "." {
		return name
	}
	return strings.TrimPrefix(name, l.root+"/")
}

func (t *tree) add(f *file) {
	switch f.kind {
	case kindApp:
		t.app = f
	case kindInstall:
		t.install = f
	case kindRBAC:
		t.rbac = f
	default:
		t.files = append(t.files, f)
	}
}

// read reads one file, refusing it past MaxFileSize and the whole tree past
// MaxTotalSize. The size is checked while reading as well as up front, as a
// file system may report sizes wrongly.
func (l *loader) read(name string) ([]byte, error) {
	f, err := l.fsys.Open(name)
	if err != nil {
		return nil, ioErr(name, err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > MaxFileSize {
		return nil, fileErr(name, "%w", tooLarge("file is %d bytes, over the %d-byte (16 MiB) limit", info.Size(), MaxFileSize))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, ioErr(name, err)
	}
	if int64(len(data)) > MaxFileSize {
		return nil, fileErr(name, "%w", tooLarge("file is over the %d-byte (16 MiB) limit", MaxFileSize))
	}
	if l.budget -= int64(len(data)); l.budget < 0 {
		return nil, fileErr(name, "%w", tooLarge("the package's files add up to more than %d bytes", MaxTotalSize))
	}
	return data, nil
}

// ioErr reports a file system error once under the file's name, without
// the path a *fs.PathError repeats.
func ioErr(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &FileError{Path: name, Err: err}
}
