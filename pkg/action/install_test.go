package action

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// TestInstallPlansASecondPackageOfARepository: installing a repository
// that another package installs, under another name, would put two nodes
// for it in the Lock: the install's plan has a blocking finding that
// names that package and the way out. The same package under its own
// name plans nothing and stays a no-op.
func TestInstallPlansASecondPackageOfARepository(t *testing.T) {
	c := fakeCluster(t, pkgObj("Provider", "org-provider-nop", nopRepo+":v0.2.0", "org-provider-nop-aaa"))
	spec := installed.InstallSpec{Kind: "Provider", Name: "other-nop", Package: nopRepo + ":v0.4.0"}
	in := &Install{Cluster: c}
	plan, err := in.Plan(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	const msg = nopRepo + " is installed already as provider/org-provider-nop (" + nopRepo + ":v0.2.0): a second package of one repository puts two nodes for it in the Lock, and Crossplane then resolves no package's dependencies; use 'kubectl xpkg upgrade provider/org-provider-nop' to change its version, or pass --force to install it twice anyway"
	fs := planFindings(plan, findings.RuleTwinInstall)
	if len(fs) != 1 || fs[0].Severity != findings.Blocking || fs[0].Message != msg || plan.Refused() == nil {
		t.Fatalf("plan %+v\nwant one blocking %s: %s", plan.Findings, findings.RuleTwinInstall, msg)
	}
	if blocking, _, _ := findings.Counts(plan.Findings); plan.Action != ActionInstall || plan.Package != "provider/other-nop ("+nopRepo+":v0.4.0)" || plan.To != "" || len(plan.Packages) > 1 || blocking != 1 {
		t.Errorf("plan %+v: not the install of provider/other-nop with one blocking finding", plan)
	}

	same := installed.InstallSpec{Kind: "Provider", Name: "org-provider-nop", Package: nopRepo + ":v0.2.0"}
	if plan, err := in.Plan(context.Background(), same); err != nil || len(plan.Findings) != 0 {
		t.Errorf("the same package again plans %+v, %v", plan, err)
	}
	u, err := c.Dialect().Build(same)
	if err != nil {
		t.Fatal(err)
	}
	if p, already, err := in.Create(context.Background(), same, u, false); err != nil || !already || p.Name != "org-provider-nop" {
		t.Errorf("the same package again: %v, already %v", err, already)
	}
}

// TestInstallPlansANameTheResolverWouldTwin: a custom name for a
// repository an installed package depends on is blocking; the resolver's
// own name, or a repository nothing depends on, plans nothing.
func TestInstallPlansANameTheResolverWouldTwin(t *testing.T) {
	const famRepo = "r.example.org/org/provider-family"
	c := fakeCluster(t, lock(entry("member-aaa", "Provider", nopRepo, "v0.2.0", famRepo, ">=0.0.0")))
	in := &Install{Cluster: c}
	plan, err := in.Plan(context.Background(), installed.InstallSpec{Kind: "Provider", Name: "family", Package: famRepo + ":v1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	fs := planFindings(plan, findings.RuleTwinName)
	if len(fs) != 1 || fs[0].Severity != findings.Blocking || !strings.Contains(fs[0].Message, "Crossplane's resolver names it org-provider-family: under the name family it installs a twin") ||
		!strings.Contains(fs[0].Message, "member-aaa") {
		t.Fatalf("plan %+v", plan.Findings)
	}
	for _, spec := range []installed.InstallSpec{
		{Kind: "Provider", Name: "org-provider-family", Package: famRepo + ":v1.0.0"},
		{Kind: "Provider", Name: "custom", Package: "r.example.org/org/provider-alone:v1.0.0"},
	} {
		if plan, err := in.Plan(context.Background(), spec); err != nil || len(plan.Findings) != 0 {
			t.Errorf("%s plans %+v, %v", spec.Name, plan.Findings, err)
		}
	}
}
