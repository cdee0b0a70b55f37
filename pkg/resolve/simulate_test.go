package resolve

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// fakeSource is a registry: repository → tag → the dependencies of that
// version ("repo constraint" pairs).
type fakeSource map[string]map[string][]string

func (f fakeSource) Tags(repo string) ([]versions.Tag, error) {
	tags, ok := f[repo]
	if !ok {
		return nil, fmt.Errorf("%s: not found", repo)
	}
	var names []string
	for t := range tags {
		names = append(names, t)
	}
	return versions.Sort(names), nil
}

func (f fakeSource) Dependencies(ref string) (Known, error) {
	repo, tag, _ := strings.Cut(ref, ":")
	if r, d, ok := strings.Cut(ref, "@"); ok {
		repo, tag = r, d
	}
	deps, ok := f[repo][tag]
	if !ok {
		return Known{}, fmt.Errorf("%s: not found", ref)
	}
	k := Known{Kind: "Configuration"}
	for _, d := range deps {
		p, c, _ := strings.Cut(d, " ")
		k.Deps = append(k.Deps, xpkg.Dependency{Package: p, Version: c, Kind: "configuration"})
	}
	return k, nil
}

// lockOf is a Lock of configurations: "name repo version" then
// dependencies "repo constraint".
func lockOf(entries ...[]string) ([]installed.LockPackage, []Object) {
	var lock []installed.LockPackage
	var objs []Object
	for _, e := range entries {
		var head [3]string
		copy(head[:], strings.Fields(e[0]))
		lp := installed.LockPackage{Name: head[0] + "-abc", Type: "Configuration", Source: head[1], Version: head[2]}
		for _, d := range e[1:] {
			p, c, _ := strings.Cut(d, " ")
			lp.Dependencies = append(lp.Dependencies, installed.LockDependency{Package: p, Constraints: c, Type: "Configuration"})
		}
		lock = append(lock, lp)
		objs = append(objs, Object{Kind: "Configuration", Name: head[0], Repo: head[1], Version: head[2]})
	}
	return lock, objs
}

func changesOf(o *Outcome) string {
	var s []string
	for _, c := range o.Changes {
		s = append(s, fmt.Sprintf("%s %s %s→%s", c.Action, c.Package, c.From, c.To))
	}
	return strings.Join(s, "; ")
}

func unhealthyOf(o *Outcome) string {
	var s []string
	for _, u := range o.Unhealthy {
		s = append(s, u.Package)
	}
	return strings.Join(s, ",")
}

const (
	off        = 0
	upgrades   = 1
	downgrades = 2
)

func settingsOf(mode int) Settings {
	return Settings{Upgrades: mode >= upgrades, Downgrades: mode == downgrades}
}

