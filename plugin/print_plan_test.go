package plugin

import (
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/action"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/flags"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

func TestWritePlan(t *testing.T) {
	p := &action.Plan{Action: action.ActionUpgrade, Package: "provider/p", From: "r/p:v1", To: "r/p:v2", Findings: []findings.Finding{
		{Rule: findings.RuleBreakingChange, Severity: findings.Warning, Message: "w"},
		{Rule: findings.RuleStoredVersionDropped, Severity: findings.Blocking, Message: "b1"},
		{Rule: findings.RuleLiveObjects, Severity: findings.Blocking, Message: "b2", Count: findings.Count(3)},
	}}
	var sb strings.Builder
	if err := writePlan(&sb, p); err != nil {
		t.Fatal(err)
	}
	want := "Plan: upgrade provider/p from r/p:v1 to r/p:v2\n  2 blocking, 1 warning, 0 info\n" +
		"  BLOCKING b1 [stored-version-dropped]\n  BLOCKING b2 [live-objects]\n  WARNING  w [breaking-change]\n"
	if sb.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", sb.String(), want)
	}
}

// TestWriteInstallPlan: an install's plan is headed by the package and
// its reference.
func TestWriteInstallPlan(t *testing.T) {
	const repo = "xpkg.example.org/org/provider-nop"
	plan := action.NewPlan(action.ActionInstall, "provider/other-nop ("+repo+":v0.4.0)", "", "")
	plan.Findings = append(plan.Findings, findings.Finding{Rule: findings.RuleTwinInstall, Severity: findings.Blocking, Message: "twice"})
	var text strings.Builder
	if err := writePlan(&text, plan); err != nil || !strings.HasPrefix(text.String(), "Plan: install provider/other-nop ("+repo+":v0.4.0)\n  1 blocking") {
		t.Errorf("%q, %v", text.String(), err)
	}
}

// TestWriteOfflineFilesPlan: plan -f --offline counts the plans by
// action and names the packages a prune would uninstall.
func TestWriteOfflineFilesPlan(t *testing.T) {
	fp := &action.FilesPlan{Manifests: 4, Offline: true, Base: 4, Unchanged: []string{"configuration/config-pin"}, Removed: []string{"provider/provider-gone"},
		Plans: []*action.Plan{
			action.NewPlan(action.ActionInstall, "configuration/config-new", "", "r/config-new:v1.0.0"),
			action.NewPlan(action.ActionUpgrade, "provider/provider-a", "r/provider-a:v1.0.0", "r/provider-a:v2.0.0"),
			action.NewPlan(action.ActionUpdate, "function/function-f", "", ""),
		}}
	var b strings.Builder
	if err := writeFilesPlan(&b, fp); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Plan -f (offline, against 4 base package manifest(s)): 4 package manifest(s), 0 other object(s) ignored: 1 install, 1 upgrade, 1 update, 1 unchanged\n",
		"  removed from the manifests (in --base, in no manifest): provider/provider-gone (a GitOps prune"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// TestWritePrediction: what the package manager then does, in text: the
// configuration the plan knows (here unknown), each change with its
// reason, who needs it and what it brings and drops, the stall and what
// is left unhealthy.
func TestWritePrediction(t *testing.T) {
	p := &action.Plan{Action: action.ActionInstall, Package: "configuration/a", To: "r/a:v1", Findings: []findings.Finding{}}
	p.Prediction = &diagnose.Prediction{
		Crossplane: diagnose.Crossplane{Config: flags.Defaults(), Read: diagnose.ConfigUnknown, Why: "planned offline"},
		Resolution: &resolve.Outcome{
			Changes: []resolve.Change{{Package: "provider/d", Repository: "r/d", Action: "install", To: "v0.2.5",
				Reason: "the newest of its tags that satisfy >=v0.1.0", Constraints: []versions.Hold{{By: "configuration/a", Constraint: ">=v0.1.0"}},
				Definitions: &resolve.Definitions{Brings: []string{"as.d.io", "bs.d.io", "cs.d.io", "ds.d.io"}}}},
			Stall:     &resolve.Stall{Repository: "r/t", Message: "no valid version"},
			Unhealthy: []resolve.Unhealthy{{Package: "provider/d", Message: "missing dependencies: r/t"}},
		},
	}
	var sb strings.Builder
	if err := writePlan(&sb, p); err != nil {
		t.Fatal(err)
	}
	want := "Plan: install configuration/a at r/a:v1\n  0 blocking, 0 warning, 0 info\n" +
		"  Then Crossplane, without automatic dependency upgrades (not read: planned offline; Crossplane's default assumed):\n" +
		"    installs provider/d (r/d) at v0.2.5 (the newest of its tags that satisfy >=v0.1.0); needed by configuration/a >=v0.1.0\n" +
		"      brings as.d.io, bs.d.io, cs.d.io and 1 more; drops none\n" +
		"    the Lock stalls at r/t: no valid version\n" +
		"    provider/d is unhealthy: missing dependencies: r/t\n"
	if sb.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", sb.String(), want)
	}
}
