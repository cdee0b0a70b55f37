package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// fleetContexts is how many contexts the fleet benchmark asks at once.
const fleetContexts = 20

const fleetMethod = "`kubectl-xpkg get --all-contexts` and `kubectl-xpkg outdated --all-contexts` " + `on a
kubeconfig of 20 contexts, against each of the 20 contexts alone. The
contexts are one local API server under 20 distinct users (a ServiceAccount
each, authenticating with its own bearer token, allowed to get and list the
package API), each context seeing the outdated section's cluster: 50
packages in 50 repositories on a local registry (behind the counting
proxy). **The claim**: the 20 contexts answer in at most 1.5 times the
slowest single context's time, not in the sum of theirs; and ` + "`outdated`" + `
reads the registry once per repository across the 20 (the contexts read
with the same credentials, so their reads are shared). Measured twice: with
the API server on loopback, where the 20 contexts' reads and the API
server's answers share this machine's CPUs and nothing is waited for but
them; and with each context's cluster ` + "40 ms" + ` round trip away (a TCP proxy per
context that delays every byte by half the round trip each way, as a
cluster in another region would; the registry stays on loopback), where a
context's time is mostly waiting, which is what asking the 20 at once
overlaps. Every command takes turns with the others; the slowest single
context is the largest of the 20 medians. Warm discovery caches. The last
column is the CPU time the API server and etcd spent per run of the
command (their /proc times before and after, the commands taking turns
again): on loopback, the 20 contexts' requests cost the API server as
many times its work for one, on the same two CPUs as the plugin, which
bounds how close to one context's time the 20 can come.`

// fleetRTT is the round trip the benchmark's remote contexts add to the
// API server.
const fleetRTT = 40 * time.Millisecond

// fleetBench is the benchmark's environment: the API server reached
// directly (loopback), and through a latencyProxy per context (remote).
type fleetBench struct {
	env      *testenv.Env
	counter  *regCounter
	loopback fleetKubeconfig
	remote   fleetKubeconfig
}

// fleetKubeconfig is a kubeconfig of the 20 contexts and its discovery
// cache.
type fleetKubeconfig struct{ path, cache string }

func runFleet(cfg *config, r *report) error {
	r.para(fleetMethod)
	b, stop, err := startFleetBench(cfg)
	if err != nil {
		return err
	}
	defer stop()
	// Warm the discovery caches, check the report and count the registry
	// requests of one context and of the 20.
	single, err := b.registryRequests(cfg, b.loopback, "--context", "fleet-00")
	if err != nil {
		return err
	}
	all, err := b.registryRequests(cfg, b.loopback, "--all-contexts")
	if err != nil {
		return err
	}
	if _, err := b.registryRequests(cfg, b.remote, "--all-contexts"); err != nil {
		return err
	}
	r.printf("| registry requests of outdated | tag lists | manifest HEADs | other | total |\n|---|---|---|---|---|\n")
	for _, row := range []struct {
		name string
		reqs []string
	}{{"one context", single}, {fmt.Sprintf("%d contexts", fleetContexts), all}} {
		lists, heads, pings, other := registryKinds(row.reqs)
		r.printf("| %s | %d | %d | %d | %d |\n", row.name, lists, heads, pings+other, len(row.reqs))
	}
	for _, k := range []struct {
		kc    fleetKubeconfig
		title string
	}{{b.loopback, "API server on loopback"}, {b.remote, fmt.Sprintf("API server %s round trip away", fleetRTT)}} {
		r.printf("\n%s:\n\n| command | wall (median) | peak RSS | CPU (median) | API server + etcd CPU (mean) |\n|---|---|---|---|---|\n", k.title)
		for _, verb := range []string{"get", "outdated"} {
			if err := b.measureVerb(cfg, r, k.kc, verb); err != nil {
				return err
			}
		}
	}
	r.printf("\n")
	return nil
}

