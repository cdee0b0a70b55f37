// Command bench runs every benchmark of kubectl-xpkg and writes
// BENCHMARKS.md at the module root, printing the same tables on stdout:
//
//   - startup: `kubectl-xpkg --help` and `version --client` against a
//     hello-world Go binary built here with the same flags, the binary sizes,
//     and the costliest package initialisers (GODEBUG=inittrace=1);
//   - extract: hack/bench/extract (extract against fetch + gunzip);
//   - diff: hack/bench/diff (diff against GNU diff -u);
//   - describe: requests, round trips and time of `kubectl-xpkg describe`
//     on a package with 1 and 20 revisions, against a local API server it
//     starts in -env-dir and stops at the end;
//   - outdated: API and registry requests and time of `kubectl-xpkg
//     outdated` on 50 packages, and on one provider family of 150 members
//     (registry reads per repository, time per package), against a local
//     API server and registry;
//   - plans: time, peak RSS and requests of the upgrade, rollback and
//     uninstall plans (--dry-run -o json) on a provider of 100, 500 and
//     2,000 CRDs against one raw LIST of every CRD, their findings
//     checked, and how soon install --wait sees the last definition
//     established; a fresh local API server and registry per size;
//   - upgradeall: requests and time of `kubectl-xpkg upgrade --all` on 50
//     to 200 providers;
//   - doctor: requests, time and peak RSS of `kubectl-xpkg doctor` on a
//     healthy cluster of 50 providers / 500 CRDs to 200 providers /
//     2,000 CRDs / 1,000 revisions, against a raw read of every CRD;
//   - activation: requests by kind, time and peak RSS of `kubectl-xpkg
//     activation plan` on 200 and 2,000 MRDs (half active, their CRDs
//     made) and 20 and 200 Compositions, against a raw read of every MRD;
//   - plan: API requests by kind, registry requests by repository and
//     reference, time and peak RSS of `kubectl-xpkg plan -f` on 50 and
//     200 package manifests (unchanged, spec edits, upgrades) against as
//     many providers, a local API server and registry;
//   - mirror: time and peak RSS of `kubectl-xpkg mirror` copying a
//     closure of 4 two-platform packages (22 MiB, then 440 MiB)
//     between two local registries, against `crane copy` copying the same
//     4 images one by one, and a second run that finds them all there;
//   - fleet: `kubectl-xpkg get` and `outdated` on 20 contexts at once (one
//     local API server, 20 users) against each context alone, and the
//     registry requests of one context and of the 20.
//
// Every command runs as a separate process through a small measuring child
// (hack/bench/internal/measure) that reports its wall time, peak RSS and
// CPU time.
//
//	go run ./hack/bench -bin bin/kubectl-xpkg [-runs 7 | -quick] [-k8s-bin DIR]
//	go run ./hack/bench -bin bin/kubectl-xpkg -only startup,describe   (stdout only)
//	go run ./hack/bench -bin bin/kubectl-xpkg -only plans -plan-sizes 100 -runs 1
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/diffbench"
	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/extractbench"
	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// config is the command line.
type config struct {
	bin    string // kubectl-xpkg, absolute
	k8sBin string // kube-apiserver, etcd, kubectl
	// crossplaneCLI is the crossplane CLI startup is compared with.
	crossplaneCLI string
	envDir        string // the describe benchmark's environment
	out           string // "" writes nothing
	runs          int    // runs of each command
	only          []string
	tmp           string // scratch directory, removed at the end
	root          string // module root
	// The plans benchmark: provider sizes, runs from 1,000 CRDs, and the
	// longest a command may take.
	planSizes   []int
	planRuns    int
	planTimeout time.Duration
}

// startupRuns is how many times more often the startup commands run than
// the others: they take milliseconds, and the noise is relatively larger.
const startupRuns = 5

// section is one benchmark of the report.
type section struct {
	name, title string
	run         func(*config, *report) error
}

var sections = []section{
	{"startup", "Startup", runStartup},
	{"extract", "Extract", runExtract},
	{"diff", "Diff", runDiff},
	{"describe", "Describe round trips", runDescribe},
	{"outdated", "Outdated on 50 packages and on a provider family", runOutdated},
	{"plans", "Plans at cluster scale", runPlans},
	{"upgradeall", "upgrade --all at cluster scale", runUpgradeAll},
	{"doctor", "Doctor at cluster scale", runDoctor},
	{"activation", "activation plan on 2,000 MRDs and 200 Compositions", runActivation},
	{"plan", "plan -f on 50 and 200 package manifests", runPlanFiles},
	{"mirror", "mirror of a package closure against crane copy", runMirror},
	{"fleet", "get and outdated across 20 contexts", runFleet},
}

func main() {
	measure.ServeChild()
	extractbench.ServeFloor()
	log.SetFlags(0)
	log.SetPrefix("bench: ")
	cfg, err := parseFlags()
	if err != nil {
		log.Fatal(err)
	}
	if err := run(cfg); err != nil {
		log.Fatal(err)
	}
}

