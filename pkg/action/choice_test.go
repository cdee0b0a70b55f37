package action

import (
	"context"
	"fmt"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// TestVerbsChooseAlike: for the same tags and constraint, every verb
// that chooses a dependency's version answers alike: plan -f's closure
// (what the package manager installs), the registry check of install,
// upgrade and outdated (whether any version matches), mirror's closure,
// outdated's WANTED for a dependency running below every tag, and the
// version a family moves to.
func TestVerbsChooseAlike(t *testing.T) {
	m := newMirrorRegistry(t)
	ctx := context.Background()
	for i, tc := range []struct {
		tags       []string
		constraint string
		want       string // "" for none
	}{
		{[]string{"v1.0.0", "v1.1.0", "v2.0.0"}, ">=v1.0.0 <v2.0.0", "v1.1.0"},
		{[]string{"v1.0.0", "v1.1", "v2"}, ">=v1.0.0", "v1.0.0"},
		{[]string{"1.2.0", "v1.1.0"}, ">=1.0.0", "1.2.0"},
		{[]string{"v1.0.0", "v1.1.0-rc.1"}, ">=v1.0.0", "v1.0.0"},
		{[]string{"v1.0.0", "v1.1.0-rc.1"}, ">=v1.1.0-0", "v1.1.0-rc.1"},
		{[]string{"v1.0.0", "v1", "v1.0.1"}, "v1.0.0", "v1.0.0"},
		{[]string{"v0.1.0"}, ">=v1.0.0", ""},
	} {
		dep := fmt.Sprintf("org/dep-%d", i)
		for _, tag := range tc.tags {
			m.push("Provider", dep, tag)
		}
		root := fmt.Sprintf("org/root-%d", i)
		m.push("Configuration", root, "v1.0.0", "provider "+dep+" "+tc.constraint)
		d := xpkg.Dependency{Package: m.repo(dep), Version: tc.constraint}
		answers := map[string]string{}

		lock := []installed.LockPackage{{Name: "root-1", Source: m.repo(root), Version: "v1.0.0",
			Dependencies: []installed.LockDependency{{Package: m.repo(dep), Constraints: tc.constraint, Type: "Provider"}}}}
		if o := resolve.Simulate(resolve.NewClosure(ctx, resolve.Direct(source.Options{}), nil, xpkg.DefaultLimits), resolve.Settings{}, lock, nil); len(o.Changes) > 0 {
			answers["plan -f"] = o.Changes[0].To
		}
		if plan, err := m.plan(root + ":v1.0.0"); err == nil {
			answers["mirror"] = versionsOf(plan)[dep]
		}
		it := famItem("dep", m.repo(dep), "v0.0.0", tc.tags...)
		(&Outdated{}).decide(it, lock, nil)
		if it.Moves() {
			answers["outdated"] = it.Wanted
		}
		answers["families"], _ = familyVersion([]*Item{it}, []*Item{it}, lock, false)
		for verb, got := range answers {
			if got != tc.want {
				t.Errorf("%v under %q: %s answers %q, want %q", tc.tags, tc.constraint, verb, got, tc.want)
			}
		}
		has, err := resolve.Direct(source.Options{}).HasMatch(ctx, nil, d)
		if err != nil || has != (tc.want != "") {
			t.Errorf("%v under %q: the registry check says a version matches: %v (%v)", tc.tags, tc.constraint, has, err)
		}
	}
}
