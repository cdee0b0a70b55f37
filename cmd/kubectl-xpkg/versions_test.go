package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func TestVersions(t *testing.T) {
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
	x.Run("install", "provider", repo+":v0.4.0", "versions-nop").Succeeds(t)
	t.Cleanup(func() { x.Run("uninstall", "versions-nop") })

	r := x.Run("versions", repo).Succeeds(t)
	want := "VERSION   INSTALLED\nv0.10.0\nv0.4.0    provider/versions-nop\nv0.2.1\nlatest\n"
	if r.Stdout != want {
		t.Errorf("versions:\n%s\nwant:\n%s", r.Stdout, want)
	}
	r = x.Run("versions", repo, "--pre", "--constraint", ">=0.3.0-0", "-o", "json").Succeeds(t)
	var got []struct{ Tag string }
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, g := range got {
		tags = append(tags, g.Tag)
	}
	if strings.Join(tags, ",") != "v1.0.0-rc.1,v0.10.0,v0.4.0" {
		t.Errorf("--pre --constraint: %v", tags)
	}
	r = x.Run("versions", repo, "--constraint", ">>bad").Fails(t, 1)
	contains(t, "bad constraint", r.Stderr, `version constraint ">>bad"`)

	// A user who may not list packages: the versions, and a warning that
	// none could be marked, not a blank column that says none runs.
	r = x.Run("versions", repo, "--context", testenv.ContextUser).Succeeds(t)
	if r.Stdout != "VERSION   INSTALLED\nv0.10.0\nv0.4.0\nv0.2.1\nlatest\n" {
		t.Errorf("versions as a user who may not list packages:\n%s", r.Stdout)
	}
	contains(t, "versions as a user who may not list packages", r.Stderr,
		"Warning: the installed packages could not be listed, so none is marked: ", `User "xpkg-dev" cannot list resource`)
}
