package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
)

const planFilesMethod = "`kubectl-xpkg plan -f DIR`" + ` (the set of package manifests a GitOps pull request
holds) against a cluster of 50 and then 200 providers, in one local
kube-apiserver (no Crossplane runs: plan only reads) grown from size to
size with the doctor benchmark's population code: each provider
(revisionHistoryLimit: 4) runs v1.5.0 of its own repository, with its
revisions (every other one an older, inactive one too), two CRDs of about
50 KB owned by them, its status and its Lock entry. The references point
at a local registry (CNCF distribution, htpasswd authentication) through
a counting reverse proxy; only the repositories of the providers a
manifest upgrades hold images (v1.5.0 and v1.6.0: the meta object and the
provider's two CRDs, v1.6.0's with changed descriptions). At each size
three directories of manifests, one file per package, each naming every
package: **unchanged** (every manifest as the cluster has it),
**edits** (5 at 50 packages, 10 at 200, set revisionHistoryLimit: 6) and
**upgrades+edits** (as many again move spec.package to v1.6.0). **Each
run is checked first**: exit status 0 (nothing blocks), the manifests
counted, each upgrade and edit planned as one and the rest unchanged.
**API requests** by verb and resource through a counting proxy in front
of the API server (discovery cached, not counted); **registry requests**
by repository and reference through the registry's proxy. **Time** and
peak RSS: the median over the runs, against the API server directly
(the registry still through its proxy).
**Goal (the issue's): requests to the API server that do not grow per
manifest beyond one read of each kind; each registry read once per
repository.**`

// planFilesRow is one variant of one size as measured.
type planFilesRow struct {
	size    planFilesSize
	variant planFilesVariant
	apiCounts
	// initial counts the WATCHes that stream the initial list
	// (sendInitialEvents: client-go's WatchList), no LIST before them.
	initial    int
	reg        registryReads
	findings   map[string]int // "severity rule"
	wall       time.Duration
	rss, floor int64
}

func runPlanFiles(cfg *config, r *report) error {
	r.para(planFilesMethod)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	_, ts, err := loadTemplates(cfg.root)
	if err != nil {
		return err
	}
	env, err := startEnv(cfg.envDir+"-planfiles", cfg.k8sBin, false)
	if err != nil {
		return err
	}
	counter, err := startRegCounter(env.Registry.Host)
	if err != nil {
		stopEnv(env)
		return err
	}
	defer counter.srv.Close()
	shape := popShape{prefix: planFilesSet, host: counter.host(), crdsEach: planFilesCRDsEach, set: planFilesSet}
	dc, err := newPopulation(env, ts, shape)
	if err != nil {
		return err
	}
	defer dc.stop()
	// The plugin authenticates to the proxy with the registry's user.
	docker := filepath.Join(cfg.tmp, "planfiles-docker")
	if err := writeDockerConfig(docker, counter.host(), env.Registry.Username, env.Registry.Password); err != nil {
		return err
	}
	os.Setenv("DOCKER_CONFIG", docker)
	auth := remote.WithAuth(&authn.Basic{Username: env.Registry.Username, Password: env.Registry.Password})
	if err := dc.pushPackages(ctx, env.Registry.Host, auth); err != nil {
		return err
	}
	rec, err := startRecorder(env.Kubeconfig, filepath.Join(cfg.tmp, "planfiles-proxy.kubeconfig"))
	if err != nil {
		return err
	}
	defer rec.Close()
	var rows []*planFilesRow
	for _, s := range planFilesSizes {
		start := time.Now()
		if err := dc.grow(ctx, doctorSize{packages: s.packages}); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		log.Printf("plan -f, %s: written and established in %s", s, time.Since(start).Round(100*time.Millisecond))
		for _, v := range s.variants() {
			row, err := dc.measurePlan(cfg, rec, counter, s, v)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", s, v.name, err)
			}
			rows = append(rows, row)
		}
	}
	writePlanFiles(r, cfg, rows)
	return nil
}

func planFilesArgs(dir, kubeconfig, cache string) []string {
	return []string{"plan", "-f", dir, "--kubeconfig", kubeconfig, "--cache-dir", cache, "-o", "json"}
}

