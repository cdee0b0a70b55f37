package legacy

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzTranslate feeds arbitrary app.yaml, CRD file and ui-schema content
// through Translate. It must never panic, and must either fail with a
// one-line error naming a file or return a Package record that WriteYAML
// can write.
func FuzzTranslate(f *testing.F) {
	sample := func(rel string) []byte {
		b, err := os.ReadFile("testdata/sample/.registry/" + rel)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	install, icon := sample("install.yaml"), sample("icon.svg")
	f.Add(sample("app.yaml"), sample("resources/samples.crossplane.io/mytype/v1alpha1/mytype.v1alpha1.crd.yaml"), sample("ui-schema.yaml"))
	f.Add([]byte(minimalApp), []byte(crdYAML("example.org", "Widget", "widgets", "v1")+"---\n"), []byte("---\na: 1\n---\n"))
	f.Add([]byte("version: 1\n---\n"), []byte("kind: CustomResourceDefinition\n"), []byte(""))
	f.Add([]byte("title: &a [*a]\n"), []byte("--- |\n  x\n"), []byte("- [\n"))
	f.Fuzz(func(t *testing.T, app, crd, ui []byte) {
		fsys := fstest.MapFS{
			".registry/app.yaml":                       {Data: app},
			".registry/install.yaml":                   {Data: install},
			".registry/icon.svg":                       {Data: icon},
			".registry/resources/g/fuzz.crd.yaml":      {Data: crd},
			".registry/resources/g/ui-schema.yaml":     {Data: ui},
			".registry/resources/g/fuzz.resource.yaml": {Data: app},
			".registry/resources/g/group.yaml":         {Data: app},
		}
		res, err := Translate(fsys, Options{Image: "crossplane/fuzz:v1", Source: "registry.example.com"})
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, ".registry/") {
				t.Fatalf("error is not one line naming a file: %q", msg)
			}
			return
		}
		if res.Package == nil || res.Package.GetKind() != PackageKind {
			t.Fatalf("no Package record and no error")
		}
		var buf bytes.Buffer
		if err := res.WriteYAML(&buf); err != nil {
			t.Fatalf("WriteYAML: %v", err)
		}
	})
}
