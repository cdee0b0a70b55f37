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
// reset, stalled or too slow, also in the middle of a blob, which is then
// resumed where it broke off. Other 4xx answers are never retried, nor are
// redirect loops.
type Retry struct {
	// Attempts is how many times one request is retried after its first try.
	Attempts int
	// MaxTime bounds the time one request may spend: the redirects it
	// follows, its retries and waits, and its answer's body, which earns a
	// second more for every MinRate bytes it brings.
	MaxTime time.Duration
	// Stall is how long a request may go without a byte before it counts as
	// a fault; over each Stall of waiting, a body must also bring MinRate
	// bytes a second.
	Stall time.Duration
	// MinRate is the floor rate of a body, in bytes a second; 0 means
	// DefaultRetry's.
	MinRate int64
}

// DefaultRetry is what the flags default to.
var DefaultRetry = Retry{Attempts: 4, MaxTime: 2 * time.Minute, Stall: 30 * time.Second, MinRate: 4 << 10}

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

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	b, err := t.budgetFor(req)
	if err != nil {
		return nil, err
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead || req.Body != nil && req.Body != http.NoBody {
		return t.next.RoundTrip(req)
	}
	resp, err := t.try(req, b)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode != http.StatusOK {
		// An error answer's body is read whole by whoever reports it: at
		// most a MiB of it.
		body := resp.Body
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
		resp, err := t.send(req, b)
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
		b.retried()
	}
}

// spent notes how many tries a failure took.
func spent(err error, b *budget) error {
	if err == nil || b.tries() == 1 {
		return err
	}
	return fmt.Errorf("%w (after %d tries)", err, b.tries())
}

// send is one try, which a stall before the answer's headers ends, or
// the budget's end. The answer's body is an attemptBody, which they can
// end too. The budget goes with the request, for the redirects it causes.
func (t *retryTransport) send(req *http.Request, b *budget) (*http.Response, error) {
	limit := min(t.retry.Stall, b.left())
	if limit <= 0 {
		return nil, errOverTime(b)
	}
	ctx, cancel := context.WithCancelCause(context.WithValue(req.Context(), budgetKey{}, b))
	timer := time.AfterFunc(limit, func() { cancel(errStalled) })
	resp, err := t.next.RoundTrip(req.Clone(ctx))
	timer.Stop()
	if err != nil {
		cancel(nil)
		switch {
		case errors.Is(context.Cause(ctx), errStalled) && limit < t.retry.Stall:
			err = errOverTime(b)
		case errors.Is(context.Cause(ctx), errStalled):
			err = fmt.Errorf("%w: no answer in %s", errStalled, t.retry.Stall)
		}
		return nil, err
	}
	resp.Body = &attemptBody{ReadCloser: resp.Body, ctx: ctx, cancel: cancel, b: b, last: time.Now()}
	return resp, nil
}

// judge says whether to retry, and after how long.
func (t *retryTransport) judge(resp *http.Response, err error, b *budget) (time.Duration, bool) {
	switch {
	case err != nil && !transient(err):
		return 0, false
	case err == nil && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500:
		return 0, false
	case b.tries() > t.retry.Attempts:
		return 0, false
	}
	wait := backoff(b.tries() - 1)
	if err == nil {
		if after, ok := retryAfter(resp.Header.Get("Retry-After")); ok {
			wait = after
		}
	}
	return wait, wait < b.left()
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
