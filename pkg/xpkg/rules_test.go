package xpkg

import (
	"fmt"
	"strings"
	"testing"
)

const (
	providerMeta = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-test\nspec:\n  controller:\n    image: xpkg.crossplane.io/crossplane-contrib/provider-test:v1.0.0\n"
	configMeta   = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: configuration-test\n"
	goodCRD      = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.org\nspec:\n  group: example.org\n  names:\n    plural: widgets\n  versions:\n  - name: v1\n    served: true\n    storage: true\n"
)

// validate checks a stream both ways, whole (Read and Validate) and as a
// stream (ValidateStream), which must agree.
func validate(t *testing.T, docs ...string) []Violation {
	t.Helper()
	stream := strings.Join(docs, "---\n")
	p, err := Parse(strings.NewReader(stream), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	v := Validate(p)
	sameAsStreamed(t, stream, DefaultLimits, p, nil)
	return v
}

// sameAsStreamed checks that ValidateStream says of stream what Read (p,
// or its error) and Validate say.
func sameAsStreamed(t *testing.T, stream string, limits Limits, p *Package, readErr error) {
	t.Helper()
	c, err := ValidateStream(strings.NewReader(stream), limits)
	if readErr != nil || err != nil {
		if readErr == nil || err == nil || err.Error() != readErr.Error() {
			t.Errorf("ValidateStream error %v, Read's %v", err, readErr)
		}
		return
	}
	if c.Objects != len(p.Objects) || (c.Meta == nil) != (p.Meta == nil) || c.Meta != nil && (c.Meta.Kind != p.Meta.Kind || c.Meta.Name() != p.Meta.Name()) {
		t.Errorf("ValidateStream: %d objects, meta %v; Read: %d, %v", c.Objects, c.Meta, len(p.Objects), p.Meta)
	}
	want := Validate(p)
	if fmt.Sprint(c.Violations) != fmt.Sprint(want) {
		t.Errorf("ValidateStream's violations:\n%v\nValidate's:\n%v", c.Violations, want)
	}
}

func TestValidPackages(t *testing.T) {
	for name, docs := range map[string][]string{
		"provider with a CRD and webhooks": {providerMeta, goodCRD,
			"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: v\n",
			"apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: m\n"},
		"IBM group, v1alpha1, string crossplane": {"apiVersion: meta.pkg.ibm.crossplane.io/v1alpha1\nkind: Configuration\nmetadata:\n  name: c\nspec:\n  crossplane: v0.13.0\n  dependsOn:\n  - provider: example/provider-example\n    version: v0.1.0\n  - configuration: example/some-dependency\n    version: v0.2.0\n"},
		"v2 dependency forms and digest": {"apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: c\nspec:\n  crossplane:\n    version: '>=v1.14.0-0'\n  dependsOn:\n  - apiVersion: pkg.crossplane.io/v1\n    kind: Provider\n    package: xpkg.crossplane.io/crossplane-contrib/provider-nop\n    version: '>=v0.2.0'\n  - function: xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform\n    version: sha256:" + strings.Repeat("a", 64) + "\n",
			"apiVersion: ops.crossplane.io/v1alpha1\nkind: Operation\nmetadata:\n  name: op\n"},
	} {
		if v := validate(t, docs...); len(v) != 0 {
			t.Errorf("%s: %v", name, v)
		}
	}
}

// TestContentRules: each rule, broken by a fixture, with the exact message.
func TestContentRules(t *testing.T) {
	cases := []struct {
		name string
		docs []string
		want []string
	}{
		{"no meta", []string{goodCRD}, []string{
			"package: no meta object: a package needs exactly one Provider, Configuration or Function of meta.pkg.crossplane.io [one-meta]"}},
		{"two metas", []string{providerMeta, configMeta}, []string{
			"package: 2 meta objects (documents 0, 1): a package needs exactly one [one-meta]"}},
		{"kind not allowed in a provider", []string{providerMeta, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: evil\n"}, []string{
			"document 1 (Deployment evil): Deployment.apps is not allowed in a Provider package (allowed: CustomResourceDefinition, MutatingWebhookConfiguration, ValidatingWebhookConfiguration, ManagedResourceDefinition) [allowed-kind]"}},
		{"CRD in a configuration", []string{configMeta, goodCRD}, []string{
			"document 1 (CustomResourceDefinition widgets.example.org): CustomResourceDefinition.apiextensions.k8s.io is not allowed in a Configuration package (allowed: CompositeResourceDefinition, Composition, ManagedResourceActivationPolicy, Operation, CronOperation, WatchOperation) [allowed-kind]"}},
		{"unknown meta kind", []string{providerMeta, "apiVersion: meta.pkg.crossplane.io/v1\nkind: Stack\nmetadata:\n  name: s\n"}, []string{
			"document 1 (Stack s): Stack is not a package kind: use Provider, Configuration or Function [allowed-kind]"}},
		{"bad meta version", []string{"apiVersion: meta.pkg.crossplane.io/v2\nkind: Provider\nmetadata:\n  name: p\n"}, []string{
			"document 0 (Provider p): meta.pkg.crossplane.io/v2 is not a known version of Provider (known: v1alpha1, v1beta1, v1) [meta-version]"}},
		{"bad name", []string{"apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: Provider_Bad\n"}, []string{
			`document 0 (Provider Provider_Bad): metadata.name "Provider_Bad" is not a valid name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') [name]`}},
		{"missing name and header", []string{providerMeta, "apiVersion: v1\nmetadata: {}\n"}, []string{
			"document 1: has no apiVersion or kind [object-header]"}},
		{"bad crossplane constraint", []string{"apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\nspec:\n  crossplane:\n    version: '>>= one'\n"}, []string{
			`document 0 (Provider p): spec.crossplane version constraint ">>= one" does not parse: improper constraint: ">>= one" [crossplane-version]`}},
		{"bad controller image", []string{"apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\nspec:\n  controller:\n    image: 'UPPER/Case:bad tag'\n"}, []string{
			`document 0 (Provider p): spec.controller.image "UPPER/Case:bad tag" is not an image reference`}},
		{"dependencies", []string{"apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: c\nspec:\n  dependsOn:\n  - provider: example/p:v1\n    version: v1\n  - provider: example/p\n  - provider: example/p\n    configuration: example/c\n    version: not-a-version\n  - version: v1\n"}, []string{
			`document 0 (Configuration c): spec.dependsOn[0] package "example/p:v1" is not a repository (no tag or digest)`,
			"document 0 (Configuration c): spec.dependsOn[1] has no version [dependency]",
			"document 0 (Configuration c): spec.dependsOn[2] names more than one package (provider, configuration) [dependency]",
			`document 0 (Configuration c): spec.dependsOn[2] version "not-a-version" is neither a version, a semver constraint nor a digest`,
			"document 0 (Configuration c): spec.dependsOn[3] names no package: set one of provider, configuration, function, or package [dependency]"}},
		// A value left empty is null, which Crossplane reads as "": fine.
		{"YAML 1.1 types in labels and annotations", []string{
			"apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n  annotations:\n    supported: yes\n    tier: 2\n    friendly: \"yes\"\n    example.org/empty:\n",
			"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.org\n  labels:\n    enabled: on\nspec:\n  group: example.org\n  names:\n    plural: widgets\n  versions:\n  - name: v1\n    served: true\n    storage: true\n"}, []string{
			`document 0 (Provider p): metadata.annotations[supported] is a boolean (true), not a string: quote the value in the YAML, or Crossplane refuses the package [metadata-strings]`,
			`document 0 (Provider p): metadata.annotations[tier] is a number (2), not a string`,
			`document 1 (CustomResourceDefinition widgets.example.org): metadata.labels[enabled] is a boolean (true), not a string`}},
		{"CRD structure", []string{providerMeta,
			"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.org\nspec:\n  group: example.org\n  names:\n    plural: widgets\n  versions:\n  - name: V1\n    storage: true\n  - name: v2\n    storage: true\n"}, []string{
			"document 1 (CustomResourceDefinition gadgets.example.org): metadata.name must be widgets.example.org (spec.names.plural.spec.group) [crd]",
			`document 1 (CustomResourceDefinition gadgets.example.org): spec.versions[0].name "V1": a DNS-1035 label must consist of lower case alphanumeric characters`,
			"document 1 (CustomResourceDefinition gadgets.example.org): 2 versions are stored: exactly one version must have storage: true [crd]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := validate(t, c.docs...)
			if len(got) != len(c.want) {
				t.Fatalf("got %d violations, want %d:\n%v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("violation %d:\n got  %s\n want %s", i, got[i], w)
				}
			}
		})
	}
}

func TestMetaFields(t *testing.T) {
	p, err := Parse(strings.NewReader(providerMeta+"---\n"+goodCRD), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Meta
	if p.Kind() != KindProvider || m.Group != MetaGroup || m.Version != "v1" || m.ControllerImage != "xpkg.crossplane.io/crossplane-contrib/provider-test:v1.0.0" || len(p.Objects) != 2 {
		t.Errorf("meta = %+v", m)
	}
}
