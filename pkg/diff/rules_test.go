package diff

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// schemaCRD is a CRD whose one version, v1, has the given spec schema
// (JSON, which is YAML).
func schemaCRD(spec string) string {
	return crd("widgets.example.org", `  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {"type": "object", "properties": {"spec": `+spec+`}}
`)
}

func xrd(apiVersion, extra string) string {
	return "apiVersion: apiextensions.crossplane.io/" + apiVersion + `
kind: CompositeResourceDefinition
metadata:
  name: xnetworks.example.org
spec:
  group: example.org
  names: {kind: XNetwork, plural: xnetworks}
` + extra + `  versions:
  - name: v1alpha1
    served: true
    referenceable: true
    schema:
      openAPIV3Schema: {"type": "object"}
`
}

func composition(resources, typeRef string) string {
	return `apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata:
  name: xnetworks
spec:
  compositeTypeRef: ` + typeRef + `
  mode: Pipeline
  pipeline:
  - step: patch-and-transform
    functionRef: {name: function-patch-and-transform}
    input:
      apiVersion: pt.fn.crossplane.io/v1beta1
      kind: Resources
      resources: ` + resources + "\n"
}

func metaWith(spec string) string {
	return meta + "spec:\n" + spec
}

const vpcType = "{apiVersion: example.org/v1alpha1, kind: XNetwork}"

