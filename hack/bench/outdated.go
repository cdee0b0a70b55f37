package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

const outdatedMethod = "`kubectl-xpkg outdated` on a cluster with " + `50 installed packages (20 providers,
20 configurations, 10 functions), each from its own repository on a local
registry (CNCF distribution, htpasswd authentication, on 127.0.0.1) holding
v1.0.0, v1.1.0 and v2.0.0 of a small package of its kind (no dependencies); every
package runs v1.0.0, and each configuration depends on one provider at
` + "`>=v1.0.0 <v2.0.0`" + ` in the Lock, so that provider's WANTED is v1.1.0. The package objects, their status and the Lock are written
as the package manager would; no package manager runs. **API requests** are
counted from the ` + "`-v=6`" + ` log (warm discovery cache): one LIST per package
kind, one LIST of the provider revisions (for the FAMILY label of each
provider's running revision: this cluster has providers, so outdated asks,
though no revision is written here and no provider is in a family), the Lock
and the ImageConfigs. **Registry requests** are
counted by a reverse proxy on 127.0.0.1 in front of the registry, through
which the packages' references point; the other registry requests read the
meta object of each version a package would move to (its manifest and the
start of its layer), to check its dependencies. **Time** is the wall time, taking
turns with ` + "`kubectl-xpkg get`" + ` (the same package LISTs, no registry): the
difference is the registry's share.`

// outdatedPackages is the benchmark's cluster: kinds and counts.
var outdatedPackages = []struct {
	kind, resource, prefix string
	n                      int
}{
	{"Provider", "providers", "provider", 20},
	{"Configuration", "configurations", "configuration", 20},
	{"Function", "functions", "function", 10},
}

// regCounter is a reverse proxy in front of the registry that counts the
// requests it forwards, by method and kind of path.
type regCounter struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func startRegCounter(host string) (*regCounter, error) {
	target, err := url.Parse("http://" + host)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	c := &regCounter{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.seen = append(c.seen, r.Method+" "+r.URL.Path)
		c.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	return c, nil
}

func (c *regCounter) host() string { return strings.TrimPrefix(c.srv.URL, "http://") }

func (c *regCounter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.seen
	c.seen = nil
	return s
}

var (
	tagListPath  = regexp.MustCompile(`^/v2/.+/tags/list$`)
	manifestPath = regexp.MustCompile(`^/v2/.+/manifests/[^/]+$`)
)

// registryKinds sorts requests into tag lists, manifest HEADs, pings of
// /v2/ (authentication) and the rest.
func registryKinds(reqs []string) (lists, heads, pings, other int) {
	for _, r := range reqs {
		method, path, _ := strings.Cut(r, " ")
		switch {
		case method == "GET" && tagListPath.MatchString(path):
			lists++
		case method == "HEAD" && manifestPath.MatchString(path):
			heads++
		case path == "/v2/":
			pings++
		default:
			other++
		}
	}
	return
}

func runOutdated(cfg *config, r *report) error {
	r.para(outdatedMethod)
	flat, err := measureOutdated(cfg, "", outdatedTotal(), populate, checkOutdated)
	if err != nil {
		return err
	}
	total := flat.packages
	lists, heads, pings, other := registryKinds(flat.registry)
	res := flat.res
	r.printf("%d packages in %d repositories, %d runs each, taking turns.\n\n", total, total, cfg.runs)
	r.printf("| | count | per repository |\n|---|---|---|\n")
	r.printf("| API requests (discovery cached) | %d: %s | — |\n", len(flat.api), strings.Join(flat.api, ", "))
	r.printf("| registry tag lists | %d | %.1f |\n", lists, float64(lists)/float64(total))
	r.printf("| registry manifest HEADs | %d | %.1f |\n", heads, float64(heads)/float64(total))
	r.printf("| registry /v2/ authentication pings | %d | %.1f |\n", pings, float64(pings)/float64(total))
	r.printf("| other registry requests | %d | %.1f |\n\n", other, float64(other)/float64(total))
	r.printf("| command | wall (median) | peak RSS |\n|---|---|---|\n")
	r.printf("| kubectl-xpkg outdated | %s | %s |\n", ms(res[0].Wall), rssOf(res[0].RSS, res[0].Floor))
	r.printf("| kubectl-xpkg get | %s | %s |\n\n", ms(res[1].Wall), rssOf(res[1].RSS, res[1].Floor))
	r.printf("outdated / get: %s; the registry's share: %s for %d repositories.\n\n", ratio(res[0].Wall, res[1].Wall), ms(res[0].Wall-res[1].Wall), total)
	return runOutdatedFamily(cfg, r, flat)
}

func outdatedTotal() int {
	total := 0
	for _, p := range outdatedPackages {
		total += p.n
	}
	return total
}

// outdatedRun is what one cluster's measurement found.
type outdatedRun struct {
	packages int
	// api are the -v=6 run's API requests (not discovery), sorted;
	// registry its registry requests, as the counting proxy saw them.
	api, registry []string
	// res are outdated's and get's figures, taking turns.
	res []measure.Result
}

// populateFunc fills a fresh cluster and registry: it pushes through
// registry and names the references through refHost (the counting proxy).
type populateFunc func(ctx context.Context, dyn dynamic.Interface, registry, refHost string, auth remote.Option) error

// measureOutdated starts a local API server and registry (in the section's
// env directory plus suffix) behind a counting proxy, populates them,
// checks `outdated -o json` with check (which also warms the discovery
// cache), counts the requests of one -v=6 run, and times outdated taking
// turns with get; the servers are stopped at the end.
func measureOutdated(cfg *config, suffix string, packages int, populate populateFunc, check func(string) error) (outdatedRun, error) {
	run := outdatedRun{packages: packages}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := startEnv(cfg.envDir+"-outdated"+suffix, cfg.k8sBin, false)
	if err != nil {
		return run, err
	}
	defer stopEnv(env)
	counter, err := startRegCounter(env.Registry.Host)
	if err != nil {
		return run, err
	}
	defer counter.srv.Close()
	// The plugin authenticates to the proxy with the registry's user.
	docker := filepath.Join(cfg.tmp, "docker"+suffix)
	if err := writeDockerConfig(docker, counter.host(), env.Registry.Username, env.Registry.Password); err != nil {
		return run, err
	}
	os.Setenv("DOCKER_CONFIG", docker)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		return run, err
	}
	auth := remote.WithAuth(&authn.Basic{Username: env.Registry.Username, Password: env.Registry.Password})
	if err := populate(ctx, dyn, env.Registry.Host, counter.host(), auth); err != nil {
		return run, err
	}
	cache := filepath.Join(cfg.tmp, "outdated-cache"+suffix)
	args := []string{"outdated", "--kubeconfig", env.Kubeconfig, "--cache-dir", cache}
	// Warm the discovery cache, and check the report.
	out, _, err := cmd(cfg.bin, append(args, "-o", "json")...)
	if err != nil {
		return run, err
	}
	if err := check(out); err != nil {
		return run, err
	}
	counter.take()
	_, stderr, err := cmd(cfg.bin, append(args, "-v=6")...)
	if err != nil {
		return run, err
	}
	for _, q := range parseRequests(stderr) {
		if !q.discovery {
			run.api = append(run.api, q.verb+" "+q.path)
		}
	}
	slices.Sort(run.api)
	run.registry = counter.take()
	run.res, err = measure.Interleave(cfg.runs,
		measure.Command{Bin: cfg.bin, Args: args},
		measure.Command{Bin: cfg.bin, Args: []string{"get", "--kubeconfig", env.Kubeconfig, "--cache-dir", cache}})
	return run, err
}

