package action

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// familyCluster is a family provider and members, each running the
// reference given (repository:tag), its revision labelled with family.
func familyCluster(family string, refs map[string]string) ([]*installed.Package, func(*installed.Package) *installed.Revision) {
	var pkgs []*installed.Package
	revs := map[*installed.Package]*installed.Revision{}
	for name, ref := range refs {
		p := &installed.Package{Kind: "Provider", Name: name, Source: ref, CurrentRevision: name + "-abc"}
		rev := &installed.Revision{Kind: "ProviderRevision", Name: name + "-abc", Image: ref, Family: family}
		if strings.Contains(ref, "/provider-family-") {
			rev.Objects = []installed.ObjectRef{{Kind: "CustomResourceDefinition", Name: "providerconfigs.aws.upbound.io"}, {Kind: "CustomResourceDefinition", Name: "providerconfigusages.aws.upbound.io"}}
		}
		pkgs = append(pkgs, p)
		revs[p] = rev
	}
	pkgs = append(pkgs, &installed.Package{Kind: "Function", Name: "fn", Source: "xpkg.upbound.io/upbound/function-x:v1"})
	return pkgs, func(p *installed.Package) *installed.Revision { return revs[p] }
}

func familyOf(t *testing.T, refs map[string]string) []findings.Finding {
	t.Helper()
	pkgs, running := familyCluster("provider-family-aws", refs)
	return familyFindings(providerFamilies(pkgs, running))
}

// TestFamilySkew: members at another version than the family provider.
func TestFamilySkew(t *testing.T) {
	same := familyOf(t, map[string]string{
		"upbound-provider-family-aws": "xpkg.upbound.io/upbound/provider-family-aws:v2.5.0",
		"upbound-provider-aws-s3":     "xpkg.upbound.io/upbound/provider-aws-s3:v2.5.0",
		"upbound-provider-aws-ec2":    "xpkg.upbound.io/upbound/provider-aws-ec2:v2.5.0",
	})
	if len(same) != 0 {
		t.Errorf("one version, one org: %+v", same)
	}
	fs := familyOf(t, map[string]string{
		"upbound-provider-family-aws": "xpkg.upbound.io/upbound/provider-family-aws:v2.5.0",
		"upbound-provider-aws-s3":     "xpkg.upbound.io/upbound/provider-aws-s3:v2.6.0",
		"upbound-provider-aws-ec2":    "xpkg.upbound.io/upbound/provider-aws-ec2:v2.6.0",
	})
	if len(fs) != 1 || fs[0].Rule != findings.RuleFamilySkew || fs[0].Severity != findings.Warning || fs[0].Object != "family provider-family-aws" {
		t.Fatalf("skew: %+v", fs)
	}
	for _, want := range []string{"family provider-family-aws runs 2 versions", "v2.5.0: provider/upbound-provider-family-aws", "v2.6.0: provider/upbound-provider-aws-", "move them to one version"} {
		if !strings.Contains(fs[0].Message, want) {
			t.Errorf("the skew finding lacks %q: %s", want, fs[0].Message)
		}
	}
}

// TestFamilyAcrossOrgs: a member from another org gets none of the
// family's types: the ClusterRole and the CRDs are named.
func TestFamilyAcrossOrgs(t *testing.T) {
	fs := familyOf(t, map[string]string{
		"upbound-provider-family-aws": "xpkg.upbound.io/upbound/provider-family-aws:v2.5.0",
		"upbound-provider-aws-s3":     "xpkg.upbound.io/upbound/provider-aws-s3:v2.5.0",
		"acme-provider-aws-ec2":       "ghcr.io/acme/provider-aws-ec2:v2.5.0",
		"other-org-provider-aws-iam":  "xpkg.upbound.io/other/provider-aws-iam:v2.5.0",
	})
	if len(fs) != 2 {
		t.Fatalf("two members outside the org: %+v", fs)
	}
	var msgs []string
	for _, f := range fs {
		msgs = append(msgs, f.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"provider/acme-provider-aws-ec2 (ghcr.io/acme) is not in the registry and org of its family provider provider/upbound-provider-family-aws (xpkg.upbound.io/upbound)",
		"ClusterRole crossplane:provider:acme-provider-aws-ec2-abc:system does not grant providerconfigs.aws.upbound.io, providerconfigusages.aws.upbound.io",
		"provider/other-org-provider-aws-iam (xpkg.upbound.io/other)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("lacks %q:\n%s", want, all)
		}
	}
}

// TestFamilyTwoFamilyProviders: a custom-named family provider and the
// one the resolver installs.
func TestFamilyTwoFamilyProviders(t *testing.T) {
	fs := familyOf(t, map[string]string{
		"upbound-provider-family-aws": "xpkg.upbound.io/upbound/provider-family-aws:v2.5.0",
		"family-aws":                  "xpkg.upbound.io/upbound/provider-family-aws:v2.5.0",
		"upbound-provider-aws-s3":     "xpkg.upbound.io/upbound/provider-aws-s3:v2.5.0",
	})
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "family provider-family-aws has 2 family providers") {
		t.Fatalf("two family providers: %+v", fs)
	}
}

// TestNoFamily: providers without the label, or with no running
// revision, belong to none.
func TestNoFamily(t *testing.T) {
	pkgs, running := familyCluster("", map[string]string{"a": "xpkg.upbound.io/upbound/provider-aws-s3:v1", "b": "xpkg.upbound.io/upbound/provider-aws-ec2:v2"})
	if fams := providerFamilies(pkgs, running); len(fams) != 0 {
		t.Errorf("families of unlabelled providers: %+v", fams)
	}
	if fams := providerFamilies(pkgs, func(*installed.Package) *installed.Revision { return nil }); len(fams) != 0 {
		t.Errorf("families without revisions: %+v", fams)
	}
}