// measureVerb times verb on the 20 contexts at once and on each alone,
// taking turns, and reports the ratio to the slowest single context.
func (b *fleetBench) measureVerb(cfg *config, r *report, kc fleetKubeconfig, verb string) error {
	cmds := []measure.Command{{Bin: cfg.bin, Args: kc.args(verb, "--all-contexts")}}
	for i := range fleetContexts {
		cmds = append(cmds, measure.Command{Bin: cfg.bin, Args: kc.args(verb, "--context", fleetContext(i))})
	}
	res, err := measure.Interleave(cfg.runs, cmds...)
	if err != nil {
		return err
	}
	byWall := func(i, j int) int { return int(res[i].Wall - res[j].Wall) }
	singles := make([]int, fleetContexts)
	for i := range singles {
		singles[i] = i + 1
	}
	slowest, fastest := slices.MaxFunc(singles, byWall), slices.MinFunc(singles, byWall)
	var sum time.Duration
	for _, x := range res[1:] {
		sum += x.Wall
	}
	server, err := b.serverCPUPerRun(cfg.runs, cmds[0], cmds[slowest], cmds[fastest])
	if err != nil {
		return err
	}
	for k, row := range []struct {
		what string
		i    int
	}{{fmt.Sprintf("%d contexts at once", fleetContexts), 0}, {"slowest single context", slowest}, {"fastest single context", fastest}} {
		x := res[row.i]
		r.printf("| %s, %s | %s | %s | %s | %s |\n", verb, row.what, ms(x.Wall), rssOf(x.RSS, x.Floor), ms(x.CPU), ms(server[k]))
	}
	r.printf("| %s: %d contexts / slowest single (claim: ≤ 1.5) | **%s** | the %d alone in turn: %s | | |\n", verb, fleetContexts, ratio(res[0].Wall, res[slowest].Wall), fleetContexts, ms(sum))
	return nil
}

func (kc fleetKubeconfig) args(verb string, extra ...string) []string {
	return append([]string{verb, "--kubeconfig", kc.path, "--cache-dir", kc.cache}, extra...)
}

