package source_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/faultproxy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// within reads src, failing the test if that takes longer than a bound
// far beyond the budgets these tests set (a read that never ends).
func within(t *testing.T, src string, o source.Options) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, _, err := readAll(t, src, o)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("still reading %s after a minute", src)
		return nil
	}
}

// TestRedirectLoopIsRefused: a registry that redirects a blob or a
// manifest to itself is refused at once, as a loop, without a retry. (It
// stops after 200 redirects, so that a client that follows them for ever
// ends too.)
func TestRedirectLoopIsRefused(t *testing.T) {
	for _, what := range []string{"/blobs/", "/manifests/"} {
		t.Run(strings.Trim(what, "/"), func(t *testing.T) {
			p, ref, _ := faultyRegistry(t)
			p.Add(faultproxy.Fault{Match: "GET /v2/faulty/provider" + what, RedirectSelf: true, Times: 200})
			err := within(t, ref, fastRetry())
			n := p.Count(what)
			t.Logf("%d requests to the looping %s: %v", n, what, err)
			if err == nil || !strings.Contains(err.Error(), "redirects in a loop") || !strings.Contains(err.Error(), p.Host) {
				t.Errorf("err = %v, want a redirect loop at %s", err, p.Host)
			}
			if n > 3 {
				t.Errorf("%d requests to the looping source, want at most 3", n)
			}
		})
	}
}

