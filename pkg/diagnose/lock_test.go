package diagnose

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

const (
	fnRepo  = "r.example.org/org/function-auto"
	nopRepo = "r.example.org/org/provider-nop"
)

// TestDoctorMentionsNoPrefixSource: a source named only as part of a
// longer one takes no part.
func TestDoctorMentionsNoPrefixSource(t *testing.T) {
	s := &State{lock: []installed.LockPackage{
		{Name: "a", Source: "r.example.org/org/provider"},
		{Name: "b", Source: "r.example.org/org/provider-family"},
	}}
	got := s.mentioned("missing dependencies: \"r.example.org/org/provider-family\" (>=v1)")
	if !slices.Equal(got, []string{"r.example.org/org/provider-family"}) {
		t.Errorf("mentioned %v", got)
	}
	got = s.mentioned("r.example.org/org/provider-family and r.example.org/org/provider@v1")
	if !slices.Equal(got, []string{"r.example.org/org/provider-family", "r.example.org/org/provider"}) {
		t.Errorf("mentioned %v", got)
	}
}

// TestLockFindings: a change planned while the Lock holds two nodes for
// one source is blocked, naming the source and doctor; a Lock otherwise
// unresolved is a warning; a resolved one says nothing.
func TestLockFindings(t *testing.T) {
	dup := installedLock{{"fn-aaa", fnRepo}, {"fn-bbb", fnRepo}, {"nop-a", nopRepo}}
	fs := LockFindings(dup.entries(), nil)
	if len(fs) != 1 || fs[0].Severity != findings.Blocking || fs[0].Rule != findings.RuleDuplicateLockNode ||
		!strings.Contains(fs[0].Message, "the Lock holds two nodes for "+fnRepo+": ") || !strings.Contains(fs[0].Message, "kubectl xpkg doctor") {
		t.Errorf("duplicate: %+v", fs)
	}
	cond := &installed.Condition{Type: "Resolved", Status: "False", Reason: "DependencyResolutionFailed", Message: "missing dependencies"}
	fs = LockFindings(dup.entries()[2:], cond)
	if len(fs) != 1 || fs[0].Severity != findings.Warning || fs[0].Rule != findings.RuleDependencyUnresolved || !strings.Contains(fs[0].Message, "missing dependencies") {
		t.Errorf("unresolved: %+v", fs)
	}
	if fs := LockFindings(dup.entries()[1:], nil); len(fs) != 0 {
		t.Errorf("resolved: %+v", fs)
	}
}

type installedLock [][2]string

func (l installedLock) entries() []installed.LockPackage {
	var out []installed.LockPackage
	for _, e := range l {
		out = append(out, installed.LockPackage{Name: e[0], Source: e[1]})
	}
	return out
}
