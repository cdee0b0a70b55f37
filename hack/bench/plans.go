package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
)

const plansMethod = "`kubectl-xpkg upgrade P v2.0.0 --dry-run -o json`, `rollback P --dry-run -o json` and `uninstall P --dry-run -o json`" + ` on
a provider of 100, 500 and 2,000 CRDs (provider-aws v0.58.0's 100 largest
CRDs, about 50 KB each, copied into as many API groups as it takes: 109 MB
of YAML at 2,000), each size in a fresh local kube-apiserver and registry,
against one read of every CRD taking turns with the plans: ` + "`kubectl get --raw /apis/apiextensions.k8s.io/v1/customresourcedefinitions`" + `
(output to /dev/null). Both versions of the provider are pushed to the
registry. v2.0.0 changes the schema description of every CRD; drops
v1alpha1 of a CRD whose status.storedVersions lists it; drops a kind that
has one live object, among all the provider's kinds; adds a kind; adds a
version to another CRD, as its storage version. An installed
configuration depends on the provider at ` + "`" + planConstraint + "`" + ` (in the Lock). No
package manager runs: the benchmark writes what Crossplane's would (the
packages and their status, the revisions with status.objectRefs naming
every CRD, the CRDs owned by the revision and established, the Lock).
Upgrade and uninstall are measured with v1.0.0 running; then the cluster
moves to v2.0.0 (a second, active revision, v2.0.0's CRDs applied, the
dropped kind's CRD and object left, an object of the added kind, the new
storage version in its CRD's storedVersions) and rollback, back to v1.0.0,
is measured. **Each plan is checked before it is timed**, and the
benchmark fails when a finding is missing, extra or wrong (other rules,
such as breaking-change, are not checked): upgrade must find
stored-version-dropped for the dropped v1alpha1 and for the dropped kind
(stored at its storage version), live-objects for the one object of the
dropped kind, and dependent-constraint for the configuration; rollback
stored-version-dropped for the added storage version and the added kind,
live-objects for the added kind's object, and downgrade; uninstall
dependents (the configuration) and live-objects for the one object among
all the kinds; each exits 3. The uninstall of the configuration (no
dependents, no CRDs) must find nothing. **Requests** are counted from each
plan's ` + "`-v=6`" + ` log, discovery cached, the requests that read CRDs apart.
**--wait**: ` + "`kubectl-xpkg install provider REF NAME --wait`" + ` of another provider of
as many CRDs, in a fresh environment again, while the benchmark, as the package manager, creates its
revision, its CRDs, the revision's objectRefs, its Lock entry and the
package's Installed and Healthy conditions, in that order, and watches the
CRDs: the figure is the time from the last CRD seen Established to the
plugin's exit (which includes the plugin's check that the package stays
ready, 1 s in this version); the requests are those after the package's
creation. Set-up times go to stderr.`

// planRow is what was measured at one size.
type planRow struct {
	n    int
	cmds []*planCommand // upgrade, uninstall, rollback
	wait waitResult
	// emptyNull is set when the empty plan printed "findings": null.
	emptyNull bool
}

// planMeasurer measures the plans of one size.
type planMeasurer struct {
	cfg        *config
	pc         *planCluster
	timeoutBin string
	runs       int
}

func runPlans(cfg *config, r *report) error {
	r.para(plansMethod)
	timeoutBin, err := exec.LookPath("timeout")
	if err != nil {
		return fmt.Errorf("coreutils timeout is not on PATH: %w", err)
	}
	meta, ts, err := loadTemplates(cfg.root)
	if err != nil {
		return err
	}
	defer restoreEnv("DOCKER_CONFIG")()
	var rows []*planRow
	for _, n := range cfg.planSizes {
		row, err := measureSize(cfg, timeoutBin, meta, ts, n)
		if err != nil {
			return fmt.Errorf("%d CRDs: %w", n, err)
		}
		rows = append(rows, row)
	}
	writePlans(r, cfg, rows)
	return nil
}