func parseFlags() (*config, error) {
	cfg := &config{}
	var err error
	flag.StringVar(&cfg.bin, "bin", "bin/kubectl-xpkg", "kubectl-xpkg binary to measure (make build: stripped, -trimpath)")
	flag.StringVar(&cfg.crossplaneCLI, "crossplane-cli", "", "the crossplane CLI whose --help startup is compared (default: hack/build-crossplane-cli.sh builds it)")
	flag.StringVar(&cfg.k8sBin, "k8s-bin", "", "directory with kube-apiserver, etcd and kubectl (default: hack/bin/k8s-*, see hack/build-k8s.sh)")
	flag.StringVar(&cfg.envDir, "env-dir", "_output/bench-env", "state directory of the describe benchmark's API server, relative to the module root")
	flag.StringVar(&cfg.out, "out", "BENCHMARKS.md", "report to write, relative to the module root (\"\" for none)")
	flag.IntVar(&cfg.runs, "runs", 7, fmt.Sprintf("runs of each command; the median is reported (startup: %d times as many)", startupRuns))
	quick := flag.Bool("quick", false, "3 runs of each command instead of -runs")
	only := flag.String("only", "", "comma-separated benchmarks to run (startup, extract, diff, describe, outdated, plans, upgradeall, doctor, activation, plan, mirror, fleet); the report is then printed, not written")
	planSizes := flag.String("plan-sizes", "100,500,2000", "plans: the provider sizes, in CRDs, comma-separated")
	flag.IntVar(&cfg.planRuns, "plan-runs", 3, "plans: runs of each command from 1,000 CRDs (at most -runs), where a slow plan takes minutes")
	flag.DurationVar(&cfg.planTimeout, "plan-timeout", 30*time.Minute, "plans: the longest one command (a plan, install --wait) may take")
	flag.Parse()
	if *quick {
		cfg.runs = 3
	}
	if cfg.runs < 1 || cfg.planRuns < 1 {
		return nil, fmt.Errorf("-runs and -plan-runs must be at least 1")
	}
	if cfg.planSizes, err = parseSizes(*planSizes); err != nil {
		return nil, err
	}
	for _, name := range strings.Split(*only, ",") {
		if name == "" {
			continue
		}
		if !slices.ContainsFunc(sections, func(s section) bool { return s.name == name }) {
			return nil, fmt.Errorf("-only: no benchmark %q", name)
		}
		cfg.only = append(cfg.only, name)
	}
	if cfg.bin, err = filepath.Abs(cfg.bin); err != nil {
		return nil, err
	}
	if _, err := os.Stat(cfg.bin); err != nil {
		return nil, fmt.Errorf("-bin: %w (make build)", err)
	}
	if cfg.k8sBin == "" {
		if cfg.k8sBin, err = testenv.DefaultBinDir(); err != nil {
			return nil, err
		}
	}
	if cfg.crossplaneCLI == "" && cfg.selected("startup") {
		root, err := testenv.ModuleRoot()
		if err != nil {
			return nil, err
		}
		build := exec.Command(filepath.Join(root, "hack/build-crossplane-cli.sh"))
		build.Stderr = os.Stderr
		out, err := build.Output()
		if err != nil {
			return nil, fmt.Errorf("hack/build-crossplane-cli.sh: %w", err)
		}
		cfg.crossplaneCLI = strings.TrimSpace(string(out))
	}
	return cfg, nil
}

// parseSizes reads -plan-sizes.
func parseSizes(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 10 {
			return nil, fmt.Errorf("-plan-sizes: %q is not a number of CRDs of at least 10", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// selected says whether the benchmark called name runs.
func (cfg *config) selected(name string) bool {
	return len(cfg.only) == 0 || slices.Contains(cfg.only, name)
}

func run(cfg *config) error {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return err
	}
	cfg.root, cfg.envDir = root, underRoot(root, cfg.envDir)
	if cfg.tmp, err = os.MkdirTemp("", "xpkg-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(cfg.tmp)
	if err := measure.UseLightChild(cfg.tmp); err != nil {
		return err
	}
	r := newReport(os.Stdout)
	if err := r.preamble(cfg); err != nil {
		return err
	}
	for _, s := range sections {
		if !cfg.selected(s.name) {
			continue
		}
		log.Printf("running the %s benchmark (%d runs)", s.name, cfg.runs)
		r.heading(s.title)
		if err := s.run(cfg, r); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	r.machineAfter()
	if cfg.out == "" || len(cfg.only) > 0 {
		return nil
	}
	out := underRoot(root, cfg.out)
	if err := os.WriteFile(out, r.bytes(), 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s", out)
	return nil
}

// underRoot is path, relative to the module root unless absolute.
func underRoot(root, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(root, path)
}

// runExtract runs the extract benchmark with the floor in a binary of
// hack/bench/extract, as that command alone measures it: the floor's peak
// RSS includes its binary's, and this one's is larger.
func runExtract(cfg *config, r *report) error {
	r.para(extractMethod)
	floor := filepath.Join(cfg.tmp, "bench-extract")
	c := exec.Command("go", "build", "-o", floor, "./hack/bench/extract")
	c.Dir = cfg.root
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("build hack/bench/extract: %v: %s", err, out)
	}
	return extractbench.Run(cfg.bin, floor, cfg.tmp, cfg.runs, r)
}

func runDiff(cfg *config, r *report) error {
	r.para(diffMethod)
	return diffbench.Run(cfg.bin, cfg.runs, r)
}
