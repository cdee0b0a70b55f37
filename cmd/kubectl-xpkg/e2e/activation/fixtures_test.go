package activation

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// providerPackage is the provider's package.yaml: safe-start, the managed
// kinds of both groups and a ProviderConfig.
func providerPackage() string {
	out := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: " + providerName +
		"\nspec:\n  capabilities: [safe-start]\n"
	for _, k := range storageKinds {
		out += crd(storage, k)
	}
	for _, k := range networkKinds {
		out += crd(network, k)
	}
	return out + crd(configGroup, "ProviderConfig")
}

// crd is a cluster-scoped CRD of kind in group, served and stored at
// v1beta1, in the shape of a provider's.
func crd(group, kind string) string {
	return fmt.Sprintf(`---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s
spec:
  group: %[2]s
  names:
    kind: %[3]s
    listKind: %[3]sList
    plural: %[4]ss
    singular: %[4]s
    categories: [crossplane, managed, acme]
  scope: Cluster
  versions:
  - name: v1beta1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`, mrdName(kind, group), group, kind, strings.ToLower(kind))
}

// composition is a pipeline Composition of the composite kind xr whose
// steps are given as YAML, each indented for the pipeline list.
func composition(name, xr string, steps ...string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata:
  name: %s
spec:
  compositeTypeRef:
    apiVersion: platform.example.org/v1alpha1
    kind: %s
  mode: Pipeline
  pipeline:
%s`, name, xr, strings.Join(steps, ""))
}

// ptStep is a function-patch-and-transform step composing one resource of
// each kind in group.
func ptStep(group string, kinds ...string) string {
	s := `  - step: compose
    functionRef:
      name: function-patch-and-transform
    input:
      apiVersion: pt.fn.crossplane.io/v1beta1
      kind: Resources
      resources:
`
	for _, k := range kinds {
		s += fmt.Sprintf(`      - name: %s
        base:
          apiVersion: %s/v1beta1
          kind: %s
          spec:
            forProvider:
              region: eu-west-1
        patches:
        - fromFieldPath: spec.region
          toFieldPath: spec.forProvider.region
`, strings.ToLower(k), group, k)
	}
	return s
}

// goTemplatingStep is a function-go-templating step whose inline template
// composes one resource of kind in group, then function-auto-ready's step
// (which composes nothing).
func goTemplatingStep(group, kind string) string {
	return fmt.Sprintf(`  - step: render
    functionRef:
      name: function-go-templating
    input:
      apiVersion: gotemplating.fn.crossplane.io/v1beta1
      kind: GoTemplate
      source: Inline
      inline:
        template: |
          apiVersion: %s/v1beta1
          kind: %s
          metadata:
            annotations:
              gotemplating.fn.crossplane.io/composition-resource-name: %s
          spec:
            forProvider:
              cidrBlock: {{ .observed.composite.resource.spec.cidr }}
  - step: ready
    functionRef:
      name: function-auto-ready
`, group, kind, strings.ToLower(kind))
}

// unknownInput is the function-input kind of a function the plan does not
// know, and unknownStep a step that uses it.
const unknownInput = "Blueprint.blueprint.fn.acme.example.org"

const unknownStep = `  - step: blueprint
    functionRef:
      name: function-acme-blueprint
    input:
      apiVersion: blueprint.fn.acme.example.org/v1alpha1
      kind: Blueprint
      spec:
        size: small
        tier: gold
`

// mrap is an MRAP named name activating entries.
func mrap(name string, entries ...string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.crossplane.io/v1alpha1
kind: ManagedResourceActivationPolicy
metadata:
  name: %s
spec:
  activate: [%s]
`, name, strings.Join(entries, ", "))
}

// decode reads one object of YAML.
func decode(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%v:\n%s", err, text)
	}
	return &unstructured.Unstructured{Object: m}
}

// writeFiles writes each file (name to YAML) into a new directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
