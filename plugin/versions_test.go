package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// TestVersions: versions lists a repository's tags newest first (releases,
// then other tags), marks the one a package runs, and takes --pre and
// --constraint. (A user who may not list packages: cmd/kubectl-xpkg's
// TestVersionsAsAUserWhoMayNotListPackages, against an API server.)
func TestVersions(t *testing.T) {
	reg := fixture.NewRegistry(t)
	ref, stream := pushSample(t, reg, "provider-nop", "v0.4.0")
	repo := ref[:strings.LastIndex(ref, ":")]
	for _, tag := range []string{"v0.2.1", "v0.10.0", "latest", "v1.0.0-rc.1"} {
		reg.PushStream(t, "cli/provider-nop:"+tag, string(stream))
	}
	x := newCLI(t)
	x.Run("install", "provider", repo+":v0.4.0", "versions-nop").Succeeds(t)

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
}
