package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// MaxRedirects is how many redirects one registry request may follow, as
// net/http's own client allows. go-containerregistry replaces the client's
// check with one of its own that counts nothing, so the transport counts.
const MaxRedirects = 10

// budget is one registry request's allowance, shared by the redirects it
// follows, its retries and its answer's body: Attempts tries, and
// Retry.MaxTime of time, which a body extends by what it brings at the
// floor rate (a blob of a gigabyte is not cut for taking longer than two
// minutes; a body slower than the floor rate is). The time a reader spends
// with a body between reads (a mirror waiting on its destination) is the
// reader's, not the registry's, and is not counted.
type budget struct {
	retry Retry
	start time.Time

	mu      sync.Mutex
	attempt int
	idle    time.Duration
	got     int64
}

func newBudget(r Retry) *budget { return &budget{retry: r, start: time.Now()} }

// left is the time the request has left.
func (b *budget) left() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	rate := max(b.retry.MinRate, 1)
	earned := time.Duration(b.got/rate)*time.Second + time.Duration(b.got%rate)*time.Second/time.Duration(rate)
	return b.retry.MaxTime + earned - (time.Since(b.start) - b.idle)
}

// body counts a read: the reader's time before it, and the bytes it got.
func (b *budget) body(idle time.Duration, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.idle += idle
	b.got += int64(n)
}

func (b *budget) tries() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.attempt + 1
}

func (b *budget) retried() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attempt++
}

// budgetKey holds a try's budget in the context of the request sent, which
// a redirect's request finds through the response that caused it.
type budgetKey struct{}

// budgetFor is the budget of the request req belongs to: a redirect
// shares its first request's, and is refused when it leads back to a URL
// of its chain or past MaxRedirects.
func (t *retryTransport) budgetFor(req *http.Request) (*budget, error) {
	first, hops := req, 0
	for r := req; r.Response != nil && r.Response.Request != nil; r = r.Response.Request {
		first = r.Response.Request
		hops++
		if first.URL.String() == req.URL.String() {
			return nil, &RedirectError{Hops: hops, Back: true}
		}
	}
	if hops > MaxRedirects {
		return nil, &RedirectError{Hops: hops}
	}
	if b, ok := first.Context().Value(budgetKey{}).(*budget); ok && hops > 0 {
		return b, nil
	}
	return newBudget(t.retry), nil
}

// RedirectError is a registry whose redirects go round in a loop: one that
// leads back to a URL already visited, or more than MaxRedirects of them.
// It is final: asking again goes round the same loop.
type RedirectError struct {
	Hops int
	Back bool
}

func (e *RedirectError) Error() string {
	if e.Back {
		return fmt.Sprintf("the registry redirects in a loop (back to this URL after %d redirect(s))", e.Hops)
	}
	return fmt.Sprintf("the registry redirects in a loop (more than %d redirects)", MaxRedirects)
}

// Worded: the message names the registry's fault, not an unreachable host.
func (e *RedirectError) Worded() {}

var errStalled = errors.New("the registry stalled")

// errOverTime ends a request whose budget is spent.
func errOverTime(b *budget) error { return &overTimeError{max: b.retry.MaxTime} }

type overTimeError struct{ max time.Duration }

func (e *overTimeError) Error() string {
	return fmt.Sprintf("%v: its answer took longer than the retry time-out of %s allows", errStalled, e.max)
}

// Unwrap: a spent budget is a stall, which the budget then refuses to retry.
func (e *overTimeError) Unwrap() error { return errStalled }

// attemptBody is the body of one try: closing it releases the try's
// context, which a stall, a rate below the floor or the spent budget
// cancels.
type attemptBody struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	b      *budget
	// err ended the body, and every later read returns it: a try cut for
	// its rate ends with a read that brings bytes too, whose error a reader
	// that got what it asked for (io.CopyN) drops; the next read then says
	// why the try ended, not that its cancelled connection brought nothing.
	err error
	// last is when the reader last got something (the headers, at first).
	last time.Time
	// waited and bytes are the current rate window: the time spent waiting
	// in reads, and what they brought.
	waited time.Duration
	bytes  int64
}

func (a *attemptBody) Close() error {
	err := a.ReadCloser.Close()
	a.cancel(nil)
	return err
}

// Read is a read that a stall (no byte for the stall time-out), a rate
// below the floor over a window of the stall time-out, or the budget's
// end ends with errStalled.
func (a *attemptBody) Read(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.read(p)
	a.err = err
	return n, err
}

func (a *attemptBody) read(p []byte) (int, error) {
	start := time.Now()
	a.b.body(start.Sub(a.last), 0)
	stall := a.b.retry.Stall
	limit := min(stall, a.b.left())
	if limit <= 0 {
		a.cancel(errStalled)
		return 0, errOverTime(a.b)
	}
	timer := time.AfterFunc(limit, func() { a.cancel(errStalled) })
	n, err := a.ReadCloser.Read(p)
	timer.Stop()
	a.last = time.Now()
	a.b.body(0, n)
	switch {
	case err != nil && errors.Is(context.Cause(a.ctx), errStalled) && limit < stall:
		return n, errOverTime(a.b)
	case err != nil && errors.Is(context.Cause(a.ctx), errStalled):
		return n, fmt.Errorf("%w: no data for %s", errStalled, stall)
	case err != nil:
		return n, err
	}
	return n, a.floor(a.last.Sub(start), n)
}

// floor checks the rate of the current window, once it spans the stall
// time-out of waiting: a registry that drips its body is never quite
// stalled.
func (a *attemptBody) floor(waited time.Duration, n int) error {
	a.waited += waited
	a.bytes += int64(n)
	stall := a.b.retry.Stall
	if a.waited < stall {
		return nil
	}
	rate := a.b.retry.MinRate
	if want := int64(float64(rate) * a.waited.Seconds()); a.bytes < want {
		a.cancel(errStalled)
		return fmt.Errorf("%w: it sent %d bytes in %s, slower than %d bytes/s", errStalled, a.bytes, a.waited.Round(time.Millisecond), rate)
	}
	a.waited, a.bytes = 0, 0
	return nil
}
