package action

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

func TestSelectContexts(t *testing.T) {
	have := []string{"prod-eu", "dev", "prod-us", "staging"}
	for _, c := range []struct {
		patterns []string
		all      bool
		want     string
		err      string
	}{
		{patterns: []string{"prod-*"}, want: "prod-eu,prod-us"},
		{patterns: []string{"staging", "dev", "prod-us"}, want: "dev,prod-us,staging"},
		{patterns: []string{"prod-*", "prod-eu"}, want: "prod-eu,prod-us"},
		{all: true, want: "dev,prod-eu,prod-us,staging"},
		{patterns: []string{"dev", "qa-*"}, err: `no context "qa-*" in the kubeconfig`},
		{patterns: []string{"prod-[eu"}, err: "is no glob"},
	} {
		got, err := SelectContexts(have, c.patterns, c.all)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: error %v, want %q", c.patterns, err, c.err)
		case c.err == "" && (err != nil || strings.Join(got, ",") != c.want):
			t.Errorf("%v all=%v: %v %v, want %s", c.patterns, c.all, got, err, c.want)
		}
	}
}

// failingGetter is a kubeconfig context whose cluster cannot be reached.
type failingGetter struct {
	genericclioptions.RESTClientGetter
}

func (failingGetter) ToRESTConfig() (*rest.Config, error) {
	return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
}

func (failingGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
}

func authAs(user string) remote.Option {
	return remote.WithAuth(&authn.Basic{Username: user, Password: "secret-of-" + user})
}

// TestRunFleet: every member answers in the members' order, whatever
// order they finish in; a forbidden and an unreachable member are their
// answers' errors, worded for their rows, and the others still answer.
func TestRunFleet(t *testing.T) {
	h := "registry.invalid"
	ok := fakeCluster(t, pkgObj("Provider", "provider-a", h+"/org/provider-a:v1.0.0", "provider-a-1"))
	other := fakeCluster(t, pkgObj("Provider", "provider-b", h+"/org/provider-b:v1.0.0", "provider-b-1"),
		pkgObj("Function", "function-c", h+"/org/function-c:v1.0.0", "function-c-1"))
	denied, dyn := fakeClusterDyn(t, pkgObj("Provider", "provider-a", h+"/org/provider-a:v1.0.0", "provider-a-1"))
	dyn.PrependReactor("list", "providers", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "pkg.crossplane.io", Resource: "providers"}, "", errors.New("RBAC"))
	})
	f := NewFleet([]Member{
		{Context: "zeta", Config: &Config{cluster: other}},
		{Context: "alpha", Config: &Config{cluster: ok}},
		{Context: "denied", Config: &Config{cluster: denied}},
		{Context: "gone", Config: &Config{Getter: failingGetter{}}},
	})
	f.Parallel = 2
	var mu sync.Mutex
	running, most := 0, 0
	answers := RunFleet(context.Background(), f, func(ctx context.Context, cfg *Config) (*Listing, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		return NewGet(cfg).Run(ctx, nil)
	})
	var got []string
	failed := map[string]error{}
	for _, a := range answers {
		switch {
		case a.Err != nil:
			got = append(got, a.Context+"="+Unanswered(a.Err))
			failed[a.Context] = a.Err
		default:
			got = append(got, a.Context+"="+string(rune('0'+len(a.Value.Packages))))
		}
	}
	if want := "alpha=1 denied=<forbidden> gone=<unreachable> zeta=2"; strings.Join(got, " ") != want {
		t.Errorf("answers %q, want %q", strings.Join(got, " "), want)
	}
	if most > 2 {
		t.Errorf("%d members read at once, Parallel is 2", most)
	}
	err := FleetError(failed)
	if exit.Code(err) != exit.Unanswered {
		t.Errorf("exit status %d", exit.Code(err))
	}
	msg := exit.Message(err)
	if !strings.HasPrefix(msg, "context denied: ") || !strings.Contains(msg, "\nerror: context gone: ") {
		t.Errorf("error lines:\n%s", msg)
	}
}

