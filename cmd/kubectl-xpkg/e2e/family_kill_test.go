package e2e

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
)

// TestFamilyUpgradeKilled: upgrade --family killed (SIGKILL) once the
// family provider has moved and the first member's step has begun, on
// the real package manager. Black-box: the test watches the record the
// run writes on each provider before its step. doctor names the half
// moved family (unfinished-operation) with the command that finishes it;
// that command, run again, finishes it: every provider at the version,
// healthy, no record left, and at no moment two Lock nodes for the family
// provider's source.
func TestFamilyUpgradeKilled(t *testing.T) {
	env, reg, c, x := start(t)
	const famRepoPath = "e2e/famkill/" + famName
	famRepo := reg.Host + "/" + famRepoPath
	for _, tag := range []string{"v1.0.0", "v1.1.0"} {
		pushFamilyPackage(t, reg, famRepoPath, tag, "", famCRD("famkill.example.org", "ProviderConfig"), famCRD("famkill.example.org", "ProviderConfigUsage"))
		for _, m := range []string{"a", "b"} {
			pushFamilyPackage(t, reg, "e2e/famkill/provider-famkill-"+m, tag, famRepo, famCRD(m+".famkill.example.org", "Bucket"))
		}
	}
	const family = "e2e-famkill-" + famName // the resolver's name
	members := []string{"e2e-famkill-provider-famkill-a", "e2e-famkill-provider-famkill-b"}
	t.Cleanup(func() {
		y := clitest.New(t).WithEnv(env)
		y.Run("uninstall", "provider/"+members[0], "provider/"+members[1], "--force", "--yes", "--wait=2m")
		y.Run("uninstall", "provider/"+family, "--force", "--yes", "--wait=2m")
	})
	x.Run("install", famRepo+":v1.0.0", "--wait=5m").Succeeds(t)
	for _, m := range []string{"a", "b"} {
		x.Run("install", reg.Host+"/e2e/famkill/provider-famkill-"+m+":v1.0.0", "--wait=5m").Succeeds(t)
	}
	var phase atomic.Value
	phase.Store("upgrade --family, killed and finished")
	stopLock := c.watchLock(t, famRepo, &phase)
	defer stopLock()

	run := x.Start("upgrade", "--family", famName, "v1.1.0", "--wait=5m")
	c.waitStep(t, run, members[0], 2)
	if err := run.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := run.Wait()
	t.Logf("transcript (killed at step 2):\n$ kubectl xpkg upgrade --family %s v1.1.0 --wait=5m\n%s%s", famName, r.Stderr, r.Stdout)

	finish := "kubectl xpkg upgrade --family " + famName + " v1.1.0"
	r = x.Run("doctor")
	t.Logf("transcript:\n$ kubectl xpkg doctor\n%s", r.Stdout)
	if r.ExitCode != 3 || !strings.Contains(r.Stdout, "[unfinished-operation]") || !strings.Contains(r.Stdout, "finish it: "+finish) {
		t.Errorf("doctor after the kill: exit %d, want 3 naming the family upgrade and %q", r.ExitCode, finish)
	}

	r = x.Run("upgrade", "--family", famName, "v1.1.0", "--wait=5m")
	t.Logf("transcript:\n$ kubectl xpkg upgrade --family %s v1.1.0 --wait=5m\n%s%s", famName, r.Stderr, r.Stdout)
	if r.ExitCode != 0 {
		t.Fatalf("the rerun: exit %d", r.ExitCode)
	}
	for _, n := range append([]string{family}, members...) {
		c.healthy("providers", n)
		p := c.get("providers", n)
		if src, _, _ := unstructured.NestedString(p.Object, "spec", "package"); !strings.HasSuffix(src, ":v1.1.0") {
			t.Errorf("provider/%s after the rerun: %s", n, src)
		}
		if v := p.GetAnnotations()[installed.OperationAnnotation]; v != "" {
			t.Errorf("provider/%s keeps the record of upgrade --family: %s", n, v)
		}
	}
	if r := x.Run("doctor", "-o", "json"); strings.Contains(r.Stdout, "unfinished-operation") || strings.Contains(r.Stdout, "duplicate-") {
		t.Errorf("doctor after the rerun:\n%s", r.Stdout)
	}
}
