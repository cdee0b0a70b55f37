package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

const describeMethod = "`kubectl-xpkg describe provider/NAME`" + ` against a local kube-apiserver
(with etcd and Crossplane's CRDs, on 127.0.0.1; no package manager runs: the
Provider, its revision and its Lock entry are written by the test package
manager of pkg/testing/pkgmanager, which is then stopped, and old inactive
revisions are added to reach 1 and 20). **Requests** are counted from the
` + "`-v=6`" + ` log, which has one line per request, as cmd/kubectl-xpkg/requestlog_test.go
counts them; discovery (/api, /apis and their group versions) is counted
apart: a cold run starts with an empty --cache-dir, a warm run reuses one.
**Round trips** are the longest chain of requests each sent after the
previous one's response, measured by a recording reverse proxy on 127.0.0.1
in front of the API server (a second run of the same command through it;
the proxy must see as many requests as the log shows). The figure is the
fewest seen over the runs, the chain the code requires; the median follows
when it differs, since on a loaded machine one of several concurrent
requests is at times sent only after another has returned, which lengthens
that run's chain. **Time** is the warm run's wall time, taking turns with ` + "`kubectl get providers.pkg.crossplane.io NAME -o name`" + `
(also warm), the yardstick of one read of one object: **ratio describe /
kubectl get**. The claims are that requests and round trips do not grow with
the number of revisions, and the ratio.`

// describedPackage is the Provider the benchmark describes.
const describedPackage = "bench-describe"

// sample is what one describe run shows: its requests from the -v=6 log
// and its round trips through the recorder.
type sample struct {
	total, discovery, trips int
	api                     []string // "VERB /path" of the non-discovery requests
}

// describeRow is the figures for one number of revisions.
type describeRow struct {
	revisions        int
	cold, warm       []sample
	describe, get, v measure.Result
}

// describer runs describe against the environment.
type describer struct {
	cfg  *config
	env  *testenv.Env
	rec  *recorder
	dirs int
	get  []request // kubectl get's requests, warm
}

func runDescribe(cfg *config, r *report) error {
	r.para(describeMethod)
	env, err := startEnv(cfg.envDir, cfg.k8sBin, true)
	if err != nil {
		return err
	}
	defer stopEnv(env)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		return err
	}
	if err := install(dyn, describedPackage); err != nil {
		return err
	}
	rec, err := startRecorder(env.Kubeconfig, filepath.Join(cfg.tmp, "proxy.kubeconfig"))
	if err != nil {
		return err
	}
	defer rec.Close()
	d := &describer{cfg: cfg, env: env, rec: rec}
	var rows []describeRow
	for _, n := range []int{1, 20} {
		if err := addRevisions(dyn, describedPackage, n); err != nil {
			return err
		}
		row, err := d.measure(n)
		if err != nil {
			return fmt.Errorf("%d revisions: %w", n, err)
		}
		rows = append(rows, row)
	}
	writeDescribe(r, rows, d.get, cfg.runs)
	return nil
}

// freshCache is a new, empty discovery cache directory.
func (d *describer) freshCache() string {
	d.dirs++
	return filepath.Join(d.cfg.tmp, "cache", fmt.Sprint(d.dirs))
}

// cmd runs a command and returns its stdout and stderr.
func cmd(bin string, args ...string) (string, string, error) {
	c := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return "", "", fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), stderr.String(), nil
}

func (d *describer) describeArgs(kubeconfig, cache string, extra ...string) []string {
	return append([]string{"describe", "provider/" + describedPackage, "--kubeconfig", kubeconfig, "--cache-dir", cache}, extra...)
}

func (d *describer) getArgs(cache string, extra ...string) []string {
	return append([]string{"get", "providers.pkg.crossplane.io", describedPackage, "-o", "name", "--kubeconfig", d.env.Kubeconfig, "--cache-dir", cache}, extra...)
}

// measure takes the samples and times of one number of revisions.
func (d *describer) measure(n int) (describeRow, error) {
	row := describeRow{revisions: n}
	warmDirect, warmProxy, warmGet := d.freshCache(), d.freshCache(), d.freshCache()
	out, _, err := cmd(d.cfg.bin, d.describeArgs(d.env.Kubeconfig, warmDirect)...)
	if err != nil {
		return row, err
	}
	if got := len(regexp.MustCompile(`(?m)^  `+describedPackage+`-`).FindAllString(out, -1)); got != n {
		return row, fmt.Errorf("describe lists %d revisions, want %d:\n%s", got, n, out)
	}
	if _, _, err := cmd(d.cfg.bin, d.describeArgs(d.rec.kubeconfig, warmProxy)...); err != nil {
		return row, err
	}
	if err := d.countGet(warmGet); err != nil {
		return row, err
	}
	for range d.cfg.runs {
		cold, err := d.sample(d.freshCache(), d.freshCache())
		if err != nil {
			return row, err
		}
		warm, err := d.sample(warmDirect, warmProxy)
		if err != nil {
			return row, err
		}
		row.cold, row.warm = append(row.cold, cold), append(row.warm, warm)
	}
	res, err := measure.Interleave(d.cfg.runs*startupRuns,
		measure.Command{Bin: d.cfg.bin, Args: d.describeArgs(d.env.Kubeconfig, warmDirect)},
		measure.Command{Bin: d.env.Kubectl, Args: d.getArgs(warmGet)},
		measure.Command{Bin: d.cfg.bin, Args: []string{"version", "--client"}})
	if err != nil {
		return row, err
	}
	row.describe, row.get, row.v = res[0], res[1], res[2]
	return row, nil
}