// runsAt is how many times each plan runs at n CRDs: -plan-runs at most
// from 1,000 CRDs, where a slow plan takes minutes.
func runsAt(cfg *config, n int) int {
	if n >= 1000 {
		return min(cfg.runs, cfg.planRuns)
	}
	return cfg.runs
}

func restoreEnv(key string) func() {
	old, had := os.LookupEnv(key)
	return func() {
		if had {
			os.Setenv(key, old)
		} else {
			os.Unsetenv(key)
		}
	}
}

// measureSize checks and measures the plans of a provider of n CRDs,
// then the wait, each in a fresh environment: an API server holding both
// providers' CRDs would need twice the memory.
func measureSize(cfg *config, timeoutBin string, meta []byte, ts []*planTemplate, n int) (*planRow, error) {
	p, err := generate(ts, n, "aws")
	if err != nil {
		return nil, err
	}
	row := &planRow{n: n}
	m := &planMeasurer{cfg: cfg, timeoutBin: timeoutBin, runs: runsAt(cfg, n)}
	if err := m.withCluster(n, func() error { return m.measurePlans(row, meta, p) }); err != nil {
		return nil, err
	}
	err = m.withCluster(n, func() (err error) {
		if err := m.warm(); err != nil {
			return err
		}
		row.wait, err = m.measureWait(context.Background(), meta, ts, n)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("--wait: %w", err)
	}
	return row, nil
}

// withCluster runs f with a fresh environment in m.pc, then stops it.
func (m *planMeasurer) withCluster(n int, f func() error) error {
	start := time.Now()
	pc, err := startCluster(m.cfg.envDir+"-plans", m.cfg.k8sBin)
	if err != nil {
		return err
	}
	defer pc.stop()
	describeSetup(n, "environment started", start)
	m.pc = pc
	return f()
}

// measurePlans installs v1, checks and measures upgrade and uninstall,
// moves to v2, checks and measures rollback.
func (m *planMeasurer) measurePlans(row *planRow, meta []byte, p *planProvider) (err error) {
	pc, n, ctx := m.pc, row.n, context.Background()
	start := time.Now()
	if err := pc.pushPlans(meta, p); err != nil {
		return err
	}
	describeSetup(n, "both versions pushed", start)
	start = time.Now()
	if err := pc.installV1(ctx); err != nil {
		return err
	}
	describeSetup(n, "v1.0.0 installed, its CRDs established", start)
	up, un := pc.upgradeCommand(), pc.uninstallCommand()
	if err := m.warm(); err != nil {
		return err
	}
	if row.emptyNull, err = m.checkEmpty(); err != nil {
		return err
	}
	if err := m.phase(n, up, un); err != nil {
		return err
	}
	start = time.Now()
	if err := pc.switchToV2(ctx); err != nil {
		return err
	}
	describeSetup(n, "moved to v2.0.0", start)
	rb := pc.rollbackCommand()
	if err := m.phase(n, rb); err != nil {
		return err
	}
	row.cmds = []*planCommand{up, un, rb}
	return nil
}

// flags are the plugin's cluster flags: the environment, a discovery
// cache of its own.
func (pc *planCluster) flags() []string {
	return []string{"--kubeconfig", pc.env.Kubeconfig, "--cache-dir", pc.cache}
}

// warm fills the discovery cache, so that the requests counted are the
// plans' own.
func (m *planMeasurer) warm() error {
	_, stderr, code, err := runTimed(m.cfg.planTimeout, m.cfg.bin, append([]string{"get"}, m.pc.flags()...)...)
	if err == nil && code != 0 {
		err = fmt.Errorf("kubectl-xpkg get: exit status %d: %s", code, lastLines(stderr, 20))
	}
	return err
}

// phase checks the plans, then measures them taking turns with the raw
// LIST of every CRD.
func (m *planMeasurer) phase(n int, cmds ...*planCommand) error {
	for _, c := range cmds {
		start := time.Now()
		if err := c.check(m.cfg.bin, m.cfg.planTimeout, m.pc.flags()); err != nil {
			return err
		}
		if err := logsCRDReads(c.reqs, "kubectl-xpkg "+c.label); err != nil {
			return err
		}
		log.Printf("plans, %d CRDs: %s checked (%s): %s", n, c.label, time.Since(start).Round(time.Millisecond), summary(c.found))
	}
	list := timed(m.timeoutBin, m.cfg.planTimeout, nil, m.pc.env.Kubectl,
		"get", "--raw", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "--kubeconfig", m.pc.env.Kubeconfig)
	measured := []measure.Command{list}
	for _, c := range cmds {
		measured = append(measured, timed(m.timeoutBin, m.cfg.planTimeout, []int{planRefused}, m.cfg.bin, append(slices.Clone(c.args), m.pc.flags()...)...))
	}
	log.Printf("plans, %d CRDs: measuring %d runs", n, m.runs)
	res, err := measure.Interleave(m.runs, measured...)
	if err != nil {
		return timeoutError(err, m.cfg.planTimeout)
	}
	for i, c := range cmds {
		c.res, c.list = res[i+1], res[0]
	}
	return nil
}

// checkEmpty checks the plan of an uninstall that finds nothing and says
// whether it printed "findings": null.
func (m *planMeasurer) checkEmpty() (bool, error) {
	c := &planCommand{args: []string{"uninstall", "configuration/" + planConfigName, "--dry-run", "-o", "json"}}
	if err := c.check(m.cfg.bin, m.cfg.planTimeout, m.pc.flags()); err != nil {
		return false, err
	}
	if len(c.found) > 0 {
		return false, fmt.Errorf("the uninstall of configuration/%s, which nothing depends on and which defines no CRD, found %v", planConfigName, c.found)
	}
	return c.null, nil
}

func (pc *planCluster) upgradeCommand() *planCommand {
	return &planCommand{label: "upgrade", args: []string{"upgrade", "provider/" + planProviderName, planVersions[1], "--dry-run", "-o", "json"},
		want: planExpect{to: pc.ref(1), exit: planRefused, rules: map[string][]finding{
			// The dropped kind's objects are stored too: at its storage version.
			"stored-version-dropped": {
				{Rule: "stored-version-dropped", Severity: "blocking", Object: pc.p.upDropped.Name()},
				{Rule: "stored-version-dropped", Severity: "blocking", Object: pc.p.gone.Name()},
			},
			"live-objects":         {{Rule: "live-objects", Severity: "blocking", Object: pc.p.gone.Name(), Count: one(1)}},
			"dependent-constraint": {{Rule: "dependent-constraint", Severity: "blocking", Object: "configuration/" + planConfigName}},
			"downgrade":            nil,
		}}}
}

func (pc *planCluster) rollbackCommand() *planCommand {
	return &planCommand{label: "rollback", args: []string{"rollback", "provider/" + planProviderName, "--dry-run", "-o", "json"},
		want: planExpect{to: pc.ref(0), exit: planRefused, rules: map[string][]finding{
			"stored-version-dropped": {
				{Rule: "stored-version-dropped", Severity: "blocking", Object: pc.p.downDropped.Name()},
				{Rule: "stored-version-dropped", Severity: "blocking", Object: pc.p.added.Name()},
			},
			"live-objects":         {{Rule: "live-objects", Severity: "blocking", Object: pc.p.added.Name(), Count: one(1)}},
			"downgrade":            {{Rule: "downgrade", Severity: "info"}},
			"dependent-constraint": nil,
		}}}
}

func (pc *planCluster) uninstallCommand() *planCommand {
	return &planCommand{label: "uninstall", args: []string{"uninstall", "provider/" + planProviderName, "--dry-run", "-o", "json"},
		want: planExpect{exit: planRefused, rules: map[string][]finding{
			"dependents":   {{Rule: "dependents", Severity: "blocking", Object: "provider/" + planProviderName}},
			"live-objects": {{Rule: "live-objects", Severity: "blocking", Object: pc.p.gone.Name(), Count: one(1)}},
		}}}
}