// populate pushes the repositories (through registry, directly) and writes
// the packages, their status and the Lock, naming references through
// refHost (the counting proxy).
func populate(ctx context.Context, dyn dynamic.Interface, registry, refHost string, auth remote.Option) error {
	var lock []any
	for _, p := range outdatedPackages {
		gvr := schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: p.resource}
		for i := range p.n {
			name := fmt.Sprintf("bench-%s-%02d", p.prefix, i)
			repo := "bench/" + name
			var d v1.Hash
			for _, tag := range []string{"v1.0.0", "v1.1.0", "v2.0.0"} {
				// A small package of the kind (outdated reads the meta
				// object of the version a package would move to).
				img, err := fixture.Image(fmt.Appendf(nil, "apiVersion: meta.pkg.crossplane.io/v1\nkind: %s\nmetadata:\n  name: %s\n  annotations:\n    version: %s\n", p.kind, name, tag))
				if err != nil {
					return err
				}
				if tag == "v1.0.0" {
					if d, err = img.Digest(); err != nil {
						return err
					}
				}
				ref, err := nameRef(registry + "/" + repo + ":" + tag)
				if err != nil {
					return err
				}
				if err := remote.Write(ref, img, auth, remote.WithContext(ctx)); err != nil {
					return err
				}
			}
			rev := benchRevisionName(name, d)
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "pkg.crossplane.io/v1", "kind": p.kind,
				"metadata": map[string]any{"name": name},
				"spec":     map[string]any{"package": refHost + "/" + repo + ":v1.0.0"},
			}}
			created, err := dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			created.Object["status"] = map[string]any{"currentRevision": rev, "currentIdentifier": refHost + "/" + repo + ":v1.0.0"}
			if _, err := dyn.Resource(gvr).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				return err
			}
			entry := map[string]any{"name": rev, "source": refHost + "/" + repo, "version": "v1.0.0", "type": p.kind, "dependencies": []any{}}
			if p.kind == "Configuration" {
				entry["dependencies"] = []any{map[string]any{"package": fmt.Sprintf("%s/bench/bench-provider-%02d", refHost, i), "constraints": ">=v1.0.0 <v2.0.0", "type": "Provider"}}
			}
			lock = append(lock, entry)
		}
	}
	l := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "Lock",
		"metadata": map[string]any{"name": "lock"}, "packages": lock,
	}}
	_, err := dyn.Resource(schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "locks"}).Create(ctx, l, metav1.CreateOptions{})
	return err
}

func nameRef(s string) (name.Reference, error) { return name.ParseReference(s) }

// checkOutdated makes sure the report is what the cluster holds: every
// provider wanted at v1.1.0 (held by its configuration), everything else
// at v2.0.0, no drift.
func checkOutdated(out string) error {
	var doc struct {
		Items []struct {
			Name, Current, Wanted, Latest string
			Drifted                       bool
			Error                         string
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return fmt.Errorf("outdated -o json: %w", err)
	}
	if len(doc.Items) != 50 {
		return fmt.Errorf("outdated lists %d packages, want 50", len(doc.Items))
	}
	for _, it := range doc.Items {
		want := "v2.0.0"
		if strings.HasPrefix(it.Name, "bench-provider-") {
			want = "v1.1.0"
		}
		if it.Current != "v1.0.0" || it.Wanted != want || it.Latest != "v2.0.0" || it.Drifted || it.Error != "" {
			return fmt.Errorf("outdated reports %s as %+v, want current v1.0.0, wanted %s, latest v2.0.0", it.Name, it, want)
		}
	}
	return nil
}

// writeDockerConfig writes a docker config.json with one registry's
// credentials.
func writeDockerConfig(dir, host, user, password string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}}})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600)
}