// registryRequests runs outdated -o json, checks it, and returns the
// registry requests it made.
func (b *fleetBench) registryRequests(cfg *config, kc fleetKubeconfig, extra ...string) ([]string, error) {
	b.counter.take()
	out, _, err := cmd(cfg.bin, append(kc.args("outdated", extra...), "-o", "json")...)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Items []struct {
			Cluster, Name, Error string
		} `json:"items"`
		Errors []any `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return nil, fmt.Errorf("outdated -o json: %w", err)
	}
	want := outdatedTotal()
	if extra[0] == "--all-contexts" {
		want *= fleetContexts
	}
	if len(doc.Items) != want || len(doc.Errors) > 0 {
		return nil, fmt.Errorf("outdated %v lists %d packages (want %d), errors %v", extra, len(doc.Items), want, doc.Errors)
	}
	for _, it := range doc.Items {
		if it.Error != "" {
			return nil, fmt.Errorf("outdated %v: %s: %s", extra, it.Name, it.Error)
		}
	}
	return b.counter.take(), nil
}

func fleetContext(i int) string { return fmt.Sprintf("fleet-%02d", i) }

// startFleetBench starts the API server and registry, populates them as
// the outdated section does, and writes the kubeconfigs of 20 contexts, a
// ServiceAccount's token each: on loopback, and through a latencyProxy
// each.
func startFleetBench(cfg *config) (*fleetBench, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := startEnv(cfg.envDir+"-fleet", cfg.k8sBin, false)
	if err != nil {
		return nil, nil, err
	}
	var closers []func()
	stop := func() {
		for _, c := range closers {
			c()
		}
		stopEnv(env)
	}
	b := &fleetBench{env: env,
		loopback: fleetKubeconfig{filepath.Join(cfg.tmp, "fleet-kubeconfig"), filepath.Join(cfg.tmp, "fleet-cache")},
		remote:   fleetKubeconfig{filepath.Join(cfg.tmp, "fleet-kubeconfig-remote"), filepath.Join(cfg.tmp, "fleet-cache-remote")}}
	if b.counter, err = startRegCounter(env.Registry.Host); err != nil {
		stop()
		return nil, nil, err
	}
	closers = append(closers, b.counter.srv.Close)
	if err := b.populate(ctx, cfg, &closers); err != nil {
		stop()
		return nil, nil, err
	}
	return b, stop, nil
}

// populate fills the cluster and registry and writes the kubeconfigs.
func (b *fleetBench) populate(ctx context.Context, cfg *config, closers *[]func()) error {
	env := b.env
	docker := filepath.Join(cfg.tmp, "docker-fleet")
	if err := writeDockerConfig(docker, b.counter.host(), env.Registry.Username, env.Registry.Password); err != nil {
		return err
	}
	os.Setenv("DOCKER_CONFIG", docker)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		return err
	}
	auth := remote.WithAuth(&authn.Basic{Username: env.Registry.Username, Password: env.Registry.Password})
	if err := populate(ctx, dyn, env.Registry.Host, b.counter.host(), auth); err != nil {
		return err
	}
	tokens, err := fleetTokens(ctx, dyn)
	if err != nil {
		return err
	}
	if err := writeFleetKubeconfig(env, b.loopback.path, tokens, func(int) string { return env.APIServer }); err != nil {
		return err
	}
	target := strings.TrimPrefix(env.APIServer, "https://")
	servers := make([]string, fleetContexts)
	for i := range servers {
		p, err := startLatencyProxy(target, fleetRTT)
		if err != nil {
			return err
		}
		*closers = append(*closers, p.Close)
		servers[i] = "https://" + p.addr()
	}
	return writeFleetKubeconfig(env, b.remote.path, tokens, func(i int) string { return servers[i] })
}

var (
	serviceAccountsGVR = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	clusterRolesGVR    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	roleBindingsGVR    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

// fleetTokens makes 20 ServiceAccounts that may read the package API and
// returns a token of each.
func fleetTokens(ctx context.Context, dyn dynamic.Interface) ([]string, error) {
	role := obj("rbac.authorization.k8s.io/v1", "ClusterRole", "xpkg-fleet-reader", map[string]any{"rules": []any{
		map[string]any{"apiGroups": []any{"pkg.crossplane.io"}, "resources": []any{"*"}, "verbs": []any{"get", "list"}}}})
	binding := obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "xpkg-fleet-reader", map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "xpkg-fleet-reader"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:serviceaccounts:default"}}})
	if _, err := dyn.Resource(clusterRolesGVR).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if _, err := dyn.Resource(roleBindingsGVR).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	tokens := make([]string, fleetContexts)
	for i := range tokens {
		var err error
		if tokens[i], err = serviceAccountToken(ctx, dyn, fleetContext(i)); err != nil {
			return nil, err
		}
	}
	return tokens, nil
}

// writeFleetKubeconfig writes a kubeconfig of a context per token, each
// its own user, and its own cluster at server(i).
func writeFleetKubeconfig(env *testenv.Env, path string, tokens []string, server func(i int) string) error {
	in, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		return err
	}
	ca := in.Clusters[in.Contexts[testenv.ContextAdmin].Cluster].CertificateAuthorityData
	kc := clientcmdapi.NewConfig()
	for i, token := range tokens {
		name := fleetContext(i)
		kc.Clusters[name] = &clientcmdapi.Cluster{Server: server(i), CertificateAuthorityData: ca}
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	}
	kc.CurrentContext = fleetContext(0)
	return clientcmd.WriteToFile(*kc, path)
}

// serviceAccountToken creates ServiceAccount name in default and returns a
// token of it (an hour).
func serviceAccountToken(ctx context.Context, dyn dynamic.Interface, name string) (string, error) {
	sa := obj("v1", "ServiceAccount", name, nil)
	if _, err := dyn.Resource(serviceAccountsGVR).Namespace("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	req := obj("authentication.k8s.io/v1", "TokenRequest", name, map[string]any{"spec": map[string]any{"expirationSeconds": int64(3600)}})
	got, err := dyn.Resource(serviceAccountsGVR).Namespace("default").Create(ctx, req, metav1.CreateOptions{}, "token")
	if err != nil {
		return "", fmt.Errorf("token of ServiceAccount %s: %w", name, err)
	}
	token, _, _ := unstructured.NestedString(got.Object, "status", "token")
	if token == "" {
		return "", fmt.Errorf("no token for ServiceAccount %s", name)
	}
	return token, nil
}

func obj(apiVersion, kind, name string, fields map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}
	for k, v := range fields {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}
