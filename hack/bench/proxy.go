package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// request is one API request a -v=6 run logged.
type request struct {
	verb, path string
	discovery  bool
}

// responseLine is client-go's one line per request at -v=6, as
// cmd/kubectl-xpkg/requestlog_test.go reads it.
var responseLine = regexp.MustCompile(`"Response" verb="(\w+)" url="https?://[^/]+(/[^"?]*)`)

// discoveryPath is /api, /apis, /api/V and /apis/GROUP[/V]: discovery, which
// the disk cache answers on later runs.
var discoveryPath = regexp.MustCompile(`^/apis?(/[^/]+(/[^/]+)?)?$`)

func parseRequests(stderr string) []request {
	var out []request
	for _, m := range responseLine.FindAllStringSubmatch(stderr, -1) {
		out = append(out, request{verb: m[1], path: m[2], discovery: discoveryPath.MatchString(m[2])})
	}
	return out
}

func countAPI(reqs []request) (api, discovery int) {
	for _, r := range reqs {
		if r.discovery {
			discovery++
		} else {
			api++
		}
	}
	return api, discovery
}

// recorder is a reverse proxy on 127.0.0.1 in front of the API server that
// records when each request arrived and when its response was ready, so
// that the requests of a run can be told apart into concurrent and
// sequential. Its kubeconfig talks plain HTTP to it, without credentials;
// it forwards with the admin's.
type recorder struct {
	srv        *httptest.Server
	kubeconfig string
	mu         sync.Mutex
	spans      []*timedWriter
}

// span is one request as the proxy saw it: start when it arrived, end
// before the last write of its response, so that a request the client sent
// after reading a response always starts after that response's end.
type span struct {
	start, end time.Time
	// verb is GET, LIST, WATCH, PATCH...; path and query the URL's;
	// bytes the response body's.
	verb, path, query string
	bytes             int64
}

func startRecorder(kubeconfig, path string) (*recorder, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = rt
	rec := &recorder{kubeconfig: path}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Recorded as it arrives: a WATCH may still be open when the
		// plugin's process has ended.
		tw := &timedWriter{ResponseWriter: w, start: time.Now(), verb: apiVerb(req), path: req.URL.Path, query: req.URL.RawQuery}
		rec.mu.Lock()
		rec.spans = append(rec.spans, tw)
		rec.mu.Unlock()
		rp.ServeHTTP(tw, req)
		tw.mu.Lock()
		if tw.last.IsZero() {
			tw.last = time.Now()
		}
		tw.mu.Unlock()
	}))
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench-proxy"] = &clientcmdapi.Cluster{Server: rec.srv.URL}
	kc.AuthInfos["bench-proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["bench-proxy"] = &clientcmdapi.Context{Cluster: "bench-proxy", AuthInfo: "bench-proxy", Namespace: "default"}
	kc.CurrentContext = "bench-proxy"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		rec.srv.Close()
		return nil, err
	}
	return rec, nil
}

func (rec *recorder) Close() { rec.srv.Close() }

// take returns the spans of the requests that arrived since the last take;
// one still open ends now, with the bytes it has sent so far.
func (rec *recorder) take() []span {
	rec.mu.Lock()
	tws := rec.spans
	rec.spans = nil
	rec.mu.Unlock()
	out := make([]span, 0, len(tws))
	for _, tw := range tws {
		tw.mu.Lock()
		s := span{start: tw.start, end: tw.last, verb: tw.verb, path: tw.path, query: tw.query, bytes: tw.bytes}
		tw.mu.Unlock()
		if s.end.IsZero() {
			s.end = time.Now()
		}
		out = append(out, s)
	}
	return out
}

// timedWriter notes the time before each write of the response.
type timedWriter struct {
	http.ResponseWriter
	start             time.Time
	verb, path, query string
	mu                sync.Mutex
	last              time.Time
	bytes             int64
}

func (t *timedWriter) WriteHeader(code int) {
	t.mu.Lock()
	t.last = time.Now()
	t.mu.Unlock()
	t.ResponseWriter.WriteHeader(code)
}

func (t *timedWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	t.last = time.Now()
	t.bytes += int64(len(b))
	t.mu.Unlock()
	return t.ResponseWriter.Write(b)
}

// Flush passes a WATCH's events on as they come.
func (t *timedWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// apiVerb names a request as the API server's audit does: a GET of a
// collection is a LIST, with watch=true a WATCH.
func apiVerb(req *http.Request) string {
	if req.Method != http.MethodGet {
		return req.Method
	}
	if req.URL.Query().Get("watch") == "true" {
		return "WATCH"
	}
	// /api/v1/R, /apis/G/V/R, and under namespaces/NS/: a collection has
	// an odd number of segments after the group version.
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	rest := parts[min(len(parts), 3):]
	if parts[0] == "api" {
		rest = parts[min(len(parts), 2):]
	}
	if len(rest) > 0 && rest[0] == "namespaces" && len(rest) > 2 {
		rest = rest[2:]
	}
	if len(rest) == 1 {
		return "LIST"
	}
	return "GET"
}

func (t *timedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// roundTrips is the length of the longest chain of requests each sent after
// the previous one's response: the number of sequential round trips, however
// many requests each of them carried concurrently.
func roundTrips(spans []span) int {
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	depth := make([]int, len(spans))
	longest := 0
	for i, s := range spans {
		depth[i] = 1
		for j := range i {
			if !spans[j].end.After(s.start) {
				depth[i] = max(depth[i], depth[j]+1)
			}
		}
		longest = max(longest, depth[i])
	}
	return longest
}
