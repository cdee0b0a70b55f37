package source

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ManifestLimitError reports a registry's manifest (or index) larger than
// Options.MaxManifestBytes.
type ManifestLimitError struct {
	// Manifest is host/repository and the tag or digest asked for.
	Manifest string
	Limit    int64
}

func (e *ManifestLimitError) Error() string {
	return fmt.Sprintf("the manifest %s is larger than %d bytes: refusing manifests over %d bytes (raise the manifest size limit if it is genuine)",
		e.Manifest, e.Limit, e.Limit)
}

// limitManifests bounds the manifests read through rt; limit 0 leaves it
// as it is. It sits under the retries: its refusal is final.
func limitManifests(rt http.RoundTripper, limit int64) http.RoundTripper {
	if limit <= 0 {
		return rt
	}
	return &manifestLimit{next: rt, limit: limit}
}

// manifestLimit fails a manifest answer past the limit: at once when its
// Content-Length says so, or as its body goes on past the limit, so that a
// hostile registry costs no more than limit bytes of memory.
type manifestLimit struct {
	next  http.RoundTripper
	limit int64
}

func (m *manifestLimit) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := m.next.RoundTrip(r)
	what, isManifest := manifestName(r)
	if err != nil || !isManifest || r.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	lerr := &ManifestLimitError{Manifest: what, Limit: m.limit}
	if resp.ContentLength > m.limit {
		resp.Body.Close()
		return nil, lerr
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: m.limit, err: lerr}
	return resp, nil
}

// manifestName is the manifest a request asks for, as host/repo:tag or
// host/repo@digest, and whether it asks for one.
func manifestName(r *http.Request) (string, bool) {
	p, ok := strings.CutPrefix(r.URL.Path, "/v2/")
	i := strings.LastIndex(p, "/manifests/")
	if !ok || i < 0 {
		return "", false
	}
	repo, id := p[:i], p[i+len("/manifests/"):]
	sep := ":"
	if strings.Contains(id, ":") {
		sep = "@"
	}
	return r.URL.Host + "/" + repo + sep + id, true
}

// limitedBody fails with err, rather than ending, past left bytes.
type limitedBody struct {
	io.ReadCloser
	left int64
	err  error
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more tells a body that ends at the limit from one
		// that goes on.
		var b [1]byte
		if n, err := l.ReadCloser.Read(b[:]); n > 0 {
			return 0, l.err
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.ReadCloser.Read(p)
	l.left -= int64(n)
	return n, err
}
