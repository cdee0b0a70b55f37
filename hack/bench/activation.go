package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/url"
	"path/filepath"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

const activationMethod = "`kubectl-xpkg activation plan -o json`" + ` on a cluster of 200 ManagedResourceDefinitions
and 20 Compositions, grown to 2,000 MRDs, then to 200 Compositions, in
one local kube-apiserver (with Crossplane ` + testenv.DefaultCrossplaneVersion + `'s CRDs); no Crossplane
runs: the plan only reads. The benchmark writes what Crossplane v2 would:
20 providers (a package and its revision each) of 100 MRDs, copies of
provider-aws v0.58.0's 100 largest CRDs (about 50 KB each, as the plans
benchmark makes them) in the API groups *.act0.crossplane.io to
*.act19.crossplane.io, owned by the package and by the revision, their
controller; the default policy (ManagedResourceActivationPolicy
"default", as Crossplane's install makes it) activating the
even-numbered providers' groups, whose MRDs are Active, each with the CRD
Crossplane makes of it (owned by the MRD and the revision), the others
Inactive; no managed resource. Compositions are pipelines of
function-patch-and-transform composing 3 to 5 kinds of one provider
(bases with patches and transforms), every fourth one rendering its
last kind with function-go-templating instead, then function-auto-ready;
the first 20 compose the first two providers' kinds. Every CRD is
established before the plan runs. **Each size is checked first**: the
plan must count every MRD and the active ones, need exactly the kinds
the Compositions compose, miss and leave unread none, and find the
default policy activating every active MRD. **Requests** are counted by
a reverse proxy on 127.0.0.1 in front of the API server, discovery
cached; the LISTs of the kinds of active MRDs (one object each, to count
them) apart. **Time** and **peak RSS**: the plan against the API server
directly, taking turns with one raw read of every MRD
(` + "`kubectl get --raw /apis/apiextensions.crossplane.io/v1alpha1/managedresourcedefinitions`" + `,
output to /dev/null). **Goal: seconds; requests a fixed number per kind
of object (lists of MRDs, CRDs, Compositions, policies) plus one LIST
per active MRD, none more with more Compositions; memory flat.**`

// activationSizes are the sizes, in the order measured (each adds to the
// last).
var activationSizes = []actSize{{200, 20}, {2000, 20}, {2000, 200}}

const (
	mrdListPath = "/apis/apiextensions.crossplane.io/v1alpha1/managedresourcedefinitions"
	// perKind is the request key of the LISTs of the active MRDs' kinds.
	perKind = "LIST one object of an active MRD's kind"
)

// actRow is what was measured at one size.
type actRow struct {
	size actSize
	apiCounts
	// limits is the page size each paged kind asked for; kinds the kinds
	// listed one object of, and wide the LISTs of them without limit=1.
	limits map[string]string
	kinds  map[string]int
	wide   int
	// crdsInAll counts every CRD in the cluster, Crossplane's own too.
	crdsInAll       int
	walls, rawWalls []time.Duration
	rss, floor      int64
}

