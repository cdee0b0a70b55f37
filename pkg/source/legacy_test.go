package source_test

import (
	"io"
	"strings"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/source"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/fixture"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/testenv"
)

// TestLegacyImage reads a .registry/ package (the seeds' sample) from an
// image, in the flattened filesystem as old packages had no annotation, and
// gets its translation as the content.
func TestLegacyImage(t *testing.T) {
	root, _ := testenv.ModuleRoot()
	img, err := fixture.LegacySample(root)
	if err != nil {
		t.Fatal(err)
	}
	reg := newRegistry(t)
	ref := reg.push(t, "crossplane/sample-stack:v0.0.1", img)
	p, err := source.Open(t.Context(), ref, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Format != source.FormatLegacy || p.Stream() != nil || !strings.HasPrefix(p.Rule, "no base layer annotation: flattened filesystem") {
		t.Fatalf("read as %q by %q", p.Format, p.Rule)
	}
	content, err := p.Content()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(content)
	for _, want := range []string{"kind: Package\n", "packages.crossplane.io/icon-data-uri: data:image/svg+xml;base64,", "app.kubernetes.io/managed-by: package-manager"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("translation lacks %q", want)
		}
	}
	if n := strings.Count(string(b), "kind: CustomResourceDefinition\n"); n != 3 {
		t.Errorf("%d CRDs in the translation, want 3", n)
	}
}
