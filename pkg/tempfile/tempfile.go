// Package tempfile makes temporary files that leave nothing behind.
package tempfile

import "os"

// Unlinked creates a temporary file (pattern as os.CreateTemp takes it,
// in the default directory) and removes its name at once: the open file
// is the only way to it, and it is gone however the process ends, by a
// signal or a crash included.
func Unlinked(pattern string) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
