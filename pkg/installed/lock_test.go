package installed

import (
	"slices"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

func lp(src string, deps ...string) LockPackage {
	p := LockPackage{Name: reference.DNSLabel(src), Source: src}
	for _, d := range deps {
		p.Dependencies = append(p.Dependencies, LockDependency{Package: d, Constraints: ">=v0.0.0"})
	}
	return p
}

func TestDependencyAnalysis(t *testing.T) {
	const (
		cfg    = "r.io/org/configuration-network"
		other  = "r.io/org/configuration-db"
		aws    = "r.io/org/provider-aws"
		fn     = "r.io/org/function-pt"
		shared = "r.io/org/provider-family"
		leaf   = "r.io/org/provider-leaf"
	)
	lock := []LockPackage{
		lp(cfg, aws, fn), lp(other, aws), lp(aws, shared), lp(fn, leaf), lp(shared), lp(leaf),
	}
	if got := Dependents(lock, aws+":v1.2.3"); len(got) != 2 {
		t.Errorf("dependents of aws: %v", got)
	}
	// aws (and what it needs) stays for the other configuration; fn and its
	// leaf go with cfg.
	if got := ExclusiveDependencies(lock, cfg, nil); !slices.Equal(got, []string{fn, leaf}) {
		t.Errorf("exclusive dependencies = %v", got)
	}
	if got := ExclusiveDependencies(lock, other, nil); len(got) != 0 {
		t.Errorf("exclusive dependencies of %s = %v, want none (cfg still needs aws)", other, got)
	}
	// A dependency installed explicitly stays, and so does what it needs.
	if got := ExclusiveDependencies(lock, cfg, func(r string) bool { return r == fn }); len(got) != 0 {
		t.Errorf("exclusive dependencies with %s kept = %v, want none (it keeps %s)", fn, got, leaf)
	}
	if got := ExclusiveDependencies(lock, cfg, func(r string) bool { return r == leaf }); !slices.Equal(got, []string{fn}) {
		t.Errorf("exclusive dependencies with %s kept = %v, want only %s", leaf, got, fn)
	}
}

func TestDNSLabel(t *testing.T) {
	for in, want := range map[string]string{
		"crossplane-contrib/provider-nop":     "crossplane-contrib-provider-nop",
		"e2e/crossplane-contrib/provider-nop": "e2e-crossplane-contrib-provider-nop",
		"Org/Provider_X":                      "rg-rovider", // upper case and _ dropped, as Crossplane does
	} {
		if got := reference.DNSLabel(in); got != want {
			t.Errorf("reference.DNSLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
