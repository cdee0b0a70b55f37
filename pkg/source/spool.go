package source

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/tempfile"
)

// spoolChunk is the size of the spool's reads and writes: a few dozen
// system calls for a package stream of tens of megabytes, not thousands.
const spoolChunk = 1 << 20

// spool holds a package stream in an unlinked temporary file until its
// layer has been checked whole; nothing is left behind however the
// process ends. It is read as an io.Reader; copied to a file (stdout), it
// goes there without passing through this process where the system can
// (spool_linux.go).
type spool struct {
	f   *os.File
	buf []byte
}

// errSpool marks a failure to write the temporary file, which is no fault
// of the layer.
var errSpool = errors.New("writing the temporary copy failed")

func newSpool() (*spool, error) {
	f, err := tempfile.Unlinked(".kubectl-xpkg-blob-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary copy to verify before writing: %w", err)
	}
	return &spool{f: f, buf: make([]byte, spoolChunk)}, nil
}

// fill writes what r reads to the file, a chunk at a time.
func (s *spool) fill(r io.Reader) error {
	for {
		n, err := readChunk(r, s.buf)
		if n > 0 {
			if _, werr := s.f.Write(s.buf[:n]); werr != nil {
				return fmt.Errorf("%w: %w", errSpool, werr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readChunk reads into buf until it is full or r ends or fails (io.EOF
// only at its end, whatever was read before).
func readChunk(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// rewind makes the spool read from its start.
func (s *spool) rewind() error {
	_, err := s.f.Seek(0, io.SeekStart)
	return err
}

func (s *spool) Read(p []byte) (int, error) { return s.f.Read(p) }

// WriteTo copies the rest of the spool to w: to a file or pipe without a
// copy through this process where the system allows, otherwise a chunk
// at a time.
func (s *spool) WriteTo(w io.Writer) (int64, error) {
	if f, ok := w.(*os.File); ok {
		if n, handled, err := sendFile(f, s.f); handled {
			return n, err
		}
	}
	return io.CopyBuffer(onlyWriter{w}, onlyReader{s.f}, s.buf)
}

func (s *spool) Close() error { return s.f.Close() }

// onlyReader and onlyWriter hide ReadFrom and WriteTo, so that
// io.CopyBuffer uses the buffer it is given.
type onlyReader struct{ io.Reader }

type onlyWriter struct{ io.Writer }
