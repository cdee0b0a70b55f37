package activation

import (
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/cmd/kubectl-xpkg/e2e/internal/acme"
)

// TestPlanFilesChecksCompositions: plan -f of a Git checkout whose
// Composition composes the snapshot kind, Inactive here (no policy of the
// cluster names it), warns that its composite resources would not become
// ready (inactive-composed-kind); the same checkout with a policy that
// activates it does not; a kind nothing defines is named too.
func TestPlanFilesChecksCompositions(t *testing.T) {
	s := begin(t)
	snapshots := acme.MRDName("Snapshot", acme.Storage)
	comp := acme.Composition("gitops-snapshot", "XGitopsBackup", acme.PTStep(acme.Storage, "Snapshot"))
	dir := acme.WriteFiles(t, map[string]string{"snapshot.yaml": comp})
	r := s.Run(t, "plan", "-f", dir)
	out := r.Stdout + r.Stderr
	if r.ExitCode != 0 {
		t.Errorf("plan -f exited %d, want 0 (a warning)", r.ExitCode)
	}
	acme.Contains(t, "plan -f", out, "[inactive-composed-kind]", "Composition gitops-snapshot composes", snapshots, "is Inactive")

	withPolicy := acme.WriteFiles(t, map[string]string{"snapshot.yaml": comp + "---\n" + acme.MRAP("gitops-activations", snapshots)})
	r = s.Run(t, "plan", "-f", withPolicy)
	if out := r.Stdout + r.Stderr; strings.Contains(out, "[inactive-composed-kind]") {
		t.Errorf("plan -f with a policy that activates the kind still warns:\n%s", out)
	}

	missing := acme.WriteFiles(t, map[string]string{"queue.yaml": acme.Composition("gitops-queue", "XQueue", acme.PTStep("queue.acme.example.org", "Queue"))})
	r = s.Run(t, "plan", "-f", missing)
	acme.Contains(t, "plan -f of an undefined kind", r.Stdout+r.Stderr, "[inactive-composed-kind]", "Queue.queue.acme.example.org", "which no ManagedResourceDefinition nor CRD in the cluster defines")
}
