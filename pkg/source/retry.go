package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// Retry bounds how registry reads ride out transient faults: 5xx answers,
// 429 (waiting as long as Retry-After asks, within the budget), connections
// reset or stalled, also in the middle of a blob, which is then resumed
// where it broke off. Other 4xx answers are never retried.
type Retry struct {
	// Attempts is how many times one request is retried after its first try.
	Attempts int
	// MaxTime bounds the time one request may spend, retries and waits
	// included.
	MaxTime time.Duration
	// Stall is how long a request may go without a byte before it counts as
	// a fault.
	Stall time.Duration
}

// DefaultRetry is what the flags default to.
var DefaultRetry = Retry{Attempts: 4, MaxTime: 2 * time.Minute, Stall: 30 * time.Second}

// retryTransport retries GET and HEAD requests, which have no body and so
// can be sent again.
type retryTransport struct {
	next  http.RoundTripper
	retry Retry
	// sleep waits, or returns the context's error; tests shorten it.
	sleep func(context.Context, time.Duration) error
}

func newRetryTransport(next http.RoundTripper, r Retry) *retryTransport {
	return &retryTransport{next: next, retry: r, sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// budget is one request's retry allowance.
type budget struct {
	attempt  int
	deadline time.Time
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead || req.Body != nil && req.Body != http.NoBody {
		return t.next.RoundTrip(req)
	}
	b := &budget{deadline: time.Now().Add(t.retry.MaxTime)}
	resp, err := t.try(req, b)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode != http.StatusOK {
		// An error answer's body is read whole by whoever reports it: a
		// registry that stalls or trickles it must not hang them.
		body := resp.Body.(*attemptBody)
		body.deadline = b.deadline
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(body, 1<<20), body}
		return resp, nil
	}
	if req.Method != http.MethodGet {
		return resp, nil
	}
	resp.Body = &resumingBody{t: t, req: req, b: b, body: resp.Body.(*attemptBody)}
	return resp, nil
}

// try sends the request until it gets an answer worth returning: a success,
// a client error, or the last fault once the budget is spent.
func (t *retryTransport) try(req *http.Request, b *budget) (*http.Response, error) {
	for {
		resp, err := t.send(req)
		wait, retry := t.judge(resp, err, b)
		if !retry {
			return resp, spent(err, b)
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
		}
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		b.attempt++
	}
}

// spent notes how many tries a failure took.
func spent(err error, b *budget) error {
	if err == nil || b.attempt == 0 {
		return err
	}
	return fmt.Errorf("%w (after %d tries)", err, b.attempt+1)
}

// send is one try, which a stall before the answer's headers ends. The
// answer's body is an attemptBody, which a stall can end too.
func (t *retryTransport) send(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(t.retry.Stall, func() { cancel(errStalled) })
	resp, err := t.next.RoundTrip(req.Clone(ctx))
	timer.Stop()
	if err != nil {
		cancel(nil)
		if errors.Is(context.Cause(ctx), errStalled) {
			err = fmt.Errorf("%w: no answer in %s", errStalled, t.retry.Stall)
		}
		return nil, err
	}
	resp.Body = &attemptBody{ReadCloser: resp.Body, ctx: ctx, cancel: cancel, stall: t.retry.Stall}
	return resp, nil
}

var errStalled = errors.New("the registry stalled")

// judge says whether to retry, and after how long.
func (t *retryTransport) judge(resp *http.Response, err error, b *budget) (time.Duration, bool) {
	switch {
	case err != nil && !transient(err):
		return 0, false
	case err == nil && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500:
		return 0, false
	case b.attempt >= t.retry.Attempts:
		return 0, false
	}
	wait := backoff(b.attempt)
	if err == nil {
		if after, ok := retryAfter(resp.Header.Get("Retry-After")); ok {
			wait = after
		}
	}
	return wait, time.Now().Add(wait).Before(b.deadline)
}

// backoff is 250ms doubled at each attempt, with a little jitter, at most
// 10s.
func backoff(attempt int) time.Duration {
	d := min(250*time.Millisecond<<attempt, 10*time.Second)
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// transient tells network faults worth another try from configuration
// problems (no such host, nothing listening), which fail at once.
func transient(err error) bool {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, errStalled), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// attemptBody is the body of one try: closing it releases the try's
// context, and a stall cancels it.
type attemptBody struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	stall  time.Duration
	// deadline, when set, bounds the whole body (an error answer's).
	deadline time.Time
}

// Read is a read that a stall ends, as every read of a body is: an error
// answer's too, which whoever reports it reads whole.
func (a *attemptBody) Read(p []byte) (int, error) { return a.read(p, a.stall) }

func (a *attemptBody) Close() error {
	err := a.ReadCloser.Close()
	a.cancel(nil)
	return err
}

// read is one Read that a stall of the connection ends with errStalled.
func (a *attemptBody) read(p []byte, stall time.Duration) (int, error) {
	limit := stall
	if !a.deadline.IsZero() {
		if limit = min(stall, time.Until(a.deadline)); limit <= 0 {
			a.cancel(errStalled)
			return 0, fmt.Errorf("%w: its answer took longer than the retry time-out", errStalled)
		}
	}
	timer := time.AfterFunc(limit, func() { a.cancel(errStalled) })
	n, err := a.ReadCloser.Read(p)
	timer.Stop()
	if err != nil && errors.Is(context.Cause(a.ctx), errStalled) {
		err = fmt.Errorf("%w: no data for %s", errStalled, limit.Round(time.Millisecond))
	}
	return n, err
}