// famItem is a provider of the family running current, whose repository
// has tags.
func famItem(name, repo, current string, tags ...string) *Item {
	p := &installed.Package{Kind: "Provider", Name: name, Source: repo + ":" + current}
	return &Item{Name: name, Kind: "Provider", Package: p.Source, Current: current, Family: "provider-family-aws", pkg: p, repo: repo, tags: versions.Sort(tags)}
}

// TestFamilyVersion: the newest complete version every repository has
// and every constraint admits; the family provider first.
func TestFamilyVersion(t *testing.T) {
	fp := famItem("provider-family-aws", "xpkg.upbound.io/upbound/provider-family-aws", "v2.5.0", "v2.5.0", "v2.6.0", "v2.7.0", "v3")
	s3 := famItem("provider-aws-s3", "xpkg.upbound.io/upbound/provider-aws-s3", "v2.6.0", "v2.5.0", "v2.6.0", "v2.7.0", "v3")
	ec2 := famItem("provider-aws-ec2", "xpkg.upbound.io/upbound/provider-aws-ec2", "v2.6.0", "v2.5.0", "v2.6.0", "v3.0.0-rc.1")
	other := &Item{Name: "cfg", Kind: "Configuration", pkg: &installed.Package{Kind: "Configuration", Name: "cfg", Source: "xpkg.upbound.io/acme/cfg:v1"}, repo: "xpkg.upbound.io/acme/cfg"}
	all := []*Item{s3, other, ec2, fp}
	fam, err := familyItems(all, "provider-family-aws")
	if err != nil || len(fam) != 3 || fam[0] != fp || fam[1] != ec2 || fam[2] != s3 {
		t.Fatalf("the family, its provider first: %v, %v", fam, err)
	}
	v, err := familyVersion(fam, all, nil, false)
	if err != nil || v != "v2.6.0" {
		t.Errorf("default version: %q, %v (v2.7.0 is not in provider-aws-ec2's repository, v3 no complete version)", v, err)
	}
	// A constraint on the family provider keeps v2.6.0 out.
	lock := []installed.LockPackage{{Name: "cfg-1", Source: "xpkg.upbound.io/acme/cfg", Version: "v1",
		Dependencies: []installed.LockDependency{{Package: "xpkg.upbound.io/upbound/provider-family-aws", Constraints: "<v2.6.0"}}}}
	if v, err = familyVersion(fam, all, lock, false); err != nil || v != "v2.5.0" {
		t.Errorf("under <v2.6.0: %q, %v", v, err)
	}
	lock[0].Dependencies[0].Constraints = ">=v9.0.0"
	if _, err = familyVersion(fam, all, lock, false); err == nil || !strings.Contains(err.Error(), "no version is in every repository of the family") {
		t.Errorf("no common version: %v", err)
	}
	if err := familyHas(fam, "v2.7.0"); err == nil || !strings.Contains(err.Error(), "no version v2.7.0 in the repository of provider/provider-aws-ec2") {
		t.Errorf("a version one member lacks: %v", err)
	}
	if _, err := familyItems(all, "provider-family-gcp"); err == nil || !strings.Contains(err.Error(), "no installed provider belongs to the family provider-family-gcp") {
		t.Errorf("an unknown family: %v", err)
	}
	ec2.Error = "unreachable"
	if _, err := familyItems(all, "provider-family-aws"); err == nil || !strings.Contains(err.Error(), "a family moves as one or not at all") {
		t.Errorf("a member whose registry could not be read: %v", err)
	}
}

// TestUpgradeAllGroupsFamilies: a family of which one provider moves
// moves as one, to one version; one whose provider runs ahead of that
// version moves as before.
func TestUpgradeAllGroupsFamilies(t *testing.T) {
	fp := famItem("provider-family-aws", "xpkg.upbound.io/upbound/provider-family-aws", "v2.5.0", "v2.5.0", "v2.6.0")
	s3 := famItem("provider-aws-s3", "xpkg.upbound.io/upbound/provider-aws-s3", "v2.5.0", "v2.5.0", "v2.6.0")
	ec2 := famItem("provider-aws-ec2", "xpkg.upbound.io/upbound/provider-aws-ec2", "v2.6.0", "v2.5.0", "v2.6.0")
	s3.Wanted, s3.wantedTag = "v2.6.0", "v2.6.0" // the only one outdated says moves
	all := []*Item{fp, s3, ec2}
	u := &UpgradeAll{Outdated: &Outdated{}}
	moving, moves := u.groupFamilies(all, []*Item{s3}, nil)
	var got []string
	for _, it := range moving {
		got = append(got, it.Name+"@"+it.wantedTag)
	}
	slices.Sort(got)
	if strings.Join(got, ",") != "provider-aws-s3@v2.6.0,provider-family-aws@v2.6.0" || len(moves) != 1 || moves[0] != (FamilyMove{"provider-family-aws", "v2.6.0"}) {
		t.Errorf("moving %v, families %+v", got, moves)
	}
	// A member runs a version above every repository's common one.
	ec2.Current = "v2.7.0"
	if moving, moves = u.groupFamilies(all, []*Item{s3}, nil); len(moving) != 1 || moving[0] != s3 || len(moves) != 0 {
		t.Errorf("with a member ahead: moving %v, families %+v", moving, moves)
	}
}
