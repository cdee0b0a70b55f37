package predict

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// manifest is a package object as a repository of manifests holds it.
type manifest struct{ kind, name, ref string }

func configuration(name, ref string) manifest { return manifest{"Configuration", name, ref} }

func (m manifest) key() string { return strings.ToLower(m.kind) + "/" + m.name }

func (m manifest) yaml() string {
	return fmt.Sprintf("apiVersion: pkg.crossplane.io/v1\nkind: %s\nmetadata:\n  name: %s\nspec:\n  package: %s\n", m.kind, m.name, m.ref)
}

// writeManifests writes each manifest to a file of its own in a new
// directory and returns it.
func writeManifests(t *testing.T, ms []manifest) string {
	t.Helper()
	dir := t.TempDir()
	for i, m := range ms {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-%s.yaml", i, m.name)), []byte(m.yaml()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// step is one change a scenario makes: the manifests applied, and what the
// plan must say and Crossplane does, in the mode Crossplane runs.
type step struct {
	name      string
	manifests []manifest
	// blocking: the plan must exit 3. Otherwise it may exit 0 or 3: how a
	// plan judges an unhealthy outcome is not what these tests hold it to.
	blocking bool
	// changes are the resolver's installs and moves the plan must list.
	changes []change
	// stall is the repository the Lock stalls on ("" when it resolves).
	stall string
	// want is where Crossplane settles, as observed.
	want state
}

// run plans the step's manifests, applies them, waits until Crossplane
// settles and holds the plan's prediction and the step's expectations to
// what it did. A plan that is wrong fails the test; a cluster that does
// not settle as expected ends it, as the next steps build on it.
func (s *suite) run(t *testing.T, st step) {
	t.Helper()
	before, err := s.read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dir := writeManifests(t, st.manifests)
	r := s.x.Run("plan", "-f", dir, "-o", "json")
	t.Logf("%s: $ kubectl xpkg plan -f DIR -o json (exit %d)\n%s%s", st.name, r.ExitCode, r.Stdout, r.Stderr)
	predicted, planned := s.checkPlan(t, st, r, before)
	// The same plan, as people read it, ends alike.
	text := s.x.Run("plan", "-f", dir)
	t.Logf("%s: $ kubectl xpkg plan -f DIR (exit %d)\n%s%s", st.name, text.ExitCode, text.Stdout, text.Stderr)
	if text.ExitCode != r.ExitCode {
		t.Errorf("%s: plan -f exits %d as text and %d as JSON", st.name, text.ExitCode, r.ExitCode)
	}
	s.checkUpgradePlan(t, st, before)

	apply := s.x.Kubectl("apply", "--server-side", "--force-conflicts", "-f", dir)
	if apply.ExitCode != 0 {
		t.Fatalf("%s: kubectl apply: exit %d\n%s%s", st.name, apply.ExitCode, apply.Stdout, apply.Stderr)
	}
	// A plan that agrees with what Crossplane is known to do is waited
	// for as it is; one that does not has already failed the test, and
	// waiting for it would only take the whole bound.
	got, err := s.settle(st.want)
	t.Logf("%s: Crossplane %s %s settled at:\n%s", st.name, s.xp.Version, s.mode, got)
	if planned {
		if d := diff(predicted, got); d != "" {
			t.Errorf("%s: the plan predicted another state than the cluster's (want: predicted, got: the cluster):\n%s", st.name, d)
		}
	}
	if err != nil {
		t.Fatalf("%s: Crossplane did not settle as expected %s: %v\n%s", st.name, s.mode, err, s.xp.Logs(20))
	}
}

// checkUpgradePlan: a step that moves one installed package is planned
// by upgrade --dry-run as by plan -f: the same prediction, held to the
// same step (an older version is refused, for rollback, but predicted
// all the same).
func (s *suite) checkUpgradePlan(t *testing.T, st step, before state) {
	t.Helper()
	if len(st.manifests) != 1 {
		return
	}
	m := st.manifests[0]
	have, ok := before.Packages[m.key()]
	if !ok || have.Version == version(m.ref) {
		return
	}
	r := s.x.Run("upgrade", m.key(), version(m.ref), "--dry-run", "-o", "json")
	t.Logf("%s: $ kubectl xpkg upgrade %s %s --dry-run -o json (exit %d)\n%s%s", st.name, m.key(), version(m.ref), r.ExitCode, r.Stdout, r.Stderr)
	p, err := decodePlan(r)
	if err != nil {
		t.Errorf("%s: upgrade --dry-run: %v", st.name, err)
		return
	}
	if err := p.checkResolution(st); err != nil {
		t.Errorf("%s: upgrade --dry-run: %v", st.name, err)
	}
	if err := p.checkCrossplane(s.xp.Version, s.mode); err != nil {
		t.Errorf("%s: upgrade --dry-run: %v", st.name, err)
	}
}

// checkPlan holds the plan to the step: its exit status, the Crossplane
// it judged by, the resolver's moves, the stall, and the state it
// predicts, which it returns, when it predicts one.
func (s *suite) checkPlan(t *testing.T, st step, r *clitest.Result, before state) (state, bool) {
	t.Helper()
	switch {
	case st.blocking && r.ExitCode != 3:
		t.Errorf("%s: the plan exits %d, want 3 (blocking)", st.name, r.ExitCode)
	case !st.blocking && r.ExitCode != 0 && r.ExitCode != 3:
		t.Errorf("%s: the plan exits %d, want 0 or 3", st.name, r.ExitCode)
	}
	p, err := decodePlan(r)
	if err != nil {
		t.Errorf("%s: %v", st.name, err)
		return state{}, false
	}
	if p.Manifests != len(st.manifests) {
		t.Errorf("%s: the plan read %d manifests, want %d", st.name, p.Manifests, len(st.manifests))
	}
	if err := p.checkCrossplane(s.xp.Version, s.mode); err != nil {
		t.Errorf("%s: %v", st.name, err)
	}
	if err := p.checkResolution(st); err != nil {
		t.Errorf("%s: %v", st.name, err)
	}
	predicted := p.predict(before, st.manifests)
	if d := diff(st.want, predicted); d != "" {
		t.Errorf("%s: the plan predicts another state than Crossplane reaches %s (want: Crossplane, got: predicted):\n%s", st.name, s.mode, d)
	}
	return predicted, true
}
