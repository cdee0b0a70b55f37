// Package acme holds the activation end-to-end tests' fixtures: the
// safe-start provider-acme, whose managed kinds come in two API groups of
// three kinds each, the Compositions that compose them, policies, and a
// cluster helper that runs the plugin and reads MRDs and CRDs.
package acme

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The resources the tests read and write.
var (
	MRDs         = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourcedefinitions"}
	MRAPs        = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Resource: "managedresourceactivationpolicies"}
	CRDs         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	Compositions = schema.GroupVersionResource{Group: "apiextensions.crossplane.io", Version: "v1", Resource: "compositions"}
)

// The provider's two API groups of managed kinds, and the group of its
// ProviderConfig, which Crossplane keeps a CRD.
const (
	Storage     = "storage.acme.example.org"
	Network     = "network.acme.example.org"
	ConfigGroup = "acme.example.org"
	Provider    = "provider-acme"
	// DefaultMRAP is the policy `crossplane core init --activation=*`
	// makes (Crossplane's initializer names it so).
	DefaultMRAP = "default"
)

// The provider's managed kinds (v0.1.0), three in each group.
var (
	StorageKinds = []string{"Bucket", "Volume", "Snapshot"}
	NetworkKinds = []string{"Network", "Subnet", "Firewall"}
)

// MRDName is the MRD (and CRD) name of kind in group: plural.group.
func MRDName(kind, group string) string { return strings.ToLower(kind) + "s." + group }

// AllMRDs are the MRD names of the provider's v0.1.0.
func AllMRDs() []string {
	var out []string
	for _, k := range StorageKinds {
		out = append(out, MRDName(k, Storage))
	}
	for _, k := range NetworkKinds {
		out = append(out, MRDName(k, Network))
	}
	return out
}

// Package is the provider's package.yaml: safe-start, the managed kinds
// of both groups given and a ProviderConfig.
func Package(storageKinds, networkKinds []string) string {
	out := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: " + Provider +
		"\nspec:\n  capabilities: [safe-start]\n"
	for _, k := range storageKinds {
		out += CRD(Storage, k)
	}
	for _, k := range networkKinds {
		out += CRD(Network, k)
	}
	return out + CRD(ConfigGroup, "ProviderConfig")
}

// CRD is a cluster-scoped CRD of kind in group, served and stored at
// v1beta1, in the shape of a provider's.
func CRD(group, kind string) string {
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
`, MRDName(kind, group), group, kind, strings.ToLower(kind))
}

// Composition is a pipeline Composition of the composite kind xr whose
// steps are given as YAML, each indented for the pipeline list.
func Composition(name, xr string, steps ...string) string {
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

// PTStep is a function-patch-and-transform step composing one resource of
// each kind in group.
func PTStep(group string, kinds ...string) string {
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

// GoTemplatingStep is a function-go-templating step whose inline template
// composes one resource of kind in group, then function-auto-ready's step
// (which composes nothing).
func GoTemplatingStep(group, kind string) string {
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

// MRAP is an MRAP named name activating entries.
func MRAP(name string, entries ...string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.crossplane.io/v1alpha1
kind: ManagedResourceActivationPolicy
metadata:
  name: %s
spec:
  activate: [%s]
`, name, strings.Join(entries, ", "))
}
