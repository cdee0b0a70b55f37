package testenv

import (
	"context"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestMain(m *testing.M) {
	runHelper() // when a test started this binary as a helper process: never returns
	Main(m)
}

// TestV0CRDsKeepTheirSchemas: Crossplane v0.x's v1beta1 CRDs, converted to
// v1, keep their schemas (a PackageInstall's spec.package is a string) and
// the API server takes every one of them as it is (a dry-run create: v1
// refuses a schema that is not structural).
func TestV0CRDsKeepTheirSchemas(t *testing.T) {
	env := Get(t)
	dyn, err := env.DynamicClient(ContextAdmin)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(root, "hack", "testdata", "crds")}
	for _, v := range []string{"v0.10.0", "v0.11.0"} {
		dir, err := CrossplaneCRDDir(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	checked := 0
	for i, dir := range dirs {
		crds, err := ReadCRDs(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, crd := range crds {
			// Under a group of its own: the environment serves some of
			// these names already, at Crossplane v2.
			c := crd.DeepCopy()
			group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
			plural, _, _ := unstructured.NestedString(c.Object, "spec", "names", "plural")
			_ = unstructured.SetNestedField(c.Object, "v0test."+group, "spec", "group")
			c.SetName(plural + ".v0test." + group)
			if _, err := dyn.Resource(crdGVR).Create(ctx, c, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Errorf("%s: the API server refuses the converted CRD: %v", crd.GetName(), err)
			}
			checked++
			if i == 0 { // the seed's CRDs come without a schema
				continue
			}
			versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			for _, v := range versions {
				s, _, _ := unstructured.NestedMap(v.(map[string]any), "schema", "openAPIV3Schema")
				if props, _, _ := unstructured.NestedMap(s, "properties"); len(props) == 0 {
					t.Errorf("%s: the converted schema names no fields", crd.GetName())
				}
			}
		}
	}
	pi, err := ReadCRDs(dirs[2])
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range pi {
		if crd.GetName() != "packageinstalls.packages.crossplane.io" {
			continue
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		typ, _, _ := unstructured.NestedString(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "package", "type")
		if typ != "string" {
			t.Errorf("packageinstalls: spec.package has type %q, want string", typ)
		}
	}
	if checked < 40 {
		t.Errorf("checked %d CRDs", checked)
	}
}
