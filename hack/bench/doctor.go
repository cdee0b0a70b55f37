package main

import (
	"context"
	"fmt"
	"log"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

const doctorMethod = "`kubectl-xpkg doctor`" + ` on a healthy cluster of 50 providers and 500 CRDs, of 200
providers and 2,000 CRDs, and of the same 200 providers with five
revisions each (1,000 revisions), in one local kube-apiserver (with
Crossplane ` + testenv.DefaultCrossplaneVersion + `'s CRDs) grown from size to size; no Crossplane runs:
doctor only reads. The benchmark writes what Crossplane's package manager
would: each provider (revisionHistoryLimit: 4) with its revisions, the
newest active (at the first two sizes every other provider has one
older, inactive revision, the others none); ten CRDs per provider, copies
of provider-aws v0.58.0's 100 largest (about 50 KB each, as the plans
benchmark makes them), owned by the provider and by each of its revisions
with their real UIDs, the active revision their controller; each
revision's status.objectRefs naming its CRDs, and its healthy conditions;
the provider's status; the Lock, one entry per active revision. Every CRD
is established before doctor runs. **Each size is checked first**: doctor
must exit 0 and print "no problems found" after reading every package,
revision and Lock entry. **Requests** and their response bytes (as sent:
compressed where the API server compressed them) are counted by a reverse
proxy on 127.0.0.1 in front of the API server, discovery cached. **Time**:
doctor against the API server directly, taking turns with one raw read of
every CRD (` + "`kubectl get --raw /apis/apiextensions.k8s.io/v1/customresourcedefinitions`" + `, output to
/dev/null), the least a tool that reads every CRD can do.
**Goal (the issue's): requests that do not grow with the CRDs or the
revisions; seconds, not minutes.**`

// doctorSizes are the sizes, in the order measured (each adds to the
// last).
var doctorSizes = []doctorSize{{packages: 50}, {packages: 200}, {packages: 200, all: true}}

const crdListPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// doctorRow is what was measured at one size.
type doctorRow struct {
	size doctorSize
	apiCounts
	// limits is the page size each paged kind asked for.
	limits map[string]string
	// crdsInAll counts every CRD in the cluster, Crossplane's own too.
	crdsInAll int
	// bytes and crdBytes are the response bytes of that run, all and of
	// the CRD lists; crdList the bytes of one uncompressed raw read of
	// every CRD.
	bytes, crdBytes, crdList int64
	walls, rawWalls          []time.Duration
	rss, floor               int64
}

func (s doctorSize) String() string {
	return fmt.Sprintf("%d providers, %d revisions, %d CRDs", s.packages, s.revisions(), s.crds())
}

func runDoctor(cfg *config, r *report) error {
	r.para(doctorMethod)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	dc, err := startDoctorCluster(cfg)
	if err != nil {
		return err
	}
	defer dc.stop()
	rec, err := startRecorder(dc.env.Kubeconfig, filepath.Join(cfg.tmp, "doctor-proxy.kubeconfig"))
	if err != nil {
		return err
	}
	defer rec.Close()
	var rows []*doctorRow
	for _, s := range doctorSizes {
		start := time.Now()
		if err := dc.grow(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		log.Printf("doctor, %s: written and established in %s", s, time.Since(start).Round(100*time.Millisecond))
		row, err := dc.measure(cfg, rec, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		rows = append(rows, row)
	}
	writeDoctor(r, cfg, rows)
	return nil
}

// startDoctorCluster starts an API server (no registry: doctor reads no
// package) and watches the CRDs the benchmark creates.
func startDoctorCluster(cfg *config) (*doctorCluster, error) {
	_, ts, err := loadTemplates(cfg.root)
	if err != nil {
		return nil, err
	}
	env, err := startEnv(cfg.envDir+"-doctor", cfg.k8sBin, true)
	if err != nil {
		return nil, err
	}
	return newPopulation(env, ts, doctorShape)
}

// newPopulation is an empty population of providers of shape in env,
// whose CRDs it watches; env is stopped if that fails.
func newPopulation(env *testenv.Env, ts []*planTemplate, shape popShape) (*doctorCluster, error) {
	dc := &doctorCluster{shape: shape, env: env, ts: ts}
	var err error
	if dc.dyn, err = env.DynamicClient(testenv.ContextAdmin); err == nil {
		dc.est, err = watchEstablished(env, shape.set)
	}
	if err != nil {
		stopEnv(env)
		return nil, err
	}
	return dc, nil
}

func (dc *doctorCluster) stop() {
	dc.est.stop()
	stopEnv(dc.env)
}

func doctorArgs(kubeconfig, cache string) []string {
	return []string{"doctor", "--kubeconfig", kubeconfig, "--cache-dir", cache}
}

// checkDoctor runs doctor and fails unless it exits 0 and reports a
// healthy cluster of the size.
func checkDoctor(bin string, args []string, s doctorSize) error {
	out, _, err := cmd(bin, args...)
	if err != nil {
		return err
	}
	want := fmt.Sprintf("Doctor: %d packages, %d revisions, %d Lock entries read\n  no problems found\n", s.packages, s.revisions(), s.packages)
	if !strings.Contains(out, want) {
		return fmt.Errorf("doctor printed %.2000q, want %q", out, want)
	}
	return nil
}

// measure checks doctor, counts one run's requests through the proxy,
// then times it against the API server directly, taking turns with the
// raw read of every CRD.
func (dc *doctorCluster) measure(cfg *config, rec *recorder, s doctorSize) (*doctorRow, error) {
	row := &doctorRow{size: s, apiCounts: newAPICounts(), limits: map[string]string{}}
	proxied := doctorArgs(rec.kubeconfig, filepath.Join(cfg.tmp, "doctor-cache-proxy"))
	direct := doctorArgs(dc.env.Kubeconfig, filepath.Join(cfg.tmp, "doctor-cache"))
	// The first runs fill the discovery caches.
	for _, args := range [][]string{proxied, direct} {
		if err := checkDoctor(cfg.bin, args, s); err != nil {
			return nil, err
		}
	}
	rec.take()
	if err := checkDoctor(cfg.bin, proxied, s); err != nil {
		return nil, err
	}
	for _, sp := range rec.take() {
		row.count(sp)
	}
	var err error
	if row.crdList, err = rawListBytes(dc.env); err != nil {
		return nil, err
	}
	if row.crdsInAll, err = dc.countCRDs(); err != nil {
		return nil, err
	}
	doctor := measure.Command{Bin: cfg.bin, Args: direct}
	list := measure.Command{Bin: dc.env.Kubectl, Args: []string{"get", "--raw", crdListPath, "--kubeconfig", dc.env.Kubeconfig}}
	log.Printf("doctor, %s: measuring %d runs", s, cfg.runs)
	for range cfg.runs {
		res, err := measure.Interleave(1, doctor, list)
		if err != nil {
			return nil, err
		}
		row.walls, row.rawWalls = append(row.walls, res[0].Wall), append(row.rawWalls, res[1].Wall)
		row.rss, row.floor = max(row.rss, res[0].RSS), max(row.floor, res[0].Floor)
	}
	return row, nil
}

// count adds one request to the row.
func (row *doctorRow) count(sp span) {
	resource, key, q, ok := row.add(sp)
	if !ok {
		return
	}
	if l := q.Get("limit"); l != "" {
		row.limits[key] = l
	}
	row.bytes += sp.bytes
	if resource == "customresourcedefinitions" {
		row.crdBytes += sp.bytes
	}
}

// lists are the row's requests counting a paged LIST once.
func (row *doctorRow) lists() map[string]int {
	out := map[string]int{}
	for k, v := range row.reqs {
		out[k] = v - row.conts[k]
	}
	return out
}

// countCRDs counts the cluster's CRDs from a list of their metadata.
func (dc *doctorCluster) countCRDs() (int, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", dc.env.Kubeconfig)
	if err != nil {
		return 0, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	l, err := mc.Resource(crdGVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

// rawListBytes is the size of every CRD as one uncompressed read.
func rawListBytes(env *testenv.Env) (int64, error) {
	var n byteCounter
	c := exec.Command(env.Kubectl, "get", "--raw", crdListPath, "--kubeconfig", env.Kubeconfig)
	var stderr strings.Builder
	c.Stdout, c.Stderr = &n, &stderr
	if err := c.Run(); err != nil {
		return 0, fmt.Errorf("kubectl get --raw %s: %v: %s", crdListPath, err, stderr.String())
	}
	return int64(n), nil
}

type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}

// apiCounts are the API requests of one run by "VERB resource",
// discovery apart; conts those that continued a paged LIST.
type apiCounts struct {
	reqs, conts map[string]int
	discovery   int
}

func newAPICounts() apiCounts {
	return apiCounts{reqs: map[string]int{}, conts: map[string]int{}}
}

// add counts one request, and returns its resource, its key and its
// query; ok is false for discovery, which is counted apart.
func (c *apiCounts) add(sp span) (resource, key string, q url.Values, ok bool) {
	if isDiscovery(sp.path) {
		c.discovery++
		return "", "", nil, false
	}
	_, resource, _ = splitAPIPath(sp.path)
	key = sp.verb + " " + resource
	c.reqs[key]++
	q, _ = url.ParseQuery(sp.query)
	if q.Get("continue") != "" {
		c.conts[key]++
	}
	return resource, key, q, true
}
