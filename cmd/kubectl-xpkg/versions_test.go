package main

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestVersionsAsAUserWhoMayNotListPackages: the versions, and a warning
// that none could be marked, not a blank column that says none runs.
// (The listing, its marks and flags: plugin's TestVersions, over a fake
// cluster and an in-process registry.)
func TestVersionsAsAUserWhoMayNotListPackages(t *testing.T) {
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	stream, _ := source.DirStream(sampleDir(t, "provider-nop", "v0.4.0"))
	img, _ := fixture.Image(stream)
	repo := reg.Host + "/versions/provider-nop"
	for _, tag := range []string{"v0.2.1", "v0.10.0", "v0.4.0", "latest", "v1.0.0-rc.1"} {
		if err := fixture.Push(repo+":"+tag, img, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
			t.Fatal(err)
		}
	}
	x := clitest.New(t).WithEnv(env)
	r := x.Run("versions", repo, "--context", testenv.ContextUser).Succeeds(t)
	if r.Stdout != "VERSION   INSTALLED\nv0.10.0\nv0.4.0\nv0.2.1\nlatest\n" {
		t.Errorf("versions as a user who may not list packages:\n%s", r.Stdout)
	}
	contains(t, "versions as a user who may not list packages", r.Stderr,
		"Warning: the installed packages could not be listed, so none is marked: ", `User "xpkg-dev" cannot list resource`)
}