// measurePlan writes the variant's manifests, checks the plan, counts one
// run's requests through both proxies, then times it.
func (dc *doctorCluster) measurePlan(cfg *config, rec *recorder, counter *regCounter, s planFilesSize, v planFilesVariant) (*planFilesRow, error) {
	row := &planFilesRow{size: s, variant: v, apiCounts: newAPICounts()}
	dir := filepath.Join(cfg.tmp, fmt.Sprintf("planfiles-%d-%s", s.packages, v.name))
	if err := dc.writeManifests(dir, s, v); err != nil {
		return nil, err
	}
	proxied := planFilesArgs(dir, rec.kubeconfig, filepath.Join(cfg.tmp, "planfiles-cache-proxy"))
	direct := planFilesArgs(dir, dc.env.Kubeconfig, filepath.Join(cfg.tmp, "planfiles-cache"))
	// The first runs fill the discovery caches.
	for _, args := range [][]string{proxied, direct} {
		if _, err := checkPlanFiles(cfg.bin, args, s, v); err != nil {
			return nil, err
		}
	}
	rec.take()
	counter.take()
	findings, err := checkPlanFiles(cfg.bin, proxied, s, v)
	if err != nil {
		return nil, err
	}
	row.findings = findings
	for _, sp := range rec.take() {
		row.count(sp)
	}
	row.reg = readRegistry(counter.take())
	log.Printf("plan -f, %s, %s: measuring %d runs", s, v.name, cfg.runs)
	res, err := measure.Interleave(cfg.runs, measure.Command{Bin: cfg.bin, Args: direct})
	if err != nil {
		return nil, err
	}
	row.wall, row.rss, row.floor = res[0].Wall, res[0].RSS, res[0].Floor
	return row, nil
}

// count adds one API request to the row.
func (row *planFilesRow) count(sp span) {
	if _, _, q, ok := row.add(sp); ok && sp.verb == "WATCH" && q.Get("sendInitialEvents") == "true" {
		row.initial++
	}
}

// checkPlanFiles runs plan -f and fails unless it exits 0 with the
// variant's plans: each upgrade an upgrade of the provider to v1.6.0,
// each edit an update, the rest unchanged, nothing blocking, nothing
// absent. It returns the findings by severity and rule.
func checkPlanFiles(bin string, args []string, s planFilesSize, v planFilesVariant) (map[string]int, error) {
	out, _, err := cmd(bin, args...)
	if err != nil {
		return nil, err
	}
	var fp struct {
		Manifests int
		Plans     []struct {
			Action, Package, To string
			Findings            []struct{ Rule, Severity string }
		}
		Unchanged, Absent []string
	}
	if err := json.Unmarshal([]byte(out), &fp); err != nil {
		return nil, fmt.Errorf("plan -f -o json: %w", err)
	}
	actions, findings := map[string]int{}, map[string]int{}
	for _, p := range fp.Plans {
		actions[p.Action]++
		if p.Action == "upgrade" && !strings.HasSuffix(p.To, fmt.Sprintf(":v1.%d.0", planFilesTo)) {
			return nil, fmt.Errorf("%s is planned to %s, want v1.%d.0", p.Package, p.To, planFilesTo)
		}
		for _, f := range p.Findings {
			if f.Severity == "blocking" {
				return nil, fmt.Errorf("%s: a blocking finding, %s", p.Package, f.Rule)
			}
			findings[f.Severity+" "+f.Rule]++
		}
	}
	changed := v.upgrades + v.edits
	if fp.Manifests != s.packages || actions["upgrade"] != v.upgrades || actions["update"] != v.edits ||
		len(fp.Plans) != changed || len(fp.Unchanged) != s.packages-changed || len(fp.Absent) != 0 {
		return nil, fmt.Errorf("plan -f: %d manifests, plans %v, %d unchanged, absent %v; want %d manifests, %d upgrades, %d updates, %d unchanged",
			fp.Manifests, actions, len(fp.Unchanged), fp.Absent, s.packages, v.upgrades, v.edits, s.packages-changed)
	}
	return findings, nil
}