func TestSimulate(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	reg := fakeSource{
		"r.io/d": {"v0.1.0": {"r.io/t >=v0.1.0"}, "v0.2.0": {"r.io/t >=v0.1.0"}, "v0.2.5": {"r.io/t >=v0.1.0"}, "v1": nil, "latest": nil, "v0.3.0": {"r.io/t >=v0.1.0"}, "v0.1.1": {"r.io/t >=v0.1.0"}, digest: nil},
		"r.io/t": {"v0.1.0": nil, "v0.2.0": nil, "v0.3.0-rc.1": nil},
		// Two dependencies that share a transitive one, each pinning it.
		"r.io/d1": {"v0.0.1": {"r.io/s =v0.0.1"}, "v0.0.2": {"r.io/s =v0.0.2"}},
		"r.io/d2": {"v0.0.1": {"r.io/s =v0.0.1"}, "v0.0.2": {"r.io/s =v0.0.2"}},
		"r.io/s":  {"v0.0.1": nil, "v0.0.2": nil},
	}
	installedD := func(version string) []string { return []string{"d r.io/d " + version} }
	cases := []struct {
		name  string
		lock  [][]string
		mode  int
		want  string // the changes
		stall string // part of the stall's message; "" when it resolves
		sick  string // the unhealthy packages
	}{
		{name: "install: the newest complete version, then its own dependency",
			lock: [][]string{{"a r.io/a v1.0.0", "r.io/d >=v0.1.0"}},
			want: "install configuration/d →v0.3.0; install configuration/t →v0.2.0"},
		{name: "install by digest",
			lock: [][]string{{"a r.io/a v1.0.0", "r.io/d " + digest}},
			want: "install configuration/d →" + digest},
		{name: "no version satisfies a new dependency: the Lock stalls",
			lock:  [][]string{{"a r.io/a v1.0.0", "r.io/d >=v9.0.0"}},
			stall: "no valid version for r.io/d with constraints >=v9.0.0", sick: "configuration/a"},
		{name: "an installed dependency stays without upgrades",
			lock: [][]string{{"a r.io/a v2.0.0", "r.io/d >=v0.2.0"}, installedD("v0.1.0")},
			sick: "configuration/a"},
		{name: "upgrades move it to the lowest version every dependent accepts",
			lock: [][]string{{"a r.io/a v2.0.0", "r.io/d >=v0.2.0"}, installedD("v0.1.0")}, mode: upgrades,
			want: "upgrade configuration/d v0.1.0→v0.2.0; install configuration/t →v0.2.0"},
		{name: "a downgrade stalls the Lock with upgrades alone",
			lock: [][]string{{"a r.io/a v3.0.0", "r.io/d <v0.2.0"}, installedD("v0.3.0")}, mode: upgrades,
			stall: "does not have a valid version to upgrade that satisfies all constraints", sick: "configuration/a"},
		{name: "downgrades move it to the highest version below",
			lock: [][]string{{"a r.io/a v3.0.0", "r.io/d <v0.2.0"}, installedD("v0.3.0")}, mode: downgrades,
			want: "downgrade configuration/d v0.3.0→v0.1.1; install configuration/t →v0.2.0"},
		{name: "a shared transitive dependency two parents pin apart stalls every package",
			lock: [][]string{
				{"a r.io/a v2.0.0", "r.io/d1 =v0.0.2"}, {"b r.io/b v1.0.0", "r.io/d2 =v0.0.1"},
				{"d1 r.io/d1 v0.0.1", "r.io/s =v0.0.1"}, {"d2 r.io/d2 v0.0.1", "r.io/s =v0.0.1"}, {"s r.io/s v0.0.1"}},
			mode: upgrades, want: "upgrade configuration/d1 v0.0.1→v0.0.2",
			stall: "r.io/s does not have a valid version", sick: "configuration/d1"},
		{name: "moving both parents together resolves",
			lock: [][]string{
				{"a r.io/a v2.0.0", "r.io/d1 =v0.0.2"}, {"b r.io/b v2.0.0", "r.io/d2 =v0.0.2"},
				{"d1 r.io/d1 v0.0.1", "r.io/s =v0.0.1"}, {"d2 r.io/d2 v0.0.1", "r.io/s =v0.0.1"}, {"s r.io/s v0.0.1"}},
			mode: upgrades, want: "upgrade configuration/d1 v0.0.1→v0.0.2; upgrade configuration/d2 v0.0.1→v0.0.2; upgrade configuration/s v0.0.1→v0.0.2"},
		{name: "without upgrades the same move leaves the parents unhealthy",
			lock: [][]string{
				{"a r.io/a v2.0.0", "r.io/d1 =v0.0.2"}, {"d1 r.io/d1 v0.0.1", "r.io/s =v0.0.1"}, {"s r.io/s v0.0.1"}},
			sick: "configuration/a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lock, objs := lockOf(tc.lock...)
			o := Simulate(reg, settingsOf(tc.mode), lock, objs)
			if got := changesOf(o); got != tc.want {
				t.Errorf("changes: got %q, want %q", got, tc.want)
			}
			switch {
			case tc.stall == "" && !o.Resolves:
				t.Errorf("the Lock stalls (%+v), want it resolved", o.Stall)
			case tc.stall != "" && (o.Stall == nil || !strings.Contains(o.Stall.Message, tc.stall)):
				t.Errorf("stall: got %+v, want one saying %q", o.Stall, tc.stall)
			}
			if got := unhealthyOf(o); got != tc.sick {
				t.Errorf("unhealthy: got %q, want %q (%+v)", got, tc.sick, o.Unhealthy)
			}
			if o.Unknown != "" {
				t.Errorf("unknown: %s", o.Unknown)
			}
		})
	}
}

// TestSimulateCustomName: with upgrades the resolver moves the package of
// a dependency's repository whatever its name.
func TestSimulateCustomName(t *testing.T) {
	reg := fakeSource{"r.io/d": {"v0.1.0": nil, "v0.2.0": nil}}
	lock, objs := lockOf([]string{"a r.io/a v2.0.0", "r.io/d >=v0.2.0"}, []string{"custom-d r.io/d v0.1.0"})
	o := Simulate(reg, Settings{Upgrades: true}, lock, objs)
	if got := changesOf(o); got != "upgrade configuration/custom-d v0.1.0→v0.2.0" || !o.Resolves {
		t.Fatalf("got %q (resolves %v)", got, o.Resolves)
	}
	if c := o.Changes[0]; len(c.Constraints) != 1 || c.Constraints[0] != (versions.Hold{By: "configuration/a", Constraint: ">=v0.2.0"}) || !strings.Contains(c.Reason, "lowest version at or above v0.1.0") {
		t.Fatalf("change: %+v", c)
	}
}

// TestSimulateUnlisted: a repository whose versions cannot be listed
// leaves the outcome unknown (the package manager may reach it), where
// the plan stops; it is no stall.
func TestSimulateUnlisted(t *testing.T) {
	lock, objs := lockOf([]string{"a r.io/a v1.0.0", "r.io/elsewhere >=v1.0.0"})
	o := Simulate(fakeSource{}, Settings{}, lock, objs)
	if o.Resolves || o.Stall != nil || !strings.Contains(o.Unknown, "the versions of r.io/elsewhere could not be listed") {
		t.Fatalf("got %+v", o)
	}
}

// TestSimulateDuplicateNode: two entries of one source stop the resolver
// before it does anything.
func TestSimulateDuplicateNode(t *testing.T) {
	lock, objs := lockOf([]string{"a r.io/a v1.0.0"}, []string{"a2 r.io/a v1.0.1"})
	o := Simulate(fakeSource{}, Settings{}, lock, objs)
	if o.Resolves || o.Stall == nil || !strings.Contains(o.Stall.Message, "node r.io/a already exists") {
		t.Fatalf("got %+v", o)
	}
}
