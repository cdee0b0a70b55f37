package action

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

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
