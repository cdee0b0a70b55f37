package legacy

import (
	"errors"
	"fmt"
	"strings"
)

// ErrTooLarge is matched (errors.Is) by every error that reports a bound of
// this package being exceeded, so callers can tell hostile or runaway input
// from a merely broken package.
var ErrTooLarge = errors.New("limit exceeded")

// FileError names the file, and the YAML document within it, that a
// translation failed on, so one line tells the package author what to fix.
type FileError struct {
	Path string // path of the file in the fs.FS
	Doc  int    // 1-based YAML document number; 0 for the whole file
	Err  error
}

func (e *FileError) Error() string {
	msg := oneLine(e.Err.Error())
	if e.Doc > 0 {
		return fmt.Sprintf("%s: document %d: %s", e.Path, e.Doc, msg)
	}
	return e.Path + ": " + msg
}

func (e *FileError) Unwrap() error { return e.Err }

// fileErr wraps a formatted message as a FileError for a whole file.
func fileErr(path string, format string, args ...any) error {
	return &FileError{Path: path, Err: fmt.Errorf(format, args...)}
}

// docErr wraps a formatted message as a FileError for one document.
func docErr(path string, doc int, format string, args ...any) error {
	return &FileError{Path: path, Doc: doc, Err: fmt.Errorf(format, args...)}
}

// limitError is a bound being exceeded; it matches ErrTooLarge.
type limitError struct{ msg string }

func (e *limitError) Error() string        { return e.msg }
func (e *limitError) Is(target error) bool { return target == ErrTooLarge }

func tooLarge(format string, args ...any) error {
	return &limitError{msg: fmt.Sprintf(format, args...)}
}

// oneLine keeps messages from YAML and JSON decoders on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// warnings collects the non-fatal oddities of one translation, in the order
// found, which is deterministic because the tree is walked in lexical order.
type warnings []string

func (w *warnings) add(path string, format string, args ...any) {
	*w = append(*w, path+": "+oneLine(fmt.Sprintf(format, args...)))
}
