package ocicopy

import (
	"context"
	"fmt"
	"io"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// progress reports one stream's bytes as they pass, and takes them back
// when the stream is given up: a total never counts bytes that must be
// sent again.
type progress struct {
	report  func(int64)
	mu      sync.Mutex
	n       int64
	stopped bool
}

func (p *progress) add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || n == 0 {
		return
	}
	p.n += int64(n)
	p.report(int64(n))
}

// cancel takes back what was reported, and stops reporting: a request
// body can still be read after its request has failed.
func (p *progress) cancel() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.n != 0 {
		p.report(-p.n)
	}
	p.n = 0
}

type progressReader struct {
	io.Reader
	p *progress
}

func (r progressReader) Read(b []byte) (int, error) {
	n, err := r.Reader.Read(b)
	r.p.add(n)
	return n, err
}

type readCloser struct {
	io.Reader
	io.Closer
}

// openVerified opens a blob of r, checked against its descriptor as it is
// read (a stream that ends without error is the blob), and reported to
// report (may be nil). p, when not nil, is what cancels the report. What
// fails in the stream is a *SourceError, and the reader keeps it.
func openVerified(ctx context.Context, r reader, d v1.Descriptor, report func(int64)) (*sourceReader, *progress, error) {
	rc, checked, err := r.blob(ctx, d)
	if err != nil {
		return nil, nil, &SourceError{Source: r.name(), Blob: d.Digest, Err: err}
	}
	var vr io.Reader = &sizedReader{r: rc, left: d.Size, d: d}
	if !checked {
		if vr, err = source.VerifyingReader(rc, d.Digest, d.Size, "the blob "+d.Digest.String()); err != nil {
			rc.Close()
			return nil, nil, err
		}
	}
	var p *progress
	if report != nil {
		p = &progress{report: report}
		vr = progressReader{vr, p}
	}
	return &sourceReader{ReadCloser: readCloser{vr, rc}, src: r.name(), d: d}, p, nil
}

// sizedReader fails a stream, checked against its digest elsewhere, that
// goes on past its descriptor's size or ends short of it.
type sizedReader struct {
	r    io.Reader
	left int64
	d    v1.Descriptor
}

func (s *sizedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > s.left+1 {
		p = p[:s.left+1]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	switch {
	case s.left < 0:
		return n, fmt.Errorf("the blob %s is longer than the %d bytes its descriptor says", s.d.Digest, s.d.Size)
	case err == io.EOF && s.left > 0:
		return n, fmt.Errorf("the blob %s ended %d bytes short of the %d its descriptor says", s.d.Digest, s.left, s.d.Size)
	}
	return n, err
}
