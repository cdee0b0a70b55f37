package ocicopy_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/ocicopy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
)

// copyWithin copies src to a fresh registry, failing the test if that
// takes longer than a bound far beyond the budgets the tests set.
func copyWithin(t *testing.T, src ocicopy.Source) (*server, error) {
	t.Helper()
	dst := newServer(t)
	done := make(chan error, 1)
	go func() {
		_, err := (&ocicopy.Copier{}).ToRegistry(background(), src, dst.ref(t, "mirror/provider:v1"), opts())
		done <- err
	}()
	select {
	case err := <-done:
		return dst, err
	case <-time.After(time.Minute):
		t.Fatalf("still copying %s after a minute", src)
		return nil, nil
	}
}

// TestRedirectLoopingSource: a source that redirects a blob to itself is
// refused as a loop after a request or two, naming the source, without a
// retry. (It stops after 200 redirects, so that a client that follows
// them for ever ends too.)
func TestRedirectLoopingSource(t *testing.T) {
	src := newServer(t)
	idx := multiPlatform(t)
	from := src.push(t, "src/provider:v1", idx)
	d := baseLayer(t, idx)
	var loops atomic.Int32
	src.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+d.String()) || loops.Add(1) > 200 {
			return false
		}
		http.Redirect(w, r, r.URL.RequestURI(), http.StatusTemporaryRedirect)
		return true
	})
	dst, err := copyWithin(t, regSource(from))
	msg := exit.Message(err)
	t.Logf("%d requests to the looping blob: %s", loops.Load(), msg)
	if err == nil || !strings.Contains(msg, "redirects in a loop") || !strings.Contains(msg, src.host) || strings.Contains(msg, "cannot reach") {
		t.Errorf("err = %q, want a redirect loop at %s", msg, src.host)
	}
	if n := loops.Load(); n > 3 {
		t.Errorf("%d requests to the looping blob, want at most 3", n)
	}
	if committed(dst)[d.String()] {
		t.Error("the looping blob was committed")
	}
}

// TestDrippingSource: a source that sends a blob one byte every tenth of
// a second (a correct Content-Length) is cut for its rate, retried within
// the budget (so generous here, 10s, that the tries end the copy, each
// cut for its rate, however loaded the machine), and refused naming the
// source, not the destination.
func TestDrippingSource(t *testing.T) {
	src := newServer(t)
	idx := multiPlatform(t)
	from := src.push(t, "src/provider:v1", idx)
	d := baseLayer(t, idx)
	body := blobBytes(t, idx, d)
	src.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+d.String()) {
			return false
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		for _, b := range body {
			if _, err := w.Write([]byte{b}); err != nil {
				return true
			}
			w.(http.Flusher).Flush()
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return true
			}
		}
		return true
	})
	s := regSource(from)
	s.Options.Retry = source.Retry{Attempts: 3, MaxTime: 10 * time.Second, Stall: time.Second}
	dst, err := copyWithin(t, s)
	msg := exit.Message(err)
	t.Logf("%d requests to the dripping blob: %s", src.count("GET /v2/src/provider/blobs/"+d.String()), msg)
	if err == nil || !strings.Contains(msg, "slower than") || !strings.Contains(msg, "the source "+from.Name()) || strings.Contains(msg, "cannot reach") {
		t.Errorf("err = %q, want the dripping source %s refused for its rate", msg, from.Name())
	}
	if committed(dst)[d.String()] {
		t.Error("the dripping blob was committed")
	}
}

// TestCorruptSourceIsBlamedOnIt: a source that serves other bytes for a
// blob is named, with both digests; the destination, which is fine, is
// not said to be unreachable, and a run again is not offered as the way
// on.
func TestCorruptSourceIsBlamedOnIt(t *testing.T) {
	src := newServer(t)
	idx := multiPlatform(t)
	from := src.push(t, "src/provider:v1", idx)
	d := baseLayer(t, idx)
	body := blobBytes(t, idx, d)
	body[len(body)/2] ^= 0xff
	src.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+d.String()) {
			return false
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		_, _ = w.Write(body)
		return true
	})
	_, err := copyWithin(t, regSource(from))
	msg := exit.Message(err)
	t.Log(msg)
	for _, want := range []string{"the source " + from.Name(), d.String(), sha(body).String()} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "cannot reach") {
		t.Errorf("the destination is blamed: %s", msg)
	}
	if !ocicopy.CorruptSource(err) {
		t.Errorf("not told a corrupt source: %v", err)
	}
}

// TestUnreachableDestinationIsNamed: a destination where nothing listens
// is the one named, not the source, which is fine.
func TestUnreachableDestinationIsNamed(t *testing.T) {
	src := newServer(t)
	from := src.push(t, "src/provider:v1", multiPlatform(t))
	to, err := name.ParseReference("127.0.0.1:1/mirror/provider:v1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&ocicopy.Copier{}).ToRegistry(background(), regSource(from), to, opts())
	msg := exit.Message(err)
	t.Log(msg)
	if !strings.Contains(msg, "cannot reach ") || !strings.Contains(msg, "127.0.0.1:1: connection refused") || strings.Contains(msg, "the source") {
		t.Errorf("err = %q, want the destination named", msg)
	}
}
