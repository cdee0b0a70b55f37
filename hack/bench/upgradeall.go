package main

import (
	"context"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/pkgmanager"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

const upgradeAllMethod = "`kubectl-xpkg upgrade --all` carried out (not a dry run: every step is planned, planned " + `
again just before it runs, and its PATCH sent) on a cluster of 50, 100 and 200
providers, each from its own repository on a local registry (CNCF
distribution, htpasswd authentication, on 127.0.0.1) holding two versions of
a small package, v1.0.0 and v1.1.0. The providers are installed at v1.0.0
through the test package manager (a revision each, the status, the Lock),
which then stops, so that nothing else writes while the plugin runs; between
runs the benchmark points them back at v1.0.0. **Requests and response
bytes** are counted by a reverse proxy on 127.0.0.1 in front of the API
server (discovery cached; a WATCH counts the bytes it delivered). **Time**:
the real run taking turns with ` + "`upgrade --all --dry-run`" + ` (the combined plan alone),
wall times as medians. **Goal: requests and bytes that grow linearly with
the packages**, not with their square (every step reading every package
and the whole Lock again, as before).`

// upgradeAllSizes are the numbers of providers, in the order measured
// (each adds to the last).
var upgradeAllSizes = []int{50, 100, 200}

// upgradeAllRow is one size's figures.
type upgradeAllRow struct {
	n                 int
	real, dry         time.Duration
	requests          int
	verbs             map[string]int
	bytes, dryBytes   int64
	dryRequests       int
	upgraded, planned int
}

func runUpgradeAll(cfg *config, r *report) error {
	r.para(upgradeAllMethod)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	env, err := startEnv(cfg.envDir+"-upgradeall", cfg.k8sBin, false)
	if err != nil {
		return err
	}
	defer stopEnv(env)
	if err := writeDockerConfig(filepath.Join(cfg.tmp, "docker-upgradeall"), env.Registry.Host, env.Registry.Username, env.Registry.Password); err != nil {
		return err
	}
	os.Setenv("DOCKER_CONFIG", filepath.Join(cfg.tmp, "docker-upgradeall"))
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		return err
	}
	rec, err := startRecorder(env.Kubeconfig, filepath.Join(cfg.tmp, "upgradeall-proxy.kubeconfig"))
	if err != nil {
		return err
	}
	defer rec.Close()
	auth := remote.WithAuth(&authn.Basic{Username: env.Registry.Username, Password: env.Registry.Password})
	cache := filepath.Join(cfg.tmp, "upgradeall-cache")
	var rows []upgradeAllRow
	have := 0
	for _, n := range upgradeAllSizes {
		log.Printf("upgrade --all: installing providers %d to %d", have, n)
		if err := installProviders(ctx, dyn, env.Registry.Host, auth, have, n); err != nil {
			return err
		}
		have = n
		row, err := measureUpgradeAll(cfg, dyn, rec, cache, n)
		if err != nil {
			return fmt.Errorf("%d providers: %w", n, err)
		}
		rows = append(rows, row)
	}
	r.printf("%d runs of each command at each size, taking turns; requests and bytes from one more run of each.\n\n", cfg.runs)
	r.printf("| providers | upgrade --all (median) | --dry-run (median) | real / dry run | requests | per provider | by verb | response bytes | per provider | dry run: requests, bytes |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range rows {
		var verbs []string
		for _, v := range slices.Sorted(maps.Keys(w.verbs)) {
			verbs = append(verbs, fmt.Sprintf("%s %d", v, w.verbs[v]))
		}
		r.printf("| %d | %s | %s | %s | %d | %.1f | %s | %s | %s | %d, %s |\n", w.n, ms(w.real), ms(w.dry), ratio(w.real, w.dry),
			w.requests, float64(w.requests)/float64(w.n), strings.Join(verbs, ", "), kib(w.bytes), kib(w.bytes/int64(w.n)), w.dryRequests, kib(w.dryBytes))
	}
	first, last := rows[0], rows[len(rows)-1]
	grow := float64(last.n) / float64(first.n)
	reqs, bytes := float64(last.requests)/float64(first.requests), float64(last.bytes)/float64(first.bytes)
	goal := "met"
	if reqs > grow*1.1 || bytes > grow*1.1 {
		goal = "not met"
	}
	r.printf("\nFrom %d to %d providers (%.0f×) the requests grow %.2f× and the response bytes %.2f× (goal, at most %.1f× each: %s); the real run's time grows %.2f×.\n\n",
		first.n, last.n, grow, reqs, bytes, grow*1.1, goal, last.real.Seconds()/first.real.Seconds())
	return nil
}

func kib(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/1024) }

