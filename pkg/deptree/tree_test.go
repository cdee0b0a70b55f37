package deptree

import (
	"strings"
	"testing"

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
	roots, err := Build(lock, pkgs, "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WriteText(&b, roots)
	want := "configuration/net r.io/org/configuration-network v1 [installed: True, healthy: True]\n" +
		"├── provider/aws r.io/org/provider-aws v2 (wants >=v1) [installed: True, healthy: True]\n" +
		"└── r.io/org/function-missing (wants >=v0.1) [not installed]\n"
	if b.String() != want {
		t.Errorf("tree:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	WriteDot(&b, roots)
	if !strings.Contains(b.String(), `"r.io/org/configuration-network" -> "r.io/org/provider-aws" [label=">=v1"];`) ||
		!strings.Contains(b.String(), `"r.io/org/provider-aws" [label="r.io/org/provider-aws\nv2", color=black];`) {
		t.Errorf("dot:\n%s", b.String())
	}
	if _, err := Build(lock, pkgs, "nope"); err == nil {
		t.Error("an unknown root was accepted")
	}
}
