package faultproxy

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestUntilGoneLandsAfterTheClientGaveUp: a request held UntilGone gets no
// answer however long its client waits, and reaches the server once the
// client has given up.
func TestUntilGoneLandsAfterTheClientGaveUp(t *testing.T) {
	var landed atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch {
			landed.Add(1)
		}
	}))
	defer backend.Close()
	p, err := Start(strings.TrimPrefix(backend.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Add(Fault{Match: "PATCH /x", UntilGone: true})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPatch, "http://"+p.Host+"/x", strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	within(t, "the proxy sees the PATCH", func() bool { return p.Count("PATCH /x") == 1 })
	if n := landed.Load(); n != 0 {
		t.Fatalf("the held PATCH reached the server while its client waited (%d)", n)
	}
	select {
	case err := <-done:
		t.Fatalf("the held PATCH was answered while its client waited: %v", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v, want it cancelled", err)
	}
	within(t, "the PATCH lands after its client gave up", func() bool { return landed.Load() == 1 })

	// Other requests pass untouched.
	resp, err := http.Get("http://" + p.Host + "/y")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// within polls cond for up to a minute: generous, it only runs out when
// something is broken.
func within(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within a minute", what)
		}
	}
}