// ruleCases are hand-made fixtures: one or more for every rule, each with
// the one change it must produce.
var ruleCases = []struct {
	name     string
	old, new string
	want     string
}{
	// Definitions.
	{"dropped version", crd("widgets.example.org", "  - {name: v1alpha1, served: true, storage: false}\n  - {name: v1, served: true, storage: true}\n"),
		crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"), "v1alpha1: version removed [breaking, version-removed]"},
	{"version added", crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"),
		crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n  - {name: v2, served: true, storage: false}\n"), "v2: version added [compatible, version-added]"},
	{"unserved", crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"),
		crd("widgets.example.org", "  - {name: v1, served: false, storage: true}\n"), "v1: no longer served [breaking, version-no-longer-served]"},
	{"served again", crd("widgets.example.org", "  - {name: v1, served: false, storage: true}\n"),
		crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"), "v1: served again [compatible, version-served-again]"},
	{"storage flip", crd("widgets.example.org", "  - {name: v1alpha1, served: true, storage: true}\n  - {name: v1, served: true, storage: false}\n"),
		crd("widgets.example.org", "  - {name: v1alpha1, served: true, storage: false}\n  - {name: v1, served: true, storage: true}\n"), "v1alpha1: no longer the storage version (now v1) [compatible, storage-version-moved]"},
	{"deprecated", crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"),
		crd("widgets.example.org", "  - {name: v1, served: true, storage: true, deprecated: true}\n"), "v1: deprecated [compatible, version-deprecated]"},
	{"scope change", crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"),
		strings.Replace(crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"), "scope: Namespaced", "scope: Cluster", 1),
		"spec.scope: scope changed from Namespaced to Cluster [breaking, scope-changed]"},
	{"xrd v1 to v2 scope", xrd("v1", ""), xrd("v2", ""), "spec.scope: scope changed from LegacyCluster to Namespaced [breaking, scope-changed]"},
	{"kind renamed", crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"),
		strings.Replace(crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"), "kind: Widget", "kind: Gadget", 1),
		"spec.names: kind Widget → Gadget [breaking, names-changed]"},
	{"claim names", xrd("v1", "  claimNames: {kind: Network, plural: networks}\n"), xrd("v1", "  claimNames: {kind: Net, plural: networks}\n"),
		"spec.claimNames: kind Network → Net [breaking, names-changed]"},
	{"short names", crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"),
		strings.Replace(crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"), "plural: widgets", "plural: widgets\n    shortNames: [wd]", 1),
		`spec.names: shortNames (none) → ["wd"] [compatible, short-names-changed]`},
	{"subresource removed", crd("widgets.example.org", "  - {name: v1, served: true, storage: true, subresources: {status: {}}}\n"),
		crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"), "v1 subresources.status: subresource status removed [breaking, subresource-removed]"},
	{"printer columns", crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"),
		crd("widgets.example.org", "  - {name: v1, served: true, storage: true, additionalPrinterColumns: [{name: READY, type: string, jsonPath: .status.ready}]}\n"),
		"v1: changed: additionalPrinterColumns [compatible, object-changed]"},
	{"labels", crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"),
		strings.Replace(crd("widgets.example.org", "  - {name: v1, served: true, storage: true}\n"), "  name: widgets.example.org", "  name: widgets.example.org\n  labels: {tier: gold}", 1),
		"metadata.labels: tier=gold added [compatible, metadata-changed]"},
	// Schemas.
	{"field added", schemaCRD(`{"type": "object"}`), schemaCRD(`{"type": "object", "properties": {"size": {"type": "string"}}}`),
		"v1 spec.size: field added (string) [compatible, field-added]"},
	{"field removed", schemaCRD(`{"type": "object", "properties": {"size": {"type": "string"}}}`), schemaCRD(`{"type": "object"}`),
		"v1 spec.size: field removed [breaking, field-removed]"},
	{"became required", schemaCRD(`{"type": "object", "properties": {"size": {"type": "string"}}}`),
		schemaCRD(`{"type": "object", "required": ["size"], "properties": {"size": {"type": "string"}}}`), "v1 spec.size: became required [breaking, field-became-required]"},
	{"required field added", schemaCRD(`{"type": "object"}`),
		schemaCRD(`{"type": "object", "required": ["size"], "properties": {"size": {"type": "string"}}}`), "v1 spec.size: required field added (string) [breaking, field-became-required]"},
	{"no longer required", schemaCRD(`{"type": "object", "required": ["size"], "properties": {"size": {"type": "string"}}}`),
		schemaCRD(`{"type": "object", "properties": {"size": {"type": "string"}}}`), "v1 spec.size: no longer required [compatible, field-no-longer-required]"},
	{"type changed", schemaCRD(`{"type": "object", "properties": {"size": {"type": "string"}}}`),
		schemaCRD(`{"type": "object", "properties": {"size": {"type": "integer"}}}`), "v1 spec.size: type changed from string to integer [breaking, type-changed]"},
	{"int-or-string", schemaCRD(`{"type": "object", "properties": {"size": {"type": "string"}}}`),
		schemaCRD(`{"type": "object", "properties": {"size": {"x-kubernetes-int-or-string": true}}}`), "v1 spec.size: type string widened to int-or-string [compatible, schema-changed]"},
	{"narrowed enum", schemaCRD(`{"type": "object", "properties": {"size": {"type": "string", "enum": ["S", "M", "L"]}}}`),
		schemaCRD(`{"type": "object", "properties": {"size": {"type": "string", "enum": ["S", "M"]}}}`), "v1 spec.size: enum values removed: L [breaking, enum-narrowed]"},
	{"enum imposed", schemaCRD(`{"type": "object", "properties": {"size": {"type": "string"}}}`),
		schemaCRD(`{"type": "object", "properties": {"size": {"type": "string", "enum": ["S"]}}}`), "v1 spec.size: enum imposed: S [breaking, enum-narrowed]"},
	{"widened enum", schemaCRD(`{"type": "object", "properties": {"size": {"type": "string", "enum": ["S"]}}}`),
		schemaCRD(`{"type": "object", "properties": {"size": {"type": "string", "enum": ["S", "M"]}}}`), "v1 spec.size: enum values added: M [compatible, enum-widened]"},
	{"default changed", schemaCRD(`{"type": "object", "properties": {"size": {"type": "string", "default": "S"}}}`),
		schemaCRD(`{"type": "object", "properties": {"size": {"type": "string", "default": "M"}}}`), "v1 spec.size: default changed from S to M [breaking, default-changed]"},
	{"default removed", schemaCRD(`{"type": "object", "properties": {"size": {"type": "string", "default": "S"}}}`),
		schemaCRD(`{"type": "object", "properties": {"size": {"type": "string"}}}`), "v1 spec.size: default S removed [breaking, default-changed]"},
	{"default added", schemaCRD(`{"type": "object", "properties": {"size": {"type": "string"}}}`),
		schemaCRD(`{"type": "object", "properties": {"size": {"type": "string", "default": "S"}}}`), "v1 spec.size: default S added [compatible, default-added]"},
	{"maxLength lowered", schemaCRD(`{"type": "object", "properties": {"name": {"type": "string", "maxLength": 63}}}`),
		schemaCRD(`{"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}}}`), "v1 spec.name: maxLength 63 → 40 [breaking, validation-tightened]"},
	{"minimum lowered", schemaCRD(`{"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}`),
		schemaCRD(`{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}`), "v1 spec.n: minimum 1 → 0 [compatible, validation-relaxed]"},
	{"pattern imposed", schemaCRD(`{"type": "object", "properties": {"name": {"type": "string"}}}`),
		schemaCRD(`{"type": "object", "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}}}`), `v1 spec.name: pattern (none) → ^[a-z]+$ [breaking, validation-tightened]`},
	{"CEL rule added", schemaCRD(`{"type": "object"}`), schemaCRD(`{"type": "object", "x-kubernetes-validations": [{"rule": "has(self.size)"}]}`),
		"v1 spec: CEL rule added: has(self.size) [breaking, validation-tightened]"},
	{"nullable", schemaCRD(`{"type": "object", "properties": {"n": {"type": "string"}}}`),
		schemaCRD(`{"type": "object", "properties": {"n": {"type": "string", "nullable": true}}}`), "v1 spec.n: became nullable [compatible, validation-relaxed]"},
	{"pruning", schemaCRD(`{"type": "object", "x-kubernetes-preserve-unknown-fields": true}`), schemaCRD(`{"type": "object"}`),
		"v1 spec: no longer preserves unknown fields [breaking, unknown-fields-pruned]"},
	{"list type", schemaCRD(`{"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}}}}`),
		schemaCRD(`{"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}`),
		"v1 spec.l: x-kubernetes-list-type changed from (none) to set [compatible, schema-changed]"},
	{"item field", schemaCRD(`{"type": "object", "properties": {"l": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}}`),
		schemaCRD(`{"type": "object", "properties": {"l": {"type": "array", "items": {"type": "object"}}}}`), "v1 spec.l[*].k: field removed [breaking, field-removed]"},
	{"description", schemaCRD(`{"type": "object", "description": "old words"}`), schemaCRD(`{"type": "object", "description": "new words"}`),
		"descriptions changed (1 field) [compatible, description-changed]"},
	// Compositions, webhooks, other objects.
	{"composed resource removed", composition("[{name: vpc}, {name: subnet}]", vpcType), composition("[{name: vpc}]", vpcType),
		"resources[patch-and-transform/subnet]: composed resource patch-and-transform/subnet removed [breaking, composed-resource-removed]"},
	{"composite type", composition("[{name: vpc}]", vpcType), composition("[{name: vpc}]", "{apiVersion: example.org/v1, kind: XNetwork}"),
		"spec.compositeTypeRef: composes XNetwork.example.org/v1 instead of XNetwork.example.org/v1alpha1 [breaking, composite-type-changed]"},
	{"composition changed", composition("[{name: vpc}]", vpcType), composition("[{name: vpc, base: {kind: VPC}}]", vpcType),
		"changed: spec.pipeline [compatible, composition-changed]"},
	{"webhook", "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: w}\nwebhooks: [{name: a.example.org}]\n",
		"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: w}\nwebhooks: [{name: b.example.org}]\n",
		"changed: webhooks [compatible, webhook-changed]"},
	{"other object", "apiVersion: example.org/v1\nkind: Thing\nmetadata: {name: t}\nspec: {a: 1}\n", "apiVersion: example.org/v1\nkind: Thing\nmetadata: {name: t}\nspec: {a: 2}\n",
		"changed: spec.a [compatible, object-changed]"},
	{"object removed", "apiVersion: example.org/v1\nkind: Thing\nmetadata: {name: t}\n", "", "Thing t: removed [compatible, object-removed]"},
	{"composition removed", composition("[{name: vpc}]", vpcType), "", "removed: composite resources that select it by name lose it [breaking, composition-removed]"},
	{"object added", "", "apiVersion: example.org/v1\nkind: Thing\nmetadata: {name: t}\n", "Thing t: added [compatible, object-added]"},
	{"definition removed", schemaCRD(`{"type": "object"}`), "", "removed: the API it defines goes, with every object of it in the cluster [breaking, definition-removed]"},
	// Package metadata.
	{"package kind", meta, strings.Replace(meta, "kind: Provider", "kind: Function", 1), "package: kind: package kind changed from Provider to Function [breaking, package-kind-changed]"},
	{"crossplane narrowed", metaWith("  crossplane: {version: '>=v1.14.0'}\n"), metaWith("  crossplane: {version: '>=v2.0.0'}\n"),
		`package: spec.crossplane.version: ">=v1.14.0" → ">=v2.0.0": refuses 15 probed versions from v1.14.0 to v1.21.0 [breaking, crossplane-constraint-narrowed]`},
	{"crossplane widened", metaWith("  crossplane: {version: '>=v1.17.0'}\n"), metaWith("  crossplane: {version: '>=v1.14.0'}\n"),
		`package: spec.crossplane.version: ">=v1.17.0" → ">=v1.14.0" [compatible, crossplane-constraint-changed]`},
	{"dependency added", metaWith("  dependsOn: []\n"), metaWith("  dependsOn: [{provider: example.org/provider-nop, version: '>=v0.2.0'}]\n"),
		"package: spec.dependsOn[example.org/provider-nop]: provider added (>=v0.2.0) [compatible, dependency-added]"},
	{"dependency removed", metaWith("  dependsOn: [{function: example.org/fn, version: v1}]\n"), metaWith("  dependsOn: []\n"),
		"package: spec.dependsOn[example.org/fn]: function removed (was v1) [compatible, dependency-removed]"},
	{"dependency narrowed", metaWith("  dependsOn: [{provider: example.org/p, version: v0.4.0}]\n"), metaWith("  dependsOn: [{provider: example.org/p, version: v0.4.2}]\n"),
		`package: spec.dependsOn[example.org/p]: provider constraint "v0.4.0" → "v0.4.2", refusing v0.4.0 [breaking, dependency-constraint-narrowed]`},
	{"dependency widened", metaWith("  dependsOn: [{provider: example.org/p, version: v1.19.0}]\n"), metaWith("  dependsOn: [{provider: example.org/p, version: v1}]\n"),
		`package: spec.dependsOn[example.org/p]: provider constraint "v1.19.0" → "v1" [compatible, dependency-constraint-changed]`},
	{"controller image", metaWith("  controller: {image: example.org/p-controller:v1}\n"), metaWith("  controller: {image: example.org/p-controller:v2}\n"),
		"package: spec.controller.image: example.org/p-controller:v1 → example.org/p-controller:v2 [compatible, controller-image-changed]"},
	{"permission added", metaWith("  controller: {}\n"), metaWith("  controller: {permissionRequests: [{apiGroups: [''], resources: [secrets], verbs: [get]}]}\n"),
		`package: spec.controller.permissionRequests: requests {"apiGroups":[""],"resources":["secrets"],"verbs":["get"]} [breaking, permission-request-added]`},
	{"permission removed", metaWith("  controller: {permissionRequests: [{apiGroups: [''], resources: [secrets], verbs: [get]}]}\n"), metaWith("  controller: {}\n"),
		`package: spec.controller.permissionRequests: no longer requests {"apiGroups":[""],"resources":["secrets"],"verbs":["get"]} [compatible, permission-request-removed]`},
	{"annotation", meta, strings.Replace(meta, "  name: p\n", "  name: p\n  annotations: {meta.crossplane.io/source: github.com/x}\n", 1),
		"package: metadata.annotations: meta.crossplane.io/source=github.com/x added [compatible, meta-annotation-changed]"},
	{"meta other", metaWith("  capabilities: [a]\n"), metaWith("  capabilities: [b]\n"), "package: changed: spec.capabilities [compatible, meta-changed]"},
}

func TestRules(t *testing.T) {
	used := map[string]bool{}
	for _, c := range ruleCases {
		t.Run(c.name, func(t *testing.T) {
			docs := func(d string) []string {
				if strings.Contains(d, "meta.pkg.crossplane.io") {
					return []string{d}
				}
				return []string{meta, d}
			}
			r := Compare(read(t, docs(c.old)...), read(t, docs(c.new)...))
			got := flat(r)
			if len(got) != 1 || !strings.HasSuffix(got[0], c.want) {
				t.Fatalf("changes:\n%s\nwant one ending:\n%s", strings.Join(got, "\n"), c.want)
			}
			breaking := strings.Contains(c.want, "[breaking, ")
			if r.Breaking() != breaking {
				t.Errorf("Breaking() = %v", r.Breaking())
			}
		})
		used[c.want[strings.LastIndex(c.want, ", ")+2:len(c.want)-1]] = true
	}
	for _, rule := range Rules {
		if !used[rule.Name] {
			t.Errorf("rule %s has no fixture", rule.Name)
		}
	}
}

// TestRulesAreDocumented keeps docs/diff-rules.md in step with Rules.
func TestRulesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/diff-rules.md")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range Rules {
		row := "| `" + r.Name + "` | " + string(r.Severity) + " |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/diff-rules.md lacks the row %q", row)
		}
		names = append(names, r.Name)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(Rules) {
		t.Error("duplicate rule names")
	}
}
