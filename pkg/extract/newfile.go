package extract

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ExistsError says that a file to create names something already there:
// a file, a directory, a device, a symbolic link (even one to nothing).
type ExistsError struct {
	Path string
	// What it is ("a file", "a directory", …).
	What string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s exists already (%s)", e.Path, e.What)
}

// CheckNew tells whether path names nothing yet, as CreateNewFile needs:
// an *ExistsError when it names anything, another error when that cannot
// be told. It follows no symbolic link.
func CheckNew(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err == nil:
		return &ExistsError{Path: path, What: describe(fi.Mode())}
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return err
	}
}

func describe(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// CreateNewFile starts writing path, which must name nothing: not on
// entry (CheckNew), and not on Commit, which links the finished content
// to path with link(2), failing with an *ExistsError rather than replace
// what another process put there meanwhile. Until Commit, and after a
// failed one, nothing is at path.
func CreateNewFile(path string) (*File, error) {
	if err := CheckNew(path); err != nil {
		return nil, err
	}
	f, err := CreateFile(path)
	if err != nil {
		return nil, err
	}
	f.exclusive = true
	return f, nil
}

// publishNew gives the staged file tmp the name target, which must not
// exist, and removes tmp. Where the file system has no hard links, target
// is created with O_EXCL and tmp copied into it (removed again when the
// copy fails).
func publishNew(tmp, target string) error {
	defer os.Remove(tmp)
	err := os.Link(tmp, target)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return existsNow(target)
	}
	return copyNew(tmp, target)
}

// existsNow is the *ExistsError for a target that appeared while it was
// written.
func existsNow(target string) error {
	if err := CheckNew(target); err != nil {
		return err
	}
	return &ExistsError{Path: target, What: "created meanwhile"}
}

func copyNew(tmp, target string) error {
	in, err := os.Open(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	defer in.Close()
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, creationMode(0o666))
	if errors.Is(err, fs.ErrExist) {
		return existsNow(target)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(target)
		return fmt.Errorf("write %s: %w", target, err)
	}
	return nil
}
