package diagnose

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// pinnedServiceAccounts: a DeploymentRuntimeConfig's
// serviceAccountTemplate.metadata.name makes every package that uses it
// share one ServiceAccount, which each active revision makes its own
// (controller) in turn: with two packages they rewrite it without end
// (crossplane#7769). Crossplane v2.4.0 and v2.4.1 also add a new
// revision's controller reference beside an old one, which the API server
// refuses (crossplane#7838, fixed in v2.4.2). A Deployment that names
// another account (deploymentTemplate's serviceAccountName) gets none made.
func (s *State) pinnedServiceAccounts() []findings.Finding {
	users := map[string][]string{}
	for _, p := range s.pkgs {
		if installed.HasRuntime(p.Kind) {
			name := cmp.Or(p.RuntimeConfig, "default")
			users[name] = append(users[name], p.KindName())
		}
	}
	var out []findings.Finding
	for _, rc := range s.configs {
		if rc.ServiceAccount == "" || (rc.DeploymentServiceAccount != "" && rc.DeploymentServiceAccount != rc.ServiceAccount) {
			continue
		}
		if f := s.pinned(rc, users[rc.Name]); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// pinned is blocking where the running Crossplane refuses the pinned name
// at a package's next revision, else a warning when packages share it.
func (s *State) pinned(rc cluster.RuntimeConfig, users []string) *findings.Finding {
	var why, ways []string
	sev := findings.Warning
	if len(users) > 1 {
		why = append(why, fmt.Sprintf("%d packages use it (%s): each one's active revision makes itself the ServiceAccount's controller in turn and wakes the others, so they rewrite it without end (crossplane#7769)", len(users), strings.Join(users, ", ")))
		ways = append(ways, "give each package a DeploymentRuntimeConfig of its own")
	}
	if v := s.version(); len(users) > 0 && versionIn(v, "v2.4.0", "v2.4.2") {
		sev = findings.Blocking
		why = append(why, fmt.Sprintf("Crossplane %s adds a new revision's controller reference to it beside the old revision's, which the API server refuses (Only one reference can have Controller set to true), so %s at the next revision (crossplane#7838)", v, runtimesStop(users)))
		ways = append([]string{"upgrade Crossplane to v2.4.2 or later, which demotes the old reference"}, ways...)
	}
	if len(why) == 0 {
		return nil
	}
	ways = append(ways, "create the ServiceAccount yourself and name it in spec.deploymentTemplate.spec.template.spec.serviceAccountName instead: Crossplane then uses it without owning it")
	return &findings.Finding{Rule: findings.RulePinnedServiceAccount, Severity: sev, Object: installed.KindName("DeploymentRuntimeConfig", rc.Name), Count: findings.Count(int64(len(users))),
		Message: fmt.Sprintf("DeploymentRuntimeConfig %s names the runtime's ServiceAccount %s (spec.serviceAccountTemplate.metadata.name), which Crossplane makes and controls for every package that uses it: %s. Either %s",
			rc.Name, rc.ServiceAccount, strings.Join(why, "; and "), strings.Join(ways, ", or "))}
}

func runtimesStop(users []string) string {
	if len(users) == 1 {
		return "the runtime of " + users[0] + " stops"
	}
	return "the runtimes of " + strings.Join(users, ", ") + " stop"
}
