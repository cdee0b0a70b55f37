package diagnose

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/crossplane/flags"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// tagsOnly is a registry of repositories without dependencies.
type tagsOnly map[string][]string

func (r tagsOnly) Tags(repo string) ([]versions.Tag, error) {
	tags, ok := r[repo]
	if !ok {
		return nil, fmt.Errorf("%s: unreachable", repo)
	}
	return versions.Sort(tags), nil
}

func (r tagsOnly) Dependencies(string) (resolve.Known, error) { return resolve.Known{}, nil }

// cfgNeeding is a configuration's Lock entry that needs r.io/d.
func cfgNeeding(name, constraint string) installed.LockPackage {
	return installed.LockPackage{Name: name, Type: "Configuration", Source: "r.io/" + name, Version: "v1.0.0",
		Dependencies: []installed.LockDependency{{Package: "r.io/d", Constraints: constraint, Type: "Configuration"}}}
}

var depAt = installed.LockPackage{Name: "d", Type: "Configuration", Source: "r.io/d", Version: "v0.1.0"}

func objectsOf(lock []installed.LockPackage) []resolve.Object {
	var out []resolve.Object
	for _, lp := range lock {
		out = append(out, resolve.Object{Kind: lp.Type, Name: lp.Name, Repo: lp.Source, Version: lp.Version})
	}
	return out
}

// TestPredictionFindings: a package the change leaves unhealthy is a
// warning naming the version that heals it; blocking when none does;
// unknown flags with another outcome under them are said; a Lock that
// does not resolve now but does after the change is noted, not warned of.
func TestPredictionFindings(t *testing.T) {
	reg := tagsOnly{"r.io/d": {"v0.1.0", "v0.2.0", "v0.3.0"}}
	read := Crossplane{Config: flags.Defaults(), Read: ConfigRead}
	before := []installed.LockPackage{depAt}

	after := []installed.LockPackage{depAt, cfgNeeding("a", ">=v0.2.0")}
	p := Predict(reg, read, LockState{Lock: before, Objects: objectsOf(before)}, LockState{Lock: after, Objects: objectsOf(after)})
	fs := p.Findings("a:v1")
	if len(fs) != 1 || fs[0].Rule != findings.RuleDependencyConstraint || fs[0].Severity != findings.Warning ||
		!strings.Contains(fs[0].Message, "configuration/d heals it at v0.2.0") {
		t.Errorf("heals: %+v", fs)
	}

	after = []installed.LockPackage{depAt, cfgNeeding("a", ">=v0.2.0"), cfgNeeding("b", "<v0.1.0")}
	p = Predict(reg, read, LockState{Lock: before, Objects: objectsOf(before)}, LockState{Lock: after, Objects: objectsOf(after)})
	fs = p.Findings("the change")
	if len(fs) != 2 || fs[0].Severity != findings.Blocking || !strings.Contains(fs[0].Message, "so configuration/a can never become healthy") || fs[1].Object != "configuration/b" {
		t.Errorf("never healthy: %+v", fs)
	}

	unknown := Crossplane{Config: flags.Defaults(), Read: ConfigUnknown, Why: "planned offline"}
	after = []installed.LockPackage{depAt, cfgNeeding("a", ">=v0.2.0")}
	p = Predict(reg, unknown, LockState{Lock: before, Objects: objectsOf(before)}, LockState{Lock: after, Objects: objectsOf(after)})
	fs = p.Findings("a:v1")
	if len(fs) != 2 || fs[1].Rule != findings.RuleCrossplaneConfig || !strings.Contains(fs[1].Message, "with --enable-dependency-version-downgrades the package manager would instead: upgrades configuration/d") || p.Otherwise == nil {
		t.Errorf("unknown flags: %+v", fs)
	}

	stalled := []installed.LockPackage{depAt, cfgNeeding("a", ">=v9.0.0")}
	stalled[0].Source = "r.io/gone"
	p = Predict(reg, read, LockState{Lock: stalled, Objects: objectsOf(stalled)}, LockState{Lock: []installed.LockPackage{depAt}, Objects: objectsOf([]installed.LockPackage{depAt})})
	lock := []findings.Finding{{Rule: findings.RuleDependencyUnresolved, Severity: findings.Warning, Object: "lock/lock", Message: "the Lock is not resolved"}}
	if got := p.Resolving(lock); got[0].Severity != findings.Info || !strings.Contains(got[0].Message, "after the change it does") {
		t.Errorf("resolving: %+v", got)
	}
}
