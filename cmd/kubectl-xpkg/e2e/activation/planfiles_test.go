package activation

import (
	"strings"
	"testing"
)

// TestPlanFilesChecksCompositions: plan -f of a Git checkout whose
// Composition composes the snapshot kind, Inactive here (no policy of the
// cluster names it), warns that its composite resources would not become
// ready (inactive-composed-kind); the same checkout with a policy that
// activates it does not; a kind nothing defines is named too.
func TestPlanFilesChecksCompositions(t *testing.T) {
	s := begin(t)
	snapshots := mrdName("Snapshot", storage)
	comp := composition("gitops-snapshot", "XGitopsBackup", ptStep(storage, "Snapshot"))
	dir := writeFiles(t, map[string]string{"snapshot.yaml": comp})
	r := s.run(t, "plan", "-f", dir)
	out := r.Stdout + r.Stderr
	if r.ExitCode != 0 {
		t.Errorf("plan -f exited %d, want 0 (a warning)", r.ExitCode)
	}
	contains(t, "plan -f", out, "[inactive-composed-kind]", "Composition gitops-snapshot composes", snapshots, "is Inactive")

	withPolicy := writeFiles(t, map[string]string{"snapshot.yaml": comp + "---\n" + mrap("gitops-activations", snapshots)})
	r = s.run(t, "plan", "-f", withPolicy)
	if out := r.Stdout + r.Stderr; strings.Contains(out, "[inactive-composed-kind]") {
		t.Errorf("plan -f with a policy that activates the kind still warns:\n%s", out)
	}

	missing := writeFiles(t, map[string]string{"queue.yaml": composition("gitops-queue", "XQueue", ptStep("queue.acme.example.org", "Queue"))})
	r = s.run(t, "plan", "-f", missing)
	contains(t, "plan -f of an undefined kind", r.Stdout+r.Stderr, "[inactive-composed-kind]", "Queue.queue.acme.example.org", "which no ManagedResourceDefinition nor CRD in the cluster defines")
}