// TestRunFleetLeavesAHungMemberBehind: a member whose read never returns
// and ignores its context (client-go waits for an exec credential plugin
// without one) is given up on at the fleet's bound, its answer saying so
// with its credential plugin, <unreachable> for its row; a member that
// stops at its deadline says the same; the others answer.
func TestRunFleetLeavesAHungMemberBehind(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	h := "registry.invalid"
	ok, hung, cooperative := &Config{cluster: fakeCluster(t, pkgObj("Provider", "provider-a", h+"/org/provider-a:v1.0.0", "provider-a-1"))}, &Config{}, &Config{}
	f := NewFleet([]Member{
		{Context: "ok", Config: ok},
		{Context: "hung", Config: hung, Credential: "/usr/local/bin/login-helper"},
		{Context: "cooperative", Config: cooperative},
	})
	f.Timeout = 100 * time.Millisecond
	answers := runFleetWithin(t, context.Background(), f, func(ctx context.Context, cfg *Config) (*Listing, error) {
		switch cfg {
		case hung:
			<-hang
			return nil, errors.New("the plugin ended at last")
		case cooperative:
			<-ctx.Done()
			return nil, fmt.Errorf("list providers: %w", ctx.Err())
		}
		return NewGet(cfg).Run(ctx, nil)
	})
	got := map[string]string{}
	failed := map[string]error{}
	for _, a := range answers {
		if a.Err != nil {
			got[a.Context] = Unanswered(a.Err) + " " + a.Err.Error()
			failed[a.Context] = a.Err
		} else {
			got[a.Context] = fmt.Sprint(len(a.Value.Packages))
		}
	}
	want := map[string]string{
		"ok":          "1",
		"hung":        "<unreachable> no answer within 100ms (the whole read, its credential plugin /usr/local/bin/login-helper included): left out; --request-timeout sets this bound",
		"cooperative": "<unreachable> no answer within 100ms (the whole read): left out; --request-timeout sets this bound",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers:\n%v\nwant:\n%v", got, want)
	}
	if msg := exit.Message(FleetError(failed)); !strings.Contains(msg, "context hung: no answer within 100ms") {
		t.Errorf("error lines:\n%s", msg)
	}
}

