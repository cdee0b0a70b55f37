package source

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

type recordingTransport struct{ hosts []string }

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.hosts = append(r.hosts, req.URL.Host)
	return nil, errors.New("recorded, not sent")
}

// TestHTTPGuard checks the guard on requests it is handed; nothing leaves
// the process.
func TestHTTPGuard(t *testing.T) {
	next := &recordingTransport{}
	g := &httpGuard{next: next}
	for _, u := range []string{"http://10.1.2.3:5000/v2/", "http://registry.internal/v2/", "http://192.168.0.7/v2/"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if _, err := g.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "refusing plain HTTP to") {
			t.Errorf("%s: err = %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:5000/v2/", "http://localhost:5000/v2/", "http://[::1]:5000/v2/", "https://10.1.2.3/v2/"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		g.RoundTrip(req)
	}
	if len(next.hosts) != 4 {
		t.Errorf("passed on: %v", next.hosts)
	}
	insecure := &httpGuard{next: next, insecure: true}
	req, _ := http.NewRequest(http.MethodGet, "http://10.1.2.3:5000/v2/", nil)
	insecure.RoundTrip(req)
	if len(next.hosts) != 5 {
		t.Errorf("--insecure did not allow plain HTTP: %v", next.hosts)
	}
}
