package source_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestEverySourceFormIsByteIdentical reads each real sample package from the
// real (authenticated) registry, an .xpkg tarball, an OCI layout and its
// source directory, and gets the same package.yaml from all four.
func TestEverySourceFormIsByteIdentical(t *testing.T) {
	reg := testenv.Get(t).RequireRegistry(t)
	t.Setenv("DOCKER_CONFIG", reg.DockerConfig)
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	samples, err := fixture.Samples(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if s.Set != "packages" {
			continue
		}
		t.Run(s.Name+"@"+s.Tag, func(t *testing.T) {
			want, err := source.DirStream(s.Dir)
			if err != nil {
				t.Fatal(err)
			}
			img, err := fixture.Image(want)
			if err != nil {
				t.Fatal(err)
			}
			ref := reg.Host + "/forms/" + s.Name + ":" + s.Tag
			if err := fixture.Push(ref, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
				t.Fatal(err)
			}
			tarball := filepath.Join(t.TempDir(), s.Name+".xpkg")
			if err := fixture.WriteTarball(tarball, "example.test/"+s.Name+":"+s.Tag, img); err != nil {
				t.Fatal(err)
			}
			forms := map[string]string{"registry": ref, "tarball": tarball, "oci-layout": writeLayout(t, img), "directory": s.Dir}
			for form, src := range forms {
				p, got, err := readAll(t, src, source.Options{})
				if err != nil {
					t.Fatalf("%s %s: %v", form, src, err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: package.yaml differs (%d bytes, want %d)", form, len(got), len(want))
				}
				if p.Type != form && !(form == "directory" && p.Type == source.TypeDirectory) {
					t.Errorf("%s read as %s", form, p.Type)
				}
			}
		})
	}
}
