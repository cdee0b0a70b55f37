package main

import (
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/faultproxy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// hostileSource is a package in go-containerregistry's in-process registry
// behind a fault proxy, and an empty registry to mirror it to. Its meta
// object is 64 KiB (random letters, which gzip cannot shrink much), so
// that a source dripping all but the first KiB of its layer lets it open
// and then holds the read of its meta object.
type hostileSource struct {
	proxy *faultproxy.Proxy
	ref   string // the package, through the proxy
	layer string // "GET /v2/…/blobs/<its layer>"
	dst   string // a mirror prefix
	x     *clitest.Test
}

func newHostileSource(t *testing.T) *hostileSource {
	t.Helper()
	src, dst := fixture.NewRegistry(t), fixture.NewRegistry(t)
	r := rand.New(rand.NewPCG(40, 4))
	noise := make([]byte, 64<<10)
	for i := range noise {
		noise[i] = byte('a' + r.IntN(26))
	}
	img, err := fixture.Image([]byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-hostile\n  annotations:\n    meta.crossplane.io/description: " + string(noise) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.Push(src.Host+"/hostile/provider:v1", img); err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.Start(src.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &hostileSource{proxy: p, ref: p.Host + "/hostile/provider:v1",
		layer: "GET /v2/hostile/provider/blobs/" + m.Layers[0].Digest.String(), dst: dst.Host + "/m", x: clitest.New(t)}
}

// run runs the plugin, killing it (and failing the test) if it has not
// ended in a minute: far beyond the budgets these tests set.
func (h *hostileSource) run(t *testing.T, args ...string) *clitest.Result {
	t.Helper()
	run := h.x.Start(args...)
	done := make(chan *clitest.Result, 1)
	go func() { done <- run.Wait() }()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		_ = run.Signal(os.Kill)
		<-done
		t.Fatalf("%s: still running after a minute", strings.Join(args, " "))
		return nil
	}
}

// oneError checks that a command failed with exit code code and stderr
// ending in one error line holding each of want and none of wrong.
func oneError(t *testing.T, what string, r *clitest.Result, code int, want []string, wrong ...string) {
	t.Helper()
	last := strings.TrimSpace(r.Stderr)
	last = last[strings.LastIndex(last, "\n")+1:]
	if r.ExitCode != code || !strings.HasPrefix(last, "error: ") || strings.Count(r.Stderr, "error: ") != 1 {
		t.Errorf("%s: exit %d, want %d, and one error line:\n%s", what, r.ExitCode, code, r.Stderr)
	}
	for _, w := range want {
		if !strings.Contains(last, w) {
			t.Errorf("%s: the error does not say %q:\n%s", what, w, last)
		}
	}
	for _, w := range wrong {
		if strings.Contains(last, w) {
			t.Errorf("%s: the error says %q:\n%s", what, w, last)
		}
	}
}

// TestRedirectLoopingRegistry: a registry that redirects a blob to itself
// is refused by inspect and mirror after a request or two, as a loop. (It
// stops after 200 redirects, so that a client that follows them for ever
// ends too.)
func TestRedirectLoopingRegistry(t *testing.T) {
	h := newHostileSource(t)
	for _, args := range [][]string{{"inspect", h.ref}, {"mirror", h.ref, "--to", h.dst}} {
		h.proxy.Clear()
		h.proxy.Add(faultproxy.Fault{Match: "GET /v2/hostile/provider/blobs/", RedirectSelf: true, Times: 200})
		r := h.run(t, args...)
		n := h.proxy.Count("/blobs/")
		t.Logf("%s: %d blob requests: %s", args[0], n, strings.TrimSpace(r.Stderr))
		oneError(t, args[0], r, 1, []string{"redirects in a loop", h.proxy.Host}, "cannot reach")
		if n > 3 {
			t.Errorf("%s: %d requests to the looping blob, want at most 3", args[0], n)
		}
	}
}

// TestDrippingRegistry: a registry that drips a layer (one byte every
// tenth of a second, with a correct length) is refused within the budget
// (--retry-timeout=10s --stall-timeout=1s: the tries, each cut for its
// rate, end the read, however loaded the machine), naming the source and
// its rate, by inspect, and by mirror when it resolves the package and
// when it copies it.
func TestDrippingRegistry(t *testing.T) {
	h := newHostileSource(t)
	budget := []string{"--retry-timeout=10s", "--stall-timeout=1s"}
	for _, c := range []struct {
		what string
		args []string
		skip int
	}{
		{"inspect", []string{"inspect", h.ref}, 0},
		{"mirror, resolving", []string{"mirror", h.ref, "--to", h.dst}, 0},
		{"mirror, copying", []string{"mirror", h.ref, "--to", h.dst}, 1},
	} {
		h.proxy.Clear()
		h.proxy.Add(faultproxy.Fault{Match: h.layer, Skip: c.skip, Drip: 100 * time.Millisecond, StallAfter: 1 << 10})
		r := h.run(t, append(c.args, budget...)...)
		t.Logf("%s: %d layer requests: %s", c.what, h.proxy.Count(h.layer), strings.TrimSpace(r.Stderr))
		oneError(t, c.what, r, 1, []string{"slower than", "hostile/provider"}, "is not a package Crossplane can install", "cannot reach")
	}
}

// TestInterruptedDrip: Ctrl-C while mirror reads a package from a source
// that drips it says the mirror was interrupted, not that the package
// cannot be installed.
func TestInterruptedDrip(t *testing.T) {
	h := newHostileSource(t)
	h.proxy.Add(faultproxy.Fault{Match: h.layer, Drip: 500 * time.Millisecond, StallAfter: 1 << 10})
	run := h.x.Start("mirror", h.ref, "--to", h.dst)
	eventually(t, "the layer's read", func() bool { return h.proxy.Count(h.layer) > 0 })
	time.Sleep(time.Second) // into the drip
	if err := run.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := run.Wait()
	t.Logf("Ctrl-C: %s", strings.TrimSpace(r.Stderr))
	oneError(t, "Ctrl-C", r, 130, []string{"interrupted"}, "is not a package Crossplane can install")
}

// TestCorruptSourceIsNamed: a source that serves a layer unlike its
// digest when mirror copies it is named, with both digests; the
// destination, which is fine, is not said to be unreachable, and a run
// again is not offered as the way on.
func TestCorruptSourceIsNamed(t *testing.T) {
	h := newHostileSource(t)
	digest := h.layer[strings.LastIndex(h.layer, "/")+1:]
	h.proxy.Add(faultproxy.Fault{Match: h.layer, Skip: 1, Corrupt: true})
	r := h.run(t, "mirror", h.ref, "--to", h.dst)
	t.Log(strings.TrimSpace(r.Stderr))
	oneError(t, "mirror", r, 1, []string{"the source " + strings.TrimSuffix(h.ref, ":v1") + "@", digest, "got \"sha256:"},
		"cannot reach", "run the command again")
}
