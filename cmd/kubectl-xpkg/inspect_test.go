package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/clitest"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// inspectDoc is inspect -o json.
type inspectDoc struct {
	Kind, Name, Version, Crossplane string
	Objects                         []struct {
		APIVersion, Kind string
		Count            int
	}
	Runtime struct{ Kind string }
	Image   *struct {
		Manifest, Config string
		Layers           int
		Base             *struct {
			Digest, DiffID string
			Size           int64
			Uncompressed   int64 `json:"uncompressedSize"`
		}
	}
}

// TestInspectEverySample inspects every sample package, as a directory and
// from the registry, and checks the report against the package itself:
// its meta object, and its objects counted by kind as extract lists them.
func TestInspectEverySample(t *testing.T) {
	env := testenv.Get(t)
	reg := env.RequireRegistry(t)
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.PushSamples(root, reg.Host, remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password})); err != nil {
		t.Fatal(err)
	}
	samples, err := fixture.Samples(root)
	if err != nil {
		t.Fatal(err)
	}
	x := clitest.New(t).WithEnv(env)
	for _, s := range samples {
		// What the package holds, from extract.
		var list struct {
			Items []struct {
				APIVersion, Kind string
				Metadata         struct{ Name string }
			}
		}
		if err := json.Unmarshal([]byte(x.Run("extract", s.Dir, "-o", "json").Succeeds(t).Stdout), &list); err != nil {
			t.Fatal(err)
		}
		want := map[string]int{}
		var kind, name string
		for _, it := range list.Items {
			if strings.HasPrefix(it.APIVersion, "meta.pkg.crossplane.io/") {
				kind, name = it.Kind, it.Metadata.Name
				continue
			}
			want[it.APIVersion+" "+it.Kind]++
		}
		ref := s.Repository(reg.Host) + ":" + s.Tag
		for _, src := range []string{s.Dir, ref} {
			var d inspectDoc
			r := x.Run("inspect", src, "-o", "json").Succeeds(t)
			if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
				t.Fatalf("inspect %s: %v\n%s", src, err, r.Stdout)
			}
			got := map[string]int{}
			for _, o := range d.Objects {
				got[o.APIVersion+" "+o.Kind] = o.Count
			}
			if d.Kind != kind || d.Name != name || !equalCounts(got, want) {
				t.Errorf("inspect %s: %s %s %v; want %s %s %v", src, d.Kind, d.Name, got, kind, name, want)
			}
			if src == s.Dir {
				if d.Image != nil || d.Version != "" {
					t.Errorf("inspect %s (a directory) reports an image or version: %+v", src, d)
				}
				continue
			}
			if d.Version != s.Tag || d.Image == nil || d.Image.Base == nil || !strings.HasPrefix(d.Image.Manifest, "sha256:") ||
				!strings.HasPrefix(d.Image.Config, "sha256:") || !strings.HasPrefix(d.Image.Base.DiffID, "sha256:") ||
				d.Image.Base.Size <= 0 || d.Image.Base.Uncompressed <= d.Image.Base.Size {
				t.Errorf("inspect %s: version %q image %+v", src, d.Version, d.Image)
			}
		}
	}
	// The text form, once.
	r := x.Run("inspect", reg.Host+"/crossplane-contrib/provider-nop:v0.4.0").Succeeds(t)
	for _, w := range []string{"Kind:         Provider (meta.pkg.crossplane.io/v1)", "Version:      v0.4.0",
		"CustomResourceDefinition", "Runtime:      the package image itself", "Base layer:  sha256:"} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("inspect lacks %q:\n%s", w, r.Stdout)
		}
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestInspectShowsAnnotationsThatAreNoStrings: an annotation YAML reads as
// a number or a boolean is shown as written, with the problem it is
// (Crossplane refuses the package), not dropped; an empty one is "".
func TestInspectShowsAnnotationsThatAreNoStrings(t *testing.T) {
	dir := t.TempDir()
	meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: typed\n  annotations:\n" +
		"    descriptionShort: 42\n    meta.crossplane.io/readme: true\n    license:\n    company: Example\n"
	if err := os.WriteFile(filepath.Join(dir, "crossplane.yaml"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	x := clitest.New(t)
	r := x.Run("inspect", dir, "-o", "json").Succeeds(t)
	var doc struct {
		Annotations map[string]string
		Problems    []string
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("inspect -o json: %v\n%s", err, r.Stdout)
	}
	want := map[string]string{"descriptionShort": "42", "meta.crossplane.io/readme": "true", "license": "", "company": "Example"}
	if !maps.Equal(doc.Annotations, want) {
		t.Errorf("annotations %v; want %v", doc.Annotations, want)
	}
	if len(doc.Problems) != 2 || !strings.Contains(doc.Problems[0], "metadata.annotations[descriptionShort] is a") ||
		!strings.Contains(doc.Problems[1], "metadata.annotations[meta.crossplane.io/readme] is a") {
		t.Errorf("problems %q; want the two annotations that are no strings", doc.Problems)
	}
	r = x.Run("inspect", dir).Succeeds(t)
	contains(t, "inspect", r.Stdout, "  descriptionShort: 42\n", "Problems:\n  metadata.annotations[descriptionShort] is a")
}
