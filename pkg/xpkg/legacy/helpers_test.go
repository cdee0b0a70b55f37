package legacy

import (
	"os"
	"path"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// minimalApp is the smallest app.yaml that translates.
const minimalApp = "title: Test Package\nversion: 0.1.0\n"

// crdYAML is a CRD in the form of the design's example crd.yaml.
func crdYAML(group, kind, plural, version string) string {
	return `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: ` + plural + "." + group + `
spec:
  group: ` + group + `
  names:
    kind: ` + kind + `
    plural: ` + plural + `
  scope: Namespaced
  version: ` + version + "\n"
}

// tree builds an in-memory package: each key is a path below .registry.
func regTree(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[path.Join(DefaultRoot, name)] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

// mustTranslate translates fsys and fails the test on an error.
func mustTranslate(t *testing.T, fsys fstest.MapFS, opts Options) *Result {
	t.Helper()
	res, err := Translate(fsys, opts)
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	return res
}

// sampleOptions are the PackageInstall settings the sample is translated
// with: the design's default source registry and the image named in the
// comment of its example install.yaml, tagged with app.yaml's version.
func sampleOptions() Options {
	return Options{Image: "crossplane/sample-stack:0.0.1", Source: "registry.crossplane.io"}
}

// translateSample translates testdata/sample, built from the design's
// example files.
func translateSample(t *testing.T) *Result {
	t.Helper()
	res, err := Translate(os.DirFS("testdata/sample"), sampleOptions())
	if err != nil {
		t.Fatalf("Translate(testdata/sample): %v", err)
	}
	return res
}

// crdNamed finds the CRD with the given name and version.
func crdNamed(t *testing.T, res *Result, name, version string) *unstructured.Unstructured {
	t.Helper()
	for _, c := range res.CRDs {
		if v, _, _ := unstructured.NestedString(c.Object, "spec", "version"); c.GetName() == name && v == version {
			return c
		}
	}
	t.Fatalf("no CRD %s version %s among %d CRDs", name, version, len(res.CRDs))
	return nil
}

// field reads a nested field, failing the test when it is missing.
func field(t *testing.T, obj map[string]any, fields ...string) any {
	t.Helper()
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if err != nil || !found {
		t.Fatalf("field %s: found=%v err=%v", strings.Join(fields, "."), found, err)
	}
	return v
}

// checkFields compares fields of obj, by path, to the values wanted.
func checkFields(t *testing.T, obj map[string]any, want map[string]any) {
	t.Helper()
	for p, w := range want {
		got := field(t, obj, strings.Split(p, ".")...)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %#v, want %#v", p, got, w)
		}
	}
}

// hasWarning reports whether a warning contains every one of parts.
func hasWarning(res *Result, parts ...string) bool {
	for _, w := range res.Warnings {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(w, p)
		}
		if all {
			return true
		}
	}
	return false
}
