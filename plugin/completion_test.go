package plugin

import (
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fakecluster"
)

// TestCompletionOfNamesAndKinds: shell completion (cobra's __complete, as
// the shells call it) offers the cluster's packages by name and by
// kind/name, and the package kinds. (Through kubectl and its completion
// helper: cmd/kubectl-xpkg's TestKubectlCompletesThroughTheHelper.)
func TestCompletionOfNamesAndKinds(t *testing.T) {
	const name = "lifecycle-nop"
	x := newCLI(t, fakecluster.Object("pkg.crossplane.io/v1", "Provider", name,
		map[string]any{"spec": map[string]any{"package": "xpkg.example.org/cli/provider-nop:v0.4.0"}}))
	r := x.Run("__complete", "describe", "").Succeeds(t)
	contains(t, "describe completion", "\n"+r.Stdout, "\n"+name+"\n", "\nprovider/"+name+"\n")
	r = x.Run("__complete", "get", "prov").Succeeds(t)
	if !strings.HasPrefix(r.Stdout, "provider\n") {
		t.Errorf("get completion of kinds: %q", r.Stdout)
	}
}
