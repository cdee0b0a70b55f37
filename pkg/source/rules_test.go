package source_test

import (
	"bytes"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
)

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
)

func mustImage(t *testing.T, b []byte, p v1.Platform) v1.Image {
	t.Helper()
	img, err := fixture.ImageFor(b, p)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestIndexRules(t *testing.T) {
	reg := newRegistry(t)
	amdStream, armStream := stream(t, "Provider"), append(stream(t, "Provider"), "# arm64\n"...)
	multi := reg.push(t, "multi:v1", fixture.Index(
		fixture.PlatformImage{Platform: arm64, Image: mustImage(t, armStream, arm64)},
		fixture.PlatformImage{Platform: amd64, Image: mustImage(t, amdStream, amd64)}))
	single := reg.push(t, "single:v1", fixture.Index(fixture.PlatformImage{Platform: arm64, Image: mustImage(t, armStream, arm64)}))
	emptyIdx := reg.push(t, "empty:v1", mutate.IndexMediaType(empty.Index, types.OCIImageIndex))
	nested := reg.push(t, "nested:v1", mutate.AppendManifests(empty.Index, mutate.IndexAddendum{
		Add: fixture.Index(fixture.PlatformImage{Platform: amd64, Image: mustImage(t, amdStream, amd64)})}))
	armOnly := reg.push(t, "armonly:v1", fixture.Index(
		fixture.PlatformImage{Platform: arm64, Image: mustImage(t, armStream, arm64)},
		fixture.PlatformImage{Platform: v1.Platform{OS: "linux", Architecture: "s390x"}, Image: mustImage(t, armStream, arm64)}))

	cases := []struct {
		name     string
		ref      string
		platform *v1.Platform
		want     []byte
		wantErr  string
		wantNote string
	}{
		{name: "several manifests: linux/amd64 by default", ref: multi, want: amdStream, wantNote: "chose linux/amd64"},
		{name: "several manifests: --platform", ref: multi, platform: &arm64, want: armStream, wantNote: "chose linux/arm64"},
		{name: "one manifest: used whatever its platform", ref: single, want: armStream, wantNote: "one manifest"},
		{name: "no manifest", ref: emptyIdx, wantErr: "has no manifests: an xpkg index must reference at least one"},
		{name: "nested index", ref: nested, wantErr: "points to another index"},
		{name: "platform missing", ref: armOnly, wantErr: "has no manifest for linux/amd64 (it has linux/arm64, linux/s390x): choose one with --platform"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions()
			o.Platform = c.platform
			p, got, err := readAll(t, c.ref, o)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, c.want) {
				t.Errorf("package.yaml = %q, want %q", got, c.want)
			}
			if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], c.wantNote) {
				t.Errorf("notes = %v, want one with %q", p.Notes, c.wantNote)
			}
		})
	}
}

func TestLayerRules(t *testing.T) {
	reg := newRegistry(t)
	s := stream(t, "Configuration")
	base, err := fixture.Layer(fixture.File{Name: "package.yaml", Body: s})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := fixture.Layer(fixture.File{Name: "package.yaml", Body: []byte("kind: Decoy\n")})
	twoBase, _ := fixture.ImageOf([]v1.Layer{base, other}, 0, 1)
	secondBase, _ := fixture.ImageOf([]v1.Layer{other, base}, 1)
	unannotated, _ := fixture.Unannotated(s)
	inSubdir, _ := fixture.Layer(fixture.File{Name: "pkg/package.yaml", Body: s})
	notAtRoot, _ := fixture.ImageOf([]v1.Layer{inSubdir}, 0)
	dup, _ := fixture.Layer(fixture.File{Name: "package.yaml", Body: s}, fixture.File{Name: "./package.yaml", Body: s})
	dupImg, _ := fixture.ImageOf([]v1.Layer{dup}, 0)

	cases := []struct {
		name, ref, wantErr, wantRule string
	}{
		{name: "only the annotated layer is read", ref: reg.push(t, "second:v1", secondBase), wantRule: "base layer annotated in the manifest"},
		{name: "flattened filesystem without annotation", ref: reg.push(t, "flat:v1", unannotated), wantRule: "flattened filesystem of 2 layers"},
		{name: "two base layers", ref: reg.push(t, "two:v1", twoBase), wantErr: "has 2 layers annotated io.crossplane.xpkg: base: at most one is allowed"},
		{name: "package.yaml not at the root", ref: reg.push(t, "subdir:v1", notAtRoot), wantErr: "has no package.yaml at its root (first entries: pkg/package.yaml)"},
		{name: "duplicate package.yaml", ref: reg.push(t, "dup:v1", dupImg), wantErr: "holds more than one package.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, got, err := readAll(t, c.ref, testOptions())
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, s) || !strings.Contains(p.Rule, c.wantRule) {
				t.Errorf("package.yaml %q by rule %q; want %q by %q", got, p.Rule, s, c.wantRule)
			}
		})
	}
}
