// Package faultproxy is an HTTP proxy on 127.0.0.1 that stands in front of
// a registry, or (StartTLS) an API server, and misbehaves on demand: it
// answers 5xx or 429 with Retry-After, holds a request back before it
// forwards it, resets the connection in the middle of a blob, stalls,
// drips a body byte by byte, redirects a request to itself, or corrupts a
// blob's bytes, for the requests a fault matches. It records
// every request, so a test can tell what the client did.
//
//	p, _ := faultproxy.Start(registryHost)
//	defer p.Close()
//	p.Add(faultproxy.Fault{Match: "/blobs/", Times: 2, Status: 503})
//	// pull p.Host + "/repo:tag": the first two blob requests fail
package faultproxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Fault is a way to misbehave for the requests it matches.
type Fault struct {
	// Match is a substring of "METHOD /path" ("GET /v2/", "/blobs/").
	Match string
	// Times is how many matching requests get the fault; 0 means all.
	Times int
	// Skip lets the first Skip matching requests through untouched
	// before the fault applies (to the next Times).
	Skip int
	// Status answers with this status code instead of forwarding.
	Status int
	// RetryAfter is the Retry-After header sent with Status.
	RetryAfter string
	// ResetAfter forwards this many bytes of the body, then resets the
	// connection.
	ResetAfter int64
	// StallAfter and Stall forward StallAfter bytes of the body, then send
	// nothing for Stall (or until the client goes away). With Status, the
	// error answer's headers and a few bytes of its body come, then
	// nothing for Stall.
	StallAfter int64
	Stall      time.Duration
	// Corrupt flips one byte of the body, in its middle.
	Corrupt bool
	// Drip forwards the answer's headers (its Content-Length too) and
	// StallAfter bytes of its body, then the rest one byte every Drip,
	// until the client goes away: a source that is never quite stalled.
	Drip time.Duration
	// RedirectSelf answers 307 with the request's own URL as Location,
	// instead of forwarding: a redirect loop.
	RedirectSelf bool
	// Hold keeps the request back this long before forwarding it (a slow
	// network or server); a client that gives up meanwhile sees nothing,
	// and the request is then forwarded only with Land.
	Hold time.Duration
	// IfOK misbehaves (ResetAfter, Stall, Corrupt) only with an answer
	// of 2xx, a change the server made; any other answer (409 Conflict:
	// the change was refused) passes as it came, so that the client can
	// tell what happened.
	IfOK bool
	// Land forwards a request (held or not) to the end even when its
	// client has given up (cancelled, timed out): the change lands,
	// unknown to the client.
	Land bool
	// UntilGone holds the request back until its client gives up (its
	// timeout, whatever it is, or an interrupt), then forwards it to the
	// end: a request slower than any client timeout, which lands after
	// the client stopped waiting. No time is guessed: only the held
	// request times out, however slow the machine makes the others.
	UntilGone bool
}

func (f Fault) forwards() bool { return f.Status == 0 && !f.RedirectSelf }

// Proxy is a running fault proxy.
type Proxy struct {
	// Host is host:port to use in references instead of the registry's.
	Host   string
	target string
	srv    *http.Server
	client *http.Client

	closeTLS func()

	mu       sync.Mutex
	faults   []*armed
	requests []string
}

type armed struct {
	Fault
	skip, left int
}

