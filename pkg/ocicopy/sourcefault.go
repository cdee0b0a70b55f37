package ocicopy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// SourceError is a fault of the source met while one of its blobs was
// read: a copy whose upload to the destination fails on it is the
// source's doing, and is said to be.
type SourceError struct {
	// Source names the source; Blob is the blob read.
	Source string
	Blob   v1.Hash
	Err    error
	// Corrupt: the source sent the blob to its end, and it is not what its
	// descriptor names (its digest or size). Reading it again gets the same.
	Corrupt bool
}

func (e *SourceError) Error() string {
	if e.Corrupt {
		return fmt.Sprintf("the source %s sent other content for the blob %s: %v", e.Source, e.Blob, e.Err)
	}
	return fmt.Sprintf("reading the blob %s from the source %s: %v", e.Blob, e.Source, e.Err)
}

func (e *SourceError) Unwrap() error { return e.Err }

// CorruptSource tells a copy that failed because its source serves a
// blob unlike its digest: a run again fails the same way.
func CorruptSource(err error) bool {
	var se *SourceError
	return errors.As(err, &se) && se.Corrupt
}

// sourceReader reads a source's blob and keeps the first fault of the
// source it meets. A read that fails once the reader is closed (the
// destination gave up on the upload) is no fault of the source.
type sourceReader struct {
	io.ReadCloser
	src string
	d   v1.Descriptor
	n   int64

	mu     sync.Mutex
	closed bool
	err    *SourceError
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.n += int64(n)
	if err == nil || err == io.EOF || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return n, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return n, err
	}
	// What fails once the whole blob is read is its content.
	se := &SourceError{Source: s.src, Blob: s.d.Digest, Err: err, Corrupt: s.n >= s.d.Size}
	if s.err == nil {
		s.err = se
	}
	return n, se
}

func (s *sourceReader) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.ReadCloser.Close()
}

// fault is the source's first fault, if any.
func (s *sourceReader) fault() *SourceError {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
