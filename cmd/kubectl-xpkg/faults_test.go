package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/faultproxy"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// behindProxy pushes provider-aws (a 7 MB package, a blob of about 1 MB)
// to the real registry and returns a fault proxy in front of it, the
// reference through the proxy, and a session logged in to the proxy.
func behindProxy(t *testing.T) (*faultproxy.Proxy, string, *clitest.Test) {
	t.Helper()
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	ref, _ := pushSample(t, env, "provider-aws", "v0.58.0")
	p, err := faultproxy.Start(reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	x := clitest.New(t).WithEnv(env).WithLogin(p.Host, reg.Username, reg.Password)
	return p, strings.Replace(ref, reg.Host, p.Host, 1), x
}

func TestExtractRidesOutRegistryFaults(t *testing.T) {
	p, ref, x := behindProxy(t)
	// A stall is cut after 5 s: short enough for the stalled case, long
	// enough that a registry slow to answer on a loaded machine is not
	// one.
	fast := []string{"--retries=3", "--stall-timeout=5s"}
	clean := x.Run(append([]string{"extract", ref}, fast...)...).Succeeds(t).Stdout
	for _, c := range []struct {
		name  string
		fault faultproxy.Fault
		want  string // a request the client must have made
	}{
		{"503 then success", faultproxy.Fault{Match: "/blobs/", Times: 2, Status: 503}, "/blobs/"},
		{"429 with Retry-After", faultproxy.Fault{Match: "/manifests/", Times: 1, Status: 429, RetryAfter: "1"}, "/manifests/"},
		// The registry serves ranges: the rest of the blob is asked for.
		{"reset mid-blob", faultproxy.Fault{Match: "/blobs/", Times: 1, ResetAfter: 256 << 10}, "Range=bytes="},
		{"stall mid-blob", faultproxy.Fault{Match: "/blobs/", Times: 1, StallAfter: 128 << 10, Stall: time.Minute}, "Range=bytes=131072-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.Clear()
			p.Add(c.fault)
			r := x.Run(append([]string{"extract", ref}, fast...)...).Succeeds(t)
			if r.Stdout != clean {
				t.Errorf("extract through %s wrote other content", c.name)
			}
			if p.Count(c.want) == 0 || p.Count(c.fault.Match) < 2 {
				t.Errorf("requests: %v", p.Requests())
			}
		})
	}
}

func TestRegistryFailuresEndInOneLineAndWriteNothing(t *testing.T) {
	p, ref, x := behindProxy(t)
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		name     string
		fault    faultproxy.Fault
		want     []string
		requests int // to the fault's Match
	}{
		{"persistent 500", faultproxy.Fault{Match: "/blobs/", Status: 500}, []string{ref, "500 Internal Server Error"}, 3},
		{"404 is not retried", faultproxy.Fault{Match: "/manifests/", Status: 404}, []string{ref}, 1},
		{"403 is not retried", faultproxy.Fault{Match: "/manifests/", Status: 403}, []string{ref}, 1},
		{"corrupt blob", faultproxy.Fault{Match: "/blobs/", Corrupt: true}, []string{ref, "sha256"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.Clear()
			p.Add(c.fault)
			// The default stall time-out: a slow answer on a loaded
			// machine must not add a request to the ones counted.
			r := x.Run("extract", ref, "-o", out+"/", "--retries=2").Fails(t, 1)
			// At most the "Reading …" line, then the error on one line.
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "error: ") || len(lines) > 2 {
				t.Errorf("stderr is not one error line:\n%s", r.Stderr)
			}
			contains(t, c.name, r.Stderr, c.want...)
			if n := p.Count(c.fault.Match); n != c.requests {
				t.Errorf("%d requests to %s, want %d: %v", n, c.fault.Match, c.requests, p.Requests())
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("extract left %s behind: %v", out, err)
			}
		})
	}
}

// TestExtractToStdoutWritesNothingUnverified: extract REF | kubectl apply
// -f - must not apply tampered content. A layer blob with one byte changed
// in its middle decompresses fine up to that byte; extract to stdout
// verifies the blob before it writes anything, so stdout stays empty.
func TestExtractToStdoutWritesNothingUnverified(t *testing.T) {
	p, ref, x := behindProxy(t)
	for _, args := range [][]string{{}, {"-o", "json"}, {"--gzip"}} {
		p.Clear()
		p.Add(faultproxy.Fault{Match: "/blobs/", Corrupt: true})
		r := x.Run(append([]string{"extract", ref, "--retries=0"}, args...)...).Fails(t, 1)
		if r.Stdout != "" {
			t.Errorf("extract %v wrote %d bytes of unverified content to stdout", args, len(r.Stdout))
		}
		contains(t, "stderr", r.Stderr, "sha256 checksum")
	}
	p.Clear()
	if r := x.Run("extract", ref).Succeeds(t); !strings.Contains(r.Stdout, "kind: Provider") {
		t.Errorf("the untampered package: %q", r.Stdout[:min(len(r.Stdout), 200)])
	}
}

// TestUnreachableTokenServiceIsARegistryError: a registry whose token
// service cannot be reached fails in one line that points at the
// registry, not at the cluster's kubeconfig.
func TestUnreachableTokenServiceIsARegistryError(t *testing.T) {
	const deadURL = "https://token.invalid" // .invalid never resolves
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="registry.test"`, deadURL))
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	r := clitest.New(t).Run("inspect", host+"/org/provider:v1.0.0").Fails(t, 1)
	// The reason is the resolver's: no such host, or a timeout where
	// there is no DNS at all.
	contains(t, "inspect", r.Stderr, "cannot reach "+deadURL+": ", " (is the registry running and the reference right?")
	if strings.Contains(r.Stderr, "kubeconfig") {
		t.Errorf("a registry's failure points at the cluster:\n%s", r.Stderr)
	}
}