// redirecting is go-containerregistry's registry behind a wrapper that
// redirects each blob GET to the same path with ?hop=N+1, up to 100 hops,
// each after delay; it returns a package's reference there and the count
// of redirects it makes.
func redirecting(t *testing.T, delay time.Duration) (string, *atomic.Int32) {
	t.Helper()
	hops := &atomic.Int32{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			n, _ := strconv.Atoi(r.URL.Query().Get("hop"))
			if n < 100 {
				hops.Add(1)
				time.Sleep(delay)
				http.Redirect(w, r, fmt.Sprintf("%s?hop=%d", r.URL.Path, n+1), http.StatusFound)
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	img, err := fixture.Image(stream(t, "Provider"))
	if err != nil {
		t.Fatal(err)
	}
	ref := strings.TrimPrefix(srv.URL, "http://") + "/chain/provider:v1"
	if err := fixture.Push(ref, img); err != nil {
		t.Fatal(err)
	}
	hops.Store(0)
	return ref, hops
}

// TestTooManyRedirectsAreRefused: a chain of redirects that never repeats
// a URL is refused after 10, as net/http's own client would.
func TestTooManyRedirectsAreRefused(t *testing.T) {
	ref, hops := redirecting(t, 0)
	err := within(t, ref, fastRetry())
	t.Logf("%d redirects: %v", hops.Load(), err)
	if err == nil || !strings.Contains(err.Error(), "redirects in a loop") || !strings.Contains(err.Error(), "more than 10 redirects") {
		t.Errorf("err = %v, want more than 10 redirects refused", err)
	}
	if n := hops.Load(); n > 11 {
		t.Errorf("%d redirects followed, want at most 11", n)
	}
}

// TestRedirectsShareTheBudget: the redirects of a request count against
// its --retry-timeout together: slow ones (each within the stall
// time-out) that add up past it end the request before the redirect
// limit does.
func TestRedirectsShareTheBudget(t *testing.T) {
	ref, hops := redirecting(t, 600*time.Millisecond)
	o := testOptions()
	o.Retry = source.Retry{Attempts: 3, MaxTime: 2 * time.Second, Stall: time.Second}
	err := within(t, ref, o)
	t.Logf("%d redirects: %v", hops.Load(), err)
	if err == nil || !strings.Contains(err.Error(), "retry time-out of 2s") {
		t.Errorf("err = %v, want the retry time-out spent", err)
	}
	if n := hops.Load(); n > 5 {
		t.Errorf("%d redirects followed in a budget of 2s, each taking 0.6s", n)
	}
}

// dripRetry is the budget of the dripping tests: --stall-timeout=1s, and
// a --retry-timeout so generous that the tries end the read, each cut for
// its rate, however loaded the machine.
var dripRetry = source.Retry{Attempts: 3, MaxTime: 10 * time.Second, Stall: time.Second}

// TestDrippingBodyIsCut: a registry that sends a blob one byte every
// tenth of a second, with a correct Content-Length, is never quite
// stalled: it is cut for its rate, retried within the budget, and then
// refused naming the source.
func TestDrippingBodyIsCut(t *testing.T) {
	p, ref, _ := faultyRegistry(t)
	p.Add(faultproxy.Fault{Match: "GET /v2/faulty/provider/blobs/", Drip: 100 * time.Millisecond})
	o := testOptions()
	o.Retry = dripRetry
	err := within(t, ref, o)
	t.Logf("%d blob requests: %v", p.Count("/blobs/"), err)
	if err == nil || !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "slower than") {
		t.Errorf("err = %v, want the dripping source %s refused for its rate", err, ref)
	}
}

// TestRateCutWhileSkipping: go-containerregistry's registry serves no
// ranges, so a try after a cut reads the blob again from its start and
// skips what was read. Dripped at the same pace as before, the skip ends
// with the byte on which the try is cut for its rate (the third: 0.6s
// and 1.2s of waiting, against a stall time-out of 1s); that cut, not a
// stall, is what ends the try, and the read.
func TestRateCutWhileSkipping(t *testing.T) {
	p, ref, _ := faultyRegistry(t)
	p.Add(faultproxy.Fault{Match: "GET /v2/faulty/provider/blobs/", Drip: 600 * time.Millisecond})
	o := testOptions()
	o.Retry = dripRetry
	err := within(t, ref, o)
	t.Logf("%d blob requests: %v", p.Count("/blobs/"), err)
	if msg := fmt.Sprint(err); err == nil || !strings.Contains(msg, ref) || !strings.Contains(msg, "slower than") ||
		strings.Contains(msg, "no data for") || strings.Contains(msg, "bad gzip header") {
		t.Errorf("err = %v, want each try of %s cut for its rate", err, ref)
	}
}

// TestSkipThatBreaksIsRetried: a try that breaks off while it skips what
// an earlier try read (here, cut for its rate while the first stalled
// after 64 KiB) is one more failed try, retried within the budget.
func TestSkipThatBreaksIsRetried(t *testing.T) {
	p, ref, _ := faultyRegistry(t)
	p.Add(faultproxy.Fault{Match: "GET /v2/faulty/provider/blobs/", Times: 1, StallAfter: 64 << 10, Stall: time.Minute})
	p.Add(faultproxy.Fault{Match: "GET /v2/faulty/provider/blobs/", Drip: 100 * time.Millisecond})
	o := testOptions()
	o.Retry = dripRetry
	o.Retry.MaxTime = 20 * time.Second
	err := within(t, ref, o)
	t.Logf("%d blob requests: %v", p.Count("/blobs/"), err)
	if err == nil || !strings.Contains(err.Error(), "slower than") || !strings.Contains(err.Error(), "(after 4 tries)") {
		t.Errorf("err = %v, want every try used, the last cut for its rate", err)
	}
}

// TestInterruptedReadSaysSo: a read cancelled while the source drips ends
// with the context's error, not a fault of the package.
func TestInterruptedReadSaysSo(t *testing.T) {
	p, ref, _ := faultyRegistry(t)
	p.Add(faultproxy.Fault{Match: "GET /v2/faulty/provider/blobs/", Drip: 500 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(time.Second, cancel)
	done := make(chan error, 1)
	go func() {
		pkg, err := source.Open(ctx, ref, testOptions())
		if err == nil {
			_, err = io.ReadAll(pkg.Stream())
			pkg.Release()
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("still reading a minute after the cancel")
	}
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("err = %v, want the context's", err)
	}
}
