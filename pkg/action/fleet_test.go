package action

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

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
		{"zeta", &Config{cluster: other}},
		{"alpha", &Config{cluster: ok}},
		{"denied", &Config{cluster: denied}},
		{"gone", &Config{Getter: failingGetter{}}},
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
		return Member{name, &Config{cluster: fakeCluster(t, objs...), XPNamespace: "crossplane-system"}}
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