// measureUpgradeAll counts one real run and one dry run through the proxy,
// then times both, taking turns, pointing the providers back at v1.0.0
// after each real run.
func measureUpgradeAll(cfg *config, dyn dynamic.Interface, rec *recorder, cache string, n int) (upgradeAllRow, error) {
	row := upgradeAllRow{n: n, verbs: map[string]int{}}
	args := []string{"upgrade", "--all", "--kubeconfig", rec.kubeconfig, "--cache-dir", cache}
	dry := append(slices.Clone(args), "--dry-run")
	// Warm the discovery cache; check the plan.
	out, _, err := cmd(cfg.bin, dry...)
	if err != nil {
		return row, err
	}
	if row.planned = strings.Count(out, "Plan: upgrade "); !strings.Contains(out, fmt.Sprintf("Plan: upgrade --all: %d packages", n)) {
		return row, fmt.Errorf("the dry run does not plan %d packages: %.300s", n, out)
	}
	rec.take()
	if _, _, err := cmd(cfg.bin, dry...); err != nil {
		return row, err
	}
	// The proxy records a WATCH when its handler returns, a moment after
	// the plugin closed it.
	time.Sleep(time.Second)
	for _, s := range rec.take() {
		row.dryRequests++
		row.dryBytes += s.bytes
	}
	out, _, err = cmd(cfg.bin, append(slices.Clone(args), "-v=6")...)
	if err != nil {
		return row, err
	}
	if row.upgraded = strings.Count(out, " upgraded from v1.0.0 to v1.1.0"); row.upgraded != n {
		return row, fmt.Errorf("upgrade --all upgraded %d of %d providers: %.300s", row.upgraded, n, out)
	}
	time.Sleep(time.Second)
	for _, s := range rec.take() {
		row.requests++
		row.bytes += s.bytes
		row.verbs[s.verb]++
	}
	var reals, drys []time.Duration
	for range cfg.runs {
		if err := pointBack(dyn, n); err != nil {
			return row, err
		}
		start := time.Now()
		if _, _, err := cmd(cfg.bin, dry...); err != nil {
			return row, err
		}
		drys = append(drys, time.Since(start))
		start = time.Now()
		if _, _, err := cmd(cfg.bin, args...); err != nil {
			return row, err
		}
		reals = append(reals, time.Since(start))
	}
	rec.take()
	row.real, row.dry = medianDuration(reals), medianDuration(drys)
	return row, pointBack(dyn, n)
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func benchProvider(i int) string { return fmt.Sprintf("bench-upgrade-%03d", i) }

// installProviders pushes v1.0.0 and v1.1.0 of providers from..to-1 and
// installs them at v1.0.0 through the test package manager.
func installProviders(ctx context.Context, dyn dynamic.Interface, registry string, auth remote.Option, from, to int) error {
	mgr, err := pkgmanager.Start(dyn)
	if err != nil {
		return err
	}
	defer mgr.Stop()
	for i := from; i < to; i++ {
		name := benchProvider(i)
		for _, tag := range []string{"v1.0.0", "v1.1.0"} {
			img, err := fixture.Image(fmt.Appendf(nil, "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: %s\n  annotations:\n    version: %s\n", name, tag))
			if err != nil {
				return err
			}
			if err := fixture.Push(registry+"/bench/"+name+":"+tag, img, auth, remote.WithContext(ctx)); err != nil {
				return err
			}
		}
		mgr.Manage(name, pkgmanager.Behaviour{})
		p := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"package": registry + "/bench/" + name + ":v1.0.0"},
		}}
		if _, err := dyn.Resource(providersGVR).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	// Every provider answered: a current revision, and its Lock entry.
	for {
		l, err := dyn.Resource(providersGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		answered := 0
		for _, u := range l.Items {
			if rev, _, _ := unstructured.NestedString(u.Object, "status", "currentRevision"); rev != "" {
				answered++
			}
		}
		lock, err := dyn.Resource(locksGVR).Get(ctx, "lock", metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		entries := 0
		if lock != nil {
			pkgs, _, _ := unstructured.NestedSlice(lock.Object, "packages")
			entries = len(pkgs)
		}
		if answered == to && entries == to {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d providers answered, %d Lock entries", answered, to, entries)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// pointBack points providers 0..n-1 at v1.0.0 again.
func pointBack(dyn dynamic.Interface, n int) error {
	ctx := context.Background()
	for i := range n {
		name := benchProvider(i)
		u, err := dyn.Resource(providersGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ref, _, _ := unstructured.NestedString(u.Object, "spec", "package")
		back := strings.Replace(ref, ":v1.1.0", ":v1.0.0", 1)
		if back == ref {
			continue
		}
		patch := fmt.Appendf(nil, `{"spec":{"package":%q}}`, back)
		if _, err := dyn.Resource(providersGVR).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}
