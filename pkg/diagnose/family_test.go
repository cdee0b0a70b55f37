package diagnose

import (
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
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
