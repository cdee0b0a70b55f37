package source_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/faultproxy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// faultyRegistry pushes a package with a blob of about 1 MiB (random, so
// gzip cannot shrink it) and puts a fault proxy in front of the registry.
func faultyRegistry(t *testing.T) (*faultproxy.Proxy, string, []byte) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 7))
	noise := make([]byte, 1<<20)
	for i := range noise {
		noise[i] = byte('a' + r.IntN(26))
	}
	s := append(stream(t, "Provider"), []byte("---\n# "+string(noise)+"\n")...)
	img, err := fixture.Image(s)
	if err != nil {
		t.Fatal(err)
	}
	reg := newRegistry(t)
	ref := reg.push(t, "faulty/provider:v1", img)
	p, err := faultproxy.Start(reg.host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, strings.Replace(ref, reg.host, p.Host, 1), s
}

func fastRetry() source.Options {
	o := testOptions()
	o.Retry = source.Retry{Attempts: 3, MaxTime: time.Minute, Stall: 500 * time.Millisecond}
	return o
}

func TestRetriesTransientFaults(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault faultproxy.Fault
		// seen must appear among the proxy's requests.
		seen  string
		tries int
	}{
		{"503 twice", faultproxy.Fault{Match: "/blobs/", Times: 2, Status: 503}, "/blobs/", 3},
		{"429 with Retry-After", faultproxy.Fault{Match: "/manifests/", Times: 1, Status: 429, RetryAfter: "1"}, "/manifests/", 2},
		// go-containerregistry's registry serves no ranges (416): the
		// resumption asks for the rest, then reads the blob again whole.
		{"reset mid-blob", faultproxy.Fault{Match: "/blobs/", Times: 1, ResetAfter: 300 << 10}, "Range=bytes=", 3},
		{"stall mid-blob", faultproxy.Fault{Match: "/blobs/", Times: 1, StallAfter: 200 << 10, Stall: time.Minute}, "Range=bytes=", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ref, want := faultyRegistry(t)
			p.Add(c.fault)
			_, got, err := readAll(t, ref, fastRetry())
			if err != nil {
				t.Fatalf("read through %s: %v\nrequests: %v", c.name, err, p.Requests())
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("content differs after %s", c.name)
			}
			if n := p.Count(c.seen); n < 1 || p.Count(c.fault.Match) != c.tries {
				t.Errorf("requests: %v (want %d to %q)", p.Requests(), c.tries, c.fault.Match)
			}
		})
	}
}

func TestGivesUpWithinBounds(t *testing.T) {
	p, ref, _ := faultyRegistry(t)
	p.Add(faultproxy.Fault{Match: "/blobs/", Status: 500})
	_, _, err := readAll(t, ref, fastRetry())
	if err == nil || !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "500") {
		t.Fatalf("persistent 500: %v", err)
	}
	if n := p.Count("/blobs/"); n != 4 {
		t.Errorf("%d blob requests, want 1 + 3 retries", n)
	}

	// A Retry-After beyond the time budget is not waited for.
	p.Clear()
	p.Add(faultproxy.Fault{Match: "/manifests/", Status: 429, RetryAfter: "3600"})
	if _, _, err := readAll(t, ref, fastRetry()); err == nil || p.Count("/manifests/") != 1 {
		t.Errorf("Retry-After 3600 with a minute's budget: %v, requests %v", err, p.Requests())
	}
}

func TestNeverRetriesClientErrors(t *testing.T) {
	p, ref, _ := faultyRegistry(t)
	for _, status := range []int{400, 403, 404} {
		p.Clear()
		p.Add(faultproxy.Fault{Match: "/manifests/", Status: status})
		if _, _, err := readAll(t, ref, fastRetry()); err == nil {
			t.Fatalf("%d: no error", status)
		}
		if n := p.Count("/manifests/"); n != 1 {
			t.Errorf("%d retried: %v", status, p.Requests())
		}
	}
}

func TestCorruptBlobIsRefused(t *testing.T) {
	p, ref, _ := faultyRegistry(t)
	p.Add(faultproxy.Fault{Match: "/blobs/", Corrupt: true})
	_, _, err := readAll(t, ref, fastRetry())
	if err == nil || !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("corrupt blob: %v", err)
	}
}

// TestErrorAnswersThatStallDoNotHang: a registry whose error answer (404,
// 401, 500) comes with headers and then a body that never ends (here: not
// for 90 s) fails the read as stalled, after the stall time-out (each
// try, for 500), rather than waiting for the body for ever.
func TestErrorAnswersThatStallDoNotHang(t *testing.T) {
	for _, status := range []int{404, 401, 500} {
		p, ref, _ := faultyRegistry(t)
		p.Add(faultproxy.Fault{Match: "/manifests/", Status: status, Stall: 90 * time.Second})
		_, _, err := readAll(t, ref, fastRetry())
		if err == nil || !strings.Contains(err.Error(), "the registry stalled") {
			t.Errorf("%d with a stalled body: %v", status, err)
		}
	}
}