func runActivation(cfg *config, r *report) error {
	r.para(activationMethod)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	_, ts, err := loadTemplates(cfg.root)
	if err != nil {
		return err
	}
	env, err := startEnv(cfg.envDir+"-activation", cfg.k8sBin, true)
	if err != nil {
		return err
	}
	ac := &actCluster{env: env, ts: ts}
	if ac.dyn, err = env.DynamicClient(testenv.ContextAdmin); err == nil {
		ac.est, err = watchEstablished(env, actSet)
	}
	if err != nil {
		stopEnv(env)
		return err
	}
	defer func() {
		ac.est.stop()
		stopEnv(env)
	}()
	rec, err := startRecorder(env.Kubeconfig, filepath.Join(cfg.tmp, "activation-proxy.kubeconfig"))
	if err != nil {
		return err
	}
	defer rec.Close()
	var rows []*actRow
	for _, s := range activationSizes {
		start := time.Now()
		if err := ac.grow(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		log.Printf("activation, %s: written and established in %s", s, time.Since(start).Round(100*time.Millisecond))
		row, err := ac.measure(cfg, rec, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		rows = append(rows, row)
	}
	writeActivation(r, cfg, rows)
	return nil
}

func activationArgs(kubeconfig, cache string) []string {
	return []string{"activation", "plan", "-o", "json", "--kubeconfig", kubeconfig, "--cache-dir", cache}
}

// actPlan is what the check reads of the plan.
type actPlan struct {
	Needs []struct {
		MRD string `json:"mrd"`
	} `json:"needs"`
	Missing []any    `json:"missing"`
	Unread  []string `json:"unread"`
	Counts  struct {
		MRDs      int `json:"mrds"`
		ActiveNow int `json:"activeNow"`
		Needed    int `json:"needed"`
	} `json:"counts"`
	Existing []struct {
		Name    string `json:"name"`
		Matches int    `json:"matches"`
	} `json:"existingPolicies"`
}

// checkActivation runs the plan and fails unless it read the size as
// written: every MRD and the active ones, the kinds the Compositions
// compose, and the default policy.
func (ac *actCluster) checkActivation(bin string, args []string, s actSize) error {
	out, _, err := cmd(bin, args...)
	if err != nil {
		return err
	}
	var p actPlan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		return fmt.Errorf("activation plan -o json: %w", err)
	}
	want := ac.needed(s)
	got := map[string]bool{}
	for _, n := range p.Needs {
		got[n.MRD] = true
	}
	c := p.Counts
	switch {
	case c.MRDs != s.mrds || c.ActiveNow != s.active():
		return fmt.Errorf("the plan counted %d MRDs, %d active; want %d, %d", c.MRDs, c.ActiveNow, s.mrds, s.active())
	case c.Needed != len(want) || len(got) != len(want):
		return fmt.Errorf("the plan needs %d MRDs, want %d", c.Needed, len(want))
	case len(p.Missing) > 0 || len(p.Unread) > 0:
		return fmt.Errorf("the plan has %d missing kinds and %d unread Compositions, want none: %.2000s", len(p.Missing), len(p.Unread), out)
	case len(p.Existing) != 1 || p.Existing[0].Name != actPolicy || p.Existing[0].Matches != s.active():
		return fmt.Errorf("the plan found policies %+v, want %s activating %d MRDs", p.Existing, actPolicy, s.active())
	}
	for n := range want {
		if !got[n] {
			return fmt.Errorf("the plan does not need %s, which a Composition composes", n)
		}
	}
	return nil
}

// measure checks the plan, counts one run's requests through the proxy,
// then times it against the API server directly, taking turns with the
// raw read of every MRD.
func (ac *actCluster) measure(cfg *config, rec *recorder, s actSize) (*actRow, error) {
	row := &actRow{size: s, apiCounts: newAPICounts(), limits: map[string]string{}, kinds: map[string]int{}}
	proxied := activationArgs(rec.kubeconfig, filepath.Join(cfg.tmp, "activation-cache-proxy"))
	direct := activationArgs(ac.env.Kubeconfig, filepath.Join(cfg.tmp, "activation-cache"))
	// The first runs fill the discovery caches.
	for _, args := range [][]string{proxied, direct} {
		if err := ac.checkActivation(cfg.bin, args, s); err != nil {
			return nil, err
		}
	}
	rec.take()
	if err := ac.checkActivation(cfg.bin, proxied, s); err != nil {
		return nil, err
	}
	for _, sp := range rec.take() {
		row.count(sp)
	}
	dc := &doctorCluster{env: ac.env}
	var err error
	if row.crdsInAll, err = dc.countCRDs(); err != nil {
		return nil, err
	}
	plan := measure.Command{Bin: cfg.bin, Args: direct}
	list := measure.Command{Bin: ac.env.Kubectl, Args: []string{"get", "--raw", mrdListPath, "--kubeconfig", ac.env.Kubeconfig}}
	log.Printf("activation, %s: measuring %d runs", s, cfg.runs)
	for range cfg.runs {
		res, err := measure.Interleave(1, plan, list)
		if err != nil {
			return nil, err
		}
		row.walls, row.rawWalls = append(row.walls, res[0].Wall), append(row.rawWalls, res[1].Wall)
		row.rss, row.floor = max(row.rss, res[0].RSS), max(row.floor, res[0].Floor)
	}
	return row, nil
}

// count adds one request to the row: a LIST of an MRD's kind under
// perKind, the others by verb and resource.
func (row *actRow) count(sp span) {
	if isDiscovery(sp.path) {
		row.discovery++
		return
	}
	group, resource, _ := splitAPIPath(sp.path)
	key := sp.verb + " " + resource
	q, _ := url.ParseQuery(sp.query)
	if actGroup.MatchString(group) {
		key = sp.verb + " one kind of an MRD"
		if sp.verb == "LIST" {
			key = perKind
		}
		row.kinds[resource+"."+group]++
		if q.Get("limit") != "1" {
			row.wide++
		}
	} else if l := q.Get("limit"); l != "" && q.Get("continue") != "" {
		row.limits[key] = l
	}
	row.reqs[key]++
	if q.Get("continue") != "" {
		row.conts[key]++
	}
}

// lists are the row's requests counting a paged LIST once.
func (row *actRow) lists() map[string]int {
	out := map[string]int{}
	for k, v := range row.reqs {
		out[k] = v - row.conts[k]
	}
	return out
}

// fixed are the row's requests but those of the MRDs' kinds.
func (row *actRow) fixed() map[string]int {
	out := map[string]int{}
	for k, v := range row.reqs {
		if k != perKind {
			out[k] = v
		}
	}
	return out
}
