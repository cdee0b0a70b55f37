// Package predict holds plans to account as predictions: each step plans a
// directory of package manifests (`kubectl xpkg plan -f DIR -o json`),
// applies it as a GitOps tool would, and waits until the real Crossplane
// package manager settles where the plan said it would: every package's
// version and health, and whether the Lock resolves. hack/test.sh runs the
// package once per release as Crossplane runs by default, and once more
// with the alpha flags that let its resolver move installed dependencies
// (--enable-dependency-version-upgrades and -downgrades), which a plan
// learns from the Deployment crossplane.
//
// The tests run one after another, never in parallel: the Lock is one per
// cluster, and a scenario that stalls it would hold up the next.
package predict

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The flags of `crossplane core start` that let the resolver move an
// installed dependency (downgrades implies upgrades).
const (
	upgradesFlag   = "--enable-dependency-version-upgrades"
	downgradesFlag = "--enable-dependency-version-downgrades"
)

// mode is how the running Crossplane's resolver treats installed
// dependencies.
type mode struct{ upgrades, downgrades bool }

func modeOf(args []string) mode {
	down := slices.Contains(args, downgradesFlag)
	return mode{upgrades: down || slices.Contains(args, upgradesFlag), downgrades: down}
}

func (m mode) String() string {
	switch {
	case m.downgrades:
		return "with dependency upgrades and downgrades"
	case m.upgrades:
		return "with dependency upgrades"
	}
	return "without dependency upgrades"
}

// suite is one scenario's view of the environment: the package manager, a
// client, the plugin's runner and the registry the fixtures go to.
type suite struct {
	xp   *crossplane.Crossplane
	reg  *testenv.Registry
	dyn  dynamic.Interface
	x    *clitest.Test
	mode mode
	auth remote.Option
}

// begin starts a scenario on an empty cluster: no package, an empty Lock,
// and the Deployment crossplane recorded with the flags Crossplane runs
// with. Whatever the scenario installs is removed when it ends.
func begin(t *testing.T) *suite {
	t.Helper()
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	xp := crossplane.Get(t, env)
	dyn, err := env.DynamicClient(testenv.ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{xp: xp, reg: reg, dyn: dyn, x: clitest.New(t).WithEnv(env), mode: modeOf(xp.Args),
		auth: remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})}
	if err := s.clear(); err != nil {
		t.Fatalf("the cluster is not empty at the start: %v", err)
	}
	remove, err := xp.RecordRelease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		remove()
		if err := s.clear(); err != nil {
			t.Errorf("removing what the test installed: %v", err)
		}
	})
	t.Logf("Crossplane %s %s (arguments %q)", xp.Version, s.mode, strings.Join(xp.Args, " "))
	return s
}

// repo is the fixture repository named short, and dependency the
// configuration Crossplane's resolver installs from it, named by the DNS
// label of the repository's path.
func (s *suite) repo(short string) string { return s.reg.Host + "/" + repoPath + short }

func dependency(short string) string {
	return "configuration/" + strings.ReplaceAll(repoPath, "/", "-") + short
}

const repoPath = "e2e/predict/"
