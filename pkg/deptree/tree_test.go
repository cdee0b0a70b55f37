package deptree

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

func TestTree(t *testing.T) {
	healthy := []installed.Condition{{Type: installed.TypeInstalled, Status: "True"}, {Type: installed.TypeHealthy, Status: "True"}}
	pkgs := []*installed.Package{
		{Kind: "Configuration", Name: "net", Source: "r.io/org/configuration-network:v1", Conditions: healthy},
		{Kind: "Provider", Name: "aws", Source: "r.io/org/provider-aws:v2", Conditions: healthy},
	}
	lock := []installed.LockPackage{
		{Source: "r.io/org/configuration-network", Version: "v1", Dependencies: []installed.LockDependency{
			{Package: "r.io/org/provider-aws", Constraints: ">=v1"}, {Package: "r.io/org/function-missing", Constraints: ">=v0.1"}}},
		{Source: "r.io/org/provider-aws", Version: "v2"},
	}
	// A CRD of provider/aws's current revision is being deleted: whatever
	// its conditions say, it is not shown healthy.
	revs := map[*installed.Package]*installed.Revision{
		pkgs[0]: {Name: "net-aaa", DesiredState: "Active"},
		pkgs[1]: {Name: "aws-bbb", DesiredState: "Active", Deleting: []installed.Deletion{{CRD: "buckets.s3.aws.example.org", Since: time.Now()}}},
	}
	roots, err := Build(lock, pkgs, revs, "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WriteText(&b, roots)
	want := "configuration/net r.io/org/configuration-network v1 [installed: True, healthy: True]\n" +
		"├── provider/aws r.io/org/provider-aws v2 (wants >=v1) [installed: True, healthy: Terminating]\n" +
		"└── r.io/org/function-missing (wants >=v0.1) [not installed]\n"
	if b.String() != want {
		t.Errorf("tree:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	WriteDot(&b, roots)
	if !strings.Contains(b.String(), `"r.io/org/configuration-network" -> "r.io/org/provider-aws" [label=">=v1"];`) ||
		!strings.Contains(b.String(), `"r.io/org/provider-aws" [label="r.io/org/provider-aws\nv2", color=red];`) {
		t.Errorf("dot:\n%s", b.String())
	}
	if _, err := Build(lock, pkgs, revs, "nope"); err == nil {
		t.Error("an unknown root was accepted")
	}
}
