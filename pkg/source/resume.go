package source

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// resumingBody reads a blob and, when the connection breaks or stalls in
// the middle, asks for the rest (Range: bytes=N-) within the request's
// retry budget. A registry that ignores the range sends the whole blob
// again, and the part already read is skipped. The digest check above
// sees one unbroken stream either way.
type resumingBody struct {
	t    *retryTransport
	req  *http.Request
	b    *budget
	body *attemptBody
	read int64
	// cause is the fault that broke the current body; first the first
	// fault; err ends reading.
	cause error
	first error
	err   error
}

func (r *resumingBody) Read(p []byte) (int, error) {
	for {
		if r.err != nil {
			return 0, r.err
		}
		if r.cause != nil {
			if r.err = r.resume(); r.err != nil {
				return 0, r.err
			}
		}
		n, err := r.body.Read(p)
		r.read += int64(n)
		switch {
		case err == nil || errors.Is(err, io.EOF):
			return n, err
		case !transient(err):
			r.err = err
			return n, err
		}
		r.cause = err
		if r.first == nil {
			r.first = err
		}
		if n > 0 {
			return n, nil
		}
	}
}

func (r *resumingBody) Close() error { return r.body.Close() }

// resume replaces the broken body with the rest of the blob. A blob read
// again whole that breaks off while the part already read is skipped is
// one more try that failed, and is retried like any other.
func (r *resumingBody) resume() error {
	r.body.Close()
	wait, retry := r.t.judge(nil, r.cause, r.b)
	if !retry {
		return r.giveUp(r.cause)
	}
	if err := r.t.sleep(r.req.Context(), wait); err != nil {
		return err
	}
	r.b.retried()
	req := r.req.Clone(r.req.Context())
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-", r.read))
	resp, err := r.t.try(req, r.b)
	if err == nil && resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		// A registry that serves no ranges: read the blob again, whole.
		resp.Body.Close()
		resp, err = r.t.try(r.req, r.b)
	}
	if err != nil {
		return r.giveUp(err)
	}
	body := resp.Body.(*attemptBody)
	switch {
	case resp.StatusCode == http.StatusPartialContent && strings.HasPrefix(resp.Header.Get("Content-Range"), "bytes "+strconv.FormatInt(r.read, 10)+"-"):
	case resp.StatusCode == http.StatusOK:
		if _, err := io.CopyN(io.Discard, body, r.read); err != nil {
			if !transient(err) {
				body.Close()
				return r.giveUp(err)
			}
			r.body, r.cause = body, err
			return r.resume()
		}
	default:
		body.Close()
		return fmt.Errorf("resume after %d bytes: the registry answered %s", r.read, resp.Status)
	}
	r.body, r.cause = body, nil
	return nil
}

// giveUp is the error that ends the body: the fault and the tries it
// took, and the first fault when the time ran out on a later try.
func (r *resumingBody) giveUp(err error) error {
	var over *overTimeError
	if errors.As(err, &over) && r.first != nil && !errors.As(r.first, &over) {
		return fmt.Errorf("%w; then the retry time-out of %s ran out (after %d tries, %d bytes)", r.first, over.max, r.b.tries(), r.read)
	}
	return fmt.Errorf("%w after %d bytes", spent(err, r.b), r.read)
}