// Start listens on 127.0.0.1 and forwards to the registry at target
// (host:port, plain HTTP).
func Start(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Host: l.Addr().String(), target: "http://" + target,
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

// StartTLS listens on 127.0.0.1 with TLS (a certificate of its own, which
// clients must skip verifying) and forwards to target (https://host:port)
// through transport: the proxy is who the server sees (an API server's
// admin credentials go in transport), whatever the client presents.
func StartTLS(target string, transport http.RoundTripper) (*Proxy, error) {
	p := &Proxy{target: strings.TrimSuffix(target, "/"),
		client: &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	ts := httptest.NewUnstartedServer(p)
	ts.StartTLS()
	p.Host, p.srv = ts.Listener.Addr().String(), ts.Config
	p.closeTLS = ts.Close
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() error {
	if p.closeTLS != nil {
		p.closeTLS()
		return nil
	}
	return p.srv.Close()
}

// Add arms a fault; faults are tried in the order added.
func (p *Proxy) Add(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, &armed{Fault: f, skip: f.Skip, left: f.Times})
}

// Clear disarms every fault and forgets the requests seen.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults, p.requests = nil, nil
}

// Requests are the requests seen, as "METHOD /path" plus " Range=…" when
// the client asked for part of a body.
func (p *Proxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// Count is how many requests seen contain s.
func (p *Proxy) Count(s string) int {
	n := 0
	for _, r := range p.Requests() {
		if strings.Contains(r, s) {
			n++
		}
	}
	return n
}

// fault records the request and returns the fault it gets, if any.
func (p *Proxy) fault(r *http.Request) (Fault, bool) {
	line := r.Method + " " + r.URL.Path
	if rg := r.Header.Get("Range"); rg != "" {
		line += " Range=" + rg
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, line)
	for _, f := range p.faults {
		if !strings.Contains(line, f.Match) {
			continue
		}
		if f.skip > 0 {
			f.skip--
			return Fault{}, false
		}
		if f.Times == 0 || f.left > 0 {
			f.left--
			return f.Fault, true
		}
	}
	return Fault{}, false
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, faulty := p.fault(r)
	ctx := r.Context()
	if faulty && f.UntilGone {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		<-ctx.Done()
		ctx, f.Land = context.WithoutCancel(ctx), true
	} else if faulty && f.Hold > 0 {
		// Read the body now: the client may be gone when it is forwarded.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		held := time.NewTimer(f.Hold)
		select {
		case <-held.C:
		case <-ctx.Done():
			if !f.Land {
				held.Stop()
				return
			}
			ctx = context.WithoutCancel(ctx)
			<-held.C
		}
	}
	if faulty && f.RedirectSelf {
		scheme := "http://"
		if p.closeTLS != nil {
			scheme = "https://"
		}
		w.Header().Set("Location", scheme+p.Host+r.URL.RequestURI())
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	if faulty && !f.forwards() {
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		if f.Stall > 0 { // an error answer whose body never comes
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(f.Status)
			_, _ = io.WriteString(w, `{"errors": [`)
			w.(http.Flusher).Flush()
			select {
			case <-time.After(f.Stall):
			case <-r.Context().Done():
			}
			return
		}
		http.Error(w, fmt.Sprintf("fault injected: %d", f.Status), f.Status)
		return
	}
	if faulty && f.Land {
		ctx = context.WithoutCancel(ctx)
	}
	resp, err := p.forward(ctx, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	// An upload's next step (Location) stays behind the proxy, as a
	// registry's own host would.
	if loc, ok := strings.CutPrefix(resp.Header.Get("Location"), p.target); ok && p.closeTLS == nil {
		w.Header().Set("Location", "http://"+p.Host+loc)
	}
	w.WriteHeader(resp.StatusCode)
	if !faulty || f.IfOK && resp.StatusCode/100 != 2 {
		copyFlushing(w, resp.Body)
		return
	}
	p.misbehave(w, resp, f, r.Context().Done())
}

func (p *Proxy) forward(ctx context.Context, r *http.Request) (*http.Response, error) {
	var body io.Reader
	if r.ContentLength != 0 {
		body = r.Body
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, p.target+r.URL.RequestURI(), body)
	if err != nil {
		return nil, err
	}
	out.Header = r.Header.Clone()
	if p.closeTLS != nil {
		// The transport authenticates; the client's own credentials stay here.
		out.Header.Del("Authorization")
	}
	return p.client.Do(out)
}

// misbehave sends the body the way the fault says; gone closes when the
// client goes away.
func (p *Proxy) misbehave(w http.ResponseWriter, resp *http.Response, f Fault, gone <-chan struct{}) {
	flusher, _ := w.(http.Flusher)
	switch {
	case f.ResetAfter > 0:
		_, _ = io.CopyN(w, resp.Body, f.ResetAfter)
		flusher.Flush()
		reset(w)
	case f.Stall > 0:
		_, _ = io.CopyN(w, resp.Body, f.StallAfter)
		flusher.Flush()
		select {
		case <-time.After(f.Stall):
		case <-gone:
			return
		}
		_, _ = io.Copy(w, resp.Body)
	case f.Drip > 0:
		_, _ = io.CopyN(w, resp.Body, f.StallAfter)
		b := make([]byte, 1)
		for {
			if _, err := io.ReadFull(resp.Body, b); err != nil {
				return
			}
			if _, err := w.Write(b); err != nil {
				return
			}
			flusher.Flush()
			select {
			case <-time.After(f.Drip):
			case <-gone:
				return
			}
		}
	case f.Corrupt:
		body, err := io.ReadAll(resp.Body)
		if err == nil && len(body) > 0 {
			body[len(body)/2] ^= 0xff
		}
		_, _ = w.Write(body)
	default:
		_, _ = io.Copy(w, resp.Body)
	}
}

// copyFlushing copies a body as it comes: a watch's events reach the
// client one by one.
func copyFlushing(w http.ResponseWriter, body io.Reader) {
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// reset closes the client's connection abruptly, with a TCP RST.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	_ = buf.Flush()
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	conn.Close()
}
