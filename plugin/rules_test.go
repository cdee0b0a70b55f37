package plugin

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// TestEachVerbsHelpListsItsRules: the help of each verb that plans lists
// every rule its plan can raise, and no other.
func TestEachVerbsHelpListsItsRules(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdRoot(streams)
	for _, verb := range []string{action.ActionUpgrade, action.ActionRollback, action.ActionUninstall, action.ActionDoctor, action.ActionPlanFiles, action.ActionInstall, action.ActionRename} {
		cmd, _, err := root.Find([]string{verb})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range findings.Rules {
			listed := strings.Contains(cmd.Long, "* "+r.ID+": ")
			if raised := slices.Contains(r.Verbs, verb); listed != raised {
				t.Errorf("%s --help lists %s: %v; its plan raises it: %v", verb, r.ID, listed, raised)
			}
		}
	}
}
