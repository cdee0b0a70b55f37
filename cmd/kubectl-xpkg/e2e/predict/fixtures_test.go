package predict

import (
	"fmt"
	"path"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

// dep is one entry of a package's dependsOn: a configuration's
// repository and the version constraint (or a digest). Configurations
// alone: they need no runtime, so health is the package manager's word.
type dep struct{ repo, constraint string }

func needs(repo, constraint string) dep { return dep{repo, constraint} }

// push pushes a configuration as repo:tag that depends on deps, and
// returns its digest. Each tag's image is its own (the tag is in an
// annotation), so that no two tags share a digest, and so a revision.
func (s *suite) push(t *testing.T, repo, tag string, deps ...dep) string {
	t.Helper()
	meta := fmt.Sprintf("apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: %s\n"+
		"  annotations:\n    e2e.kubectl-xpkg.io/tag: %q\n", path.Base(repo), tag)
	if len(deps) > 0 {
		meta += "spec:\n  dependsOn:\n"
		for _, d := range deps {
			meta += fmt.Sprintf("  - configuration: %s\n    version: %q\n", d.repo, d.constraint)
		}
	}
	img, err := fixture.Image([]byte(meta))
	if err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.Push(repo+":"+tag, img, s.auth); err != nil {
		t.Fatal(err)
	}
	return digest.String()
}

// pushTags pushes repo at each tag, each with the same dependencies.
func (s *suite) pushTags(t *testing.T, repo string, tags []string, deps ...dep) {
	t.Helper()
	for _, tag := range tags {
		s.push(t, repo, tag, deps...)
	}
}
