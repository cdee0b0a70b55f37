package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestInsecureSpeaksPlainHTTPToAnyHost: --insecure makes a registry whose
// host is a name (not loopback, not a private address) speak plain HTTP,
// as documented. The name exists only for a forward proxy (HTTP_PROXY)
// that passes plain requests on to the environment's registry and refuses
// the CONNECT that TLS would need.
func TestInsecureSpeaksPlainHTTPToAnyHost(t *testing.T) {
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	ref, want := pushSample(t, env, "provider-nop", "v0.4.0")
	const host = "registry.example.test:5000"
	var mu sync.Mutex
	var seen []string
	plain := &http.Transport{} // no proxy of its own
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Scheme+"://"+r.URL.Host+r.URL.Path)
		mu.Unlock()
		if r.Method == http.MethodConnect || r.URL.Host != host {
			http.Error(w, "this proxy only passes plain HTTP to "+host, http.StatusForbidden)
			return
		}
		out := r.Clone(r.Context())
		out.RequestURI, out.URL.Host, out.Host = "", reg.Host, reg.Host
		resp, err := plain.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(proxy.Close)
	x := clitest.New(t).WithEnv(env).WithLogin(host, reg.Username, reg.Password).
		Setenv("HTTP_PROXY", proxy.URL).Setenv("HTTPS_PROXY", proxy.URL).Setenv("NO_PROXY", "")
	named := strings.Replace(ref, reg.Host, host, 1)

	// Without --insecure, TLS is asked for, and the proxy refuses it.
	x.Run("extract", named).Fails(t, 1)
	r := x.Run("extract", named, "--insecure").Succeeds(t)
	if r.Stdout != string(want) {
		t.Errorf("extract --insecure through %s wrote other content", host)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(seen, "\n"), "GET http://"+host+"/v2/") {
		t.Errorf("no plain HTTP request to %s: %v", host, seen)
	}
}