// countGet warms kubectl get's cache and counts its requests.
func (d *describer) countGet(cache string) error {
	if _, _, err := cmd(d.env.Kubectl, d.getArgs(cache)...); err != nil {
		return err
	}
	_, stderr, err := cmd(d.env.Kubectl, d.getArgs(cache, "-v=6")...)
	d.get = parseRequests(stderr)
	return err
}

// sample runs describe once directly, counting the requests it logs, and
// once through the recorder, measuring its round trips.
func (d *describer) sample(directCache, proxyCache string) (sample, error) {
	_, stderr, err := cmd(d.cfg.bin, d.describeArgs(d.env.Kubeconfig, directCache, "-v=6")...)
	if err != nil {
		return sample{}, err
	}
	reqs := parseRequests(stderr)
	s := sample{total: len(reqs)}
	for _, r := range reqs {
		if r.discovery {
			s.discovery++
		} else {
			s.api = append(s.api, r.verb+" "+r.path)
		}
	}
	d.rec.take()
	_, stderr, err = cmd(d.cfg.bin, d.describeArgs(d.rec.kubeconfig, proxyCache, "-v=6")...)
	if err != nil {
		return sample{}, err
	}
	spans := d.rec.take()
	if logged := len(parseRequests(stderr)); logged != len(spans) {
		return sample{}, fmt.Errorf("through the recorder describe logged %d requests, the recorder saw %d", logged, len(spans))
	}
	s.trips = roundTrips(spans)
	return s, nil
}

// values are the samples' field f, sorted.
func values(ss []sample, f func(sample) int) []int {
	v := make([]int, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	return v
}

// spread is the median of the samples' field f, with the range if it varied.
func spread(ss []sample, f func(sample) int) string {
	v := values(ss, f)
	if v[0] == v[len(v)-1] {
		return fmt.Sprint(v[0])
	}
	return fmt.Sprintf("%d (%d–%d)", v[len(v)/2], v[0], v[len(v)-1])
}

// fewest is the smallest of the samples' field f, with the median if it
// is larger.
func fewest(ss []sample, f func(sample) int) string {
	v := values(ss, f)
	if m := v[len(v)/2]; m != v[0] {
		return fmt.Sprintf("%d (median %d)", v[0], m)
	}
	return fmt.Sprint(v[0])
}

// writeDescribe writes the requests table, the verdict and the times.
// The fields of a sample the tables show.
func total(s sample) int { return s.total }
func disc(s sample) int  { return s.discovery }
func trips(s sample) int { return s.trips }

// sameShape says whether two rows made as many requests (medians, ranges)
// in as few round trips, cold and warm.
func sameShape(a, b describeRow) bool {
	for _, f := range []func(sample) int{total, disc} {
		if spread(a.cold, f) != spread(b.cold, f) || spread(a.warm, f) != spread(b.warm, f) {
			return false
		}
	}
	return values(a.cold, trips)[0] == values(b.cold, trips)[0] && values(a.warm, trips)[0] == values(b.warm, trips)[0]
}

func writeDescribe(r *report, rows []describeRow, get []request, runs int) {
	r.printf("%d runs per row, cold and warm; requests: median (range if they varied); round trips: fewest (median).\n\n", runs)
	r.printf("| revisions | requests, cold cache | of which discovery | requests, warm cache | of which discovery | round trips, cold | round trips, warm |\n|---|---|---|---|---|---|---|\n")
	for _, w := range rows {
		r.printf("| %d | %s | %s | %s | %s | %s | %s |\n", w.revisions, spread(w.cold, total), spread(w.cold, disc),
			spread(w.warm, total), spread(w.warm, disc), fewest(w.cold, trips), fewest(w.warm, trips))
	}
	first, last := rows[0], rows[len(rows)-1]
	paths := slices.Clone(last.warm[0].api)
	slices.Sort(paths)
	r.printf("\nThe requests besides discovery, with %d revisions: %s.\n\n", last.revisions, strings.Join(paths, ", "))
	if sameShape(first, last) {
		r.para(fmt.Sprintf("Requests and round trips are the same with %d and %d revisions: they do not grow with the revisions.", first.revisions, last.revisions))
	} else {
		r.para(fmt.Sprintf("Requests or round trips differ between %d and %d revisions: see the table.", first.revisions, last.revisions))
	}
	api, discovery := countAPI(get)
	r.printf("Warm cache, %d runs each, taking turns; warm, `kubectl get` makes %d request(s) and %d discovery request(s).\n\n", runs*startupRuns, api, discovery)
	r.printf("| revisions | describe (median) | describe peak RSS | kubectl get (median) | describe / kubectl get | kubectl-xpkg version --client (median) |\n|---|---|---|---|---|---|\n")
	for _, w := range rows {
		r.printf("| %d | %s | %s | %s | %s | %s |\n", w.revisions, ms(w.describe.Wall), rssOf(w.describe.RSS, w.describe.Floor),
			ms(w.get.Wall), ratio(w.describe.Wall, w.get.Wall), ms(w.v.Wall))
	}
}