// TestRunFleetInterrupted: when the command is interrupted, RunFleet
// returns at once: the member still reading (no bound set) and the one
// waiting for its turn (one at a time) are <interrupted>, each said so.
func TestRunFleetInterrupted(t *testing.T) {
	hang, started := make(chan struct{}), make(chan *Config, 2)
	defer close(hang)
	a, b := &Config{}, &Config{}
	f := NewFleet([]Member{{Context: "a", Config: a, Credential: "login-helper"}, {Context: "b", Config: b}})
	f.Parallel, f.Timeout = 1, -1
	ctx, cancel := context.WithCancel(context.Background())
	answers := runFleetWithin(t, ctx, f, func(_ context.Context, cfg *Config) (*Listing, error) {
		started <- cfg
		cancel()
		<-hang
		return nil, nil
	})
	var got []string
	for _, a := range answers {
		got = append(got, a.Context+" "+Unanswered(a.Err)+" "+exit.Message(a.Err))
	}
	if len(started) != 1 {
		t.Fatalf("%d members started, one at a time with an interrupt after the first", len(started))
	}
	want := []string{"a <interrupted> still reading it when interrupted (credential plugin login-helper)", "b <interrupted> not read: interrupted before its turn"}
	if <-started == b {
		want = []string{"a <interrupted> not read: interrupted before its turn", "b <interrupted> still reading it when interrupted"}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("answers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// runFleetWithin is RunFleet, failing the test if it is still waiting
// after a generous while (it waits for no member left behind).
func runFleetWithin[T any](t *testing.T, ctx context.Context, f *Fleet, read func(context.Context, *Config) (T, error)) []Answer[T] {
	t.Helper()
	done := make(chan []Answer[T], 1)
	go func() { done <- RunFleet(ctx, f, read) }()
	select {
	case a := <-done:
		return a
	case <-time.After(time.Minute):
		t.Fatal("RunFleet waits for a member that never answers")
		return nil
	}
}

// challengeRegistry is an in-memory registry that asks for Basic
// credentials and records, per request, the user who sent it.
type challengeRegistry struct {
	host string
	mu   sync.Mutex
	seen []string // "user METHOD path"
}

func newChallengeRegistry(t *testing.T) *challengeRegistry {
	r := &challengeRegistry{}
	h := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		user, _, ok := req.BasicAuth()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.mu.Lock()
		r.seen = append(r.seen, user+" "+req.Method+" "+req.URL.Path)
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

func (r *challengeRegistry) count(user, method, suffix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.seen {
		if strings.HasPrefix(s, user+" "+method+" ") && strings.HasSuffix(s, suffix) {
			n++
		}
	}
	return n
}

// TestFleetSharesRegistryReadsByCredentials: outdated on four clusters
// that run one repository reads its tags once per set of credentials:
// two clusters whose pull secrets hold the same credentials share one
// read; a third, with other credentials, reads with its own; a fourth,
// with none, is never read for with another's, and so fails alone; a
// fifth, whose ImageConfig sends it to a mirror, reads the mirror.
func TestFleetSharesRegistryReadsByCredentials(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := newChallengeRegistry(t)
	h := reg.host
	for _, tag := range []string{"v1.0.0", "v1.1.0"} {
		img, err := fixture.Image([]byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-a\n"))
		if err != nil {
			t.Fatal(err)
		}
		for _, repo := range []string{"org", "mirror/org"} {
			if err := fixture.Push(h+"/"+repo+"/provider-a:"+tag, img, authAs("alice")); err != nil {
				t.Fatal(err)
			}
		}
	}
	member := func(name, user string) Member {
		p := pkgObj("Provider", "provider-a", h+"/org/provider-a:v1.0.0", "provider-a-1")
		objs := []*unstructured.Unstructured{p}
		if user != "" {
			withPullSecret(p, "creds")
			objs = append(objs, pullSecret("creds", h, user, "secret-of-"+user))
		}
		return Member{Context: name, Config: &Config{cluster: fakeCluster(t, objs...), XPNamespace: "crossplane-system"}}
	}
	// mirrored reads where its ImageConfig sends it, with alice's
	// credentials too: its read is not the others'.
	mirrored := member("mirrored", "alice")
	mirrored.Config.cluster = fakeCluster(t, withPullSecret(pkgObj("Provider", "provider-a", h+"/org/provider-a:v1.0.0", "provider-a-1"), "creds"),
		pullSecret("creds", h, "alice", "secret-of-alice"), imageConfig("mirror", h+"/org/", h+"/mirror/org/", ""))
	f := NewFleet([]Member{member("eu", "alice"), member("us", "alice"), member("asia", "bob"), member("bare", ""), mirrored})
	answers := RunFleet(context.Background(), f, func(ctx context.Context, cfg *Config) ([]*Item, error) {
		od, err := NewOutdated(ctx, cfg, false)
		if err != nil {
			return nil, err
		}
		od.Shared = f.Reads
		items, _, err := od.Items(ctx, "")
		return items, err
	})
	for _, a := range answers {
		if a.Err != nil || len(a.Value) != 1 {
			t.Fatalf("%s: %v %v", a.Context, a.Value, a.Err)
		}
		it := a.Value[0]
		switch {
		case a.Context == "bare" && !strings.Contains(it.Error, "401"):
			t.Errorf("a cluster without pull secrets read with another's: %+v", it)
		case a.Context != "bare" && (it.Error != "" || it.Latest != "v1.1.0" || it.Wanted != "v1.1.0"):
			t.Errorf("%s: %+v", a.Context, it)
		}
	}
	if n := reg.count("alice", "GET", "/org/provider-a/tags/list") - reg.count("alice", "GET", "/mirror/org/provider-a/tags/list"); n != 1 {
		t.Errorf("alice's clusters listed the tags %d times, want once between them", n)
	}
	if n := reg.count("alice", "GET", "/mirror/org/provider-a/tags/list"); n != 1 {
		t.Errorf("the mirrored cluster listed its mirror's tags %d times, want once", n)
	}
	if n := reg.count("bob", "GET", "/tags/list"); n != 1 {
		t.Errorf("bob's cluster listed the tags %d times, want once with its own credentials", n)
	}
}
