package diff

// Severity of a change for an upgrade from the old package to the new.
type Severity string

// Severities.
const (
	Breaking   Severity = "breaking"
	Compatible Severity = "compatible"
)

// Rules, as Change.Rule names them. Each is described in Rules and, for
// users, in docs/diff-rules.md.
const (
	RuleObjectAdded         = "object-added"
	RuleObjectRemoved       = "object-removed"
	RuleObjectChanged       = "object-changed"
	RuleMetadataChanged     = "metadata-changed"
	RuleDefinitionRemoved   = "definition-removed"
	RuleCompositionRemoved  = "composition-removed"
	RuleVersionAdded        = "version-added"
	RuleVersionRemoved      = "version-removed"
	RuleVersionUnserved     = "version-no-longer-served"
	RuleVersionServed       = "version-served-again"
	RuleVersionDeprecated   = "version-deprecated"
	RuleStorageMoved        = "storage-version-moved"
	RuleScopeChanged        = "scope-changed"
	RuleNamesChanged        = "names-changed"
	RuleShortNamesChanged   = "short-names-changed"
	RuleSubresourceRemoved  = "subresource-removed"
	RuleFieldAdded          = "field-added"
	RuleFieldRemoved        = "field-removed"
	RuleFieldRequired       = "field-became-required"
	RuleFieldOptional       = "field-no-longer-required"
	RuleTypeChanged         = "type-changed"
	RuleEnumNarrowed        = "enum-narrowed"
	RuleEnumWidened         = "enum-widened"
	RuleDefaultChanged      = "default-changed"
	RuleDefaultAdded        = "default-added"
	RuleValidationTightened = "validation-tightened"
	RuleValidationRelaxed   = "validation-relaxed"
	RuleUnknownFieldsPruned = "unknown-fields-pruned"
	RuleSchemaChanged       = "schema-changed"
	RuleDescriptionChanged  = "description-changed"
	RuleCompositeType       = "composite-type-changed"
	RuleComposedRemoved     = "composed-resource-removed"
	RuleCompositionChanged  = "composition-changed"
	RuleWebhookChanged      = "webhook-changed"
	RulePackageKind         = "package-kind-changed"
	RuleMetaChanged         = "meta-changed"
	RuleMetaAnnotation      = "meta-annotation-changed"
	RuleCrossplaneNarrowed  = "crossplane-constraint-narrowed"
	RuleCrossplaneChanged   = "crossplane-constraint-changed"
	RuleDependencyAdded     = "dependency-added"
	RuleDependencyRemoved   = "dependency-removed"
	RuleDependencyNarrowed  = "dependency-constraint-narrowed"
	RuleDependencyChanged   = "dependency-constraint-changed"
	RuleControllerImage     = "controller-image-changed"
	RulePermissionAdded     = "permission-request-added"
	RulePermissionRemoved   = "permission-request-removed"
)

// Rule describes one classification rule.
type Rule struct {
	Name     string
	Severity Severity
	Why      string
}

// Rules is every rule diff applies, in the order the documentation lists
// them.
var Rules = []Rule{
	{RulePackageKind, Breaking, "The package changed kind (Provider, Configuration, Function): it cannot replace the installed one."},
	{RuleCrossplaneNarrowed, Breaking, "Crossplane versions the old constraint allowed are refused by the new one: the package manager refuses the package on those."},
	{RuleCrossplaneChanged, Compatible, "The Crossplane constraint changed without refusing any version the old one allowed."},
	{RuleDependencyAdded, Compatible, "A new dependency: the package manager installs it."},
	{RuleDependencyRemoved, Compatible, "A dependency is no longer needed; it stays installed until removed."},
	{RuleDependencyNarrowed, Breaking, "Dependency versions the old constraint allowed are refused by the new one: an installed dependency may have to be upgraded first."},
	{RuleDependencyChanged, Compatible, "A dependency's constraint changed without refusing any version the old one allowed."},
	{RuleControllerImage, Compatible, "The provider's controller image changed."},
	{RulePermissionAdded, Breaking, "The provider asks for more RBAC permissions: Crossplane's RBAC manager must allow them or the revision stays unhealthy."},
	{RulePermissionRemoved, Compatible, "The provider asks for fewer RBAC permissions."},
	{RuleMetaAnnotation, Compatible, "An annotation of the package metadata was added, removed or changed."},
	{RuleMetaChanged, Compatible, "Another field of the package metadata changed."},
	{RuleObjectAdded, Compatible, "An object is new in the package."},
	{RuleObjectRemoved, Compatible, "An object other than a definition or Composition left the package."},
	{RuleDefinitionRemoved, Breaking, "A CRD, XRD or MRD left the package: its API goes, with every object of it in the cluster."},
	{RuleCompositionRemoved, Breaking, "A Composition left the package: composite resources that select it by name lose it."},
	{RuleObjectChanged, Compatible, "An object changed in a way no other rule classifies (the paths are listed)."},
	{RuleMetadataChanged, Compatible, "An object's labels or annotations changed."},
	{RuleVersionAdded, Compatible, "A definition serves a new API version."},
	{RuleVersionRemoved, Breaking, "An API version left a definition: clients of it break, and objects stored at it cannot be read."},
	{RuleVersionUnserved, Breaking, "An API version is no longer served: clients of it break."},
	{RuleVersionServed, Compatible, "An API version is served again."},
	{RuleVersionDeprecated, Compatible, "An API version became deprecated."},
	{RuleStorageMoved, Compatible, "Another version became the storage version: the API server converts, but objects stay stored at the old one until migrated."},
	{RuleScopeChanged, Breaking, "A definition changed scope (Namespaced, Cluster): existing objects cannot be read the new way."},
	{RuleNamesChanged, Breaking, "A definition's kind, listKind, plural or singular name (or an XRD's claim names) changed."},
	{RuleShortNamesChanged, Compatible, "A definition's short names or categories changed."},
	{RuleSubresourceRemoved, Breaking, "A version lost its status or scale subresource."},
	{RuleFieldAdded, Compatible, "An optional field was added to a schema."},
	{RuleFieldRemoved, Breaking, "A field left a schema: the API server prunes it from stored objects."},
	{RuleFieldRequired, Breaking, "A field became required, or was added as required: existing objects without it fail validation."},
	{RuleFieldOptional, Compatible, "A field is no longer required."},
	{RuleTypeChanged, Breaking, "A field's type changed, or a type was imposed on an untyped field."},
	{RuleEnumNarrowed, Breaking, "A field's enum lost values, or an enum was imposed: objects using the removed values fail validation."},
	{RuleEnumWidened, Compatible, "A field's enum gained values or was lifted."},
	{RuleDefaultChanged, Breaking, "A field's default changed or was removed: objects that omit the field change meaning."},
	{RuleDefaultAdded, Compatible, "A field gained a default."},
	{RuleValidationTightened, Breaking, "A bound (maxLength, maximum, minItems, …), pattern, format or CEL rule was added or tightened, or a field stopped being nullable."},
	{RuleValidationRelaxed, Compatible, "A bound, pattern, format or CEL rule was lifted or loosened."},
	{RuleUnknownFieldsPruned, Breaking, "A field stopped preserving unknown fields: the API server prunes what it held."},
	{RuleSchemaChanged, Compatible, "Another schema keyword changed (the keyword is named)."},
	{RuleDescriptionChanged, Compatible, "Only descriptions changed (counted once per object)."},
	{RuleCompositeType, Breaking, "A Composition composes another composite type: composite resources of the old type lose it."},
	{RuleComposedRemoved, Breaking, "A composed resource left a Composition: Crossplane deletes it from every composite resource using the Composition."},
	{RuleCompositionChanged, Compatible, "A Composition changed otherwise (shown as a unified diff)."},
	{RuleWebhookChanged, Compatible, "A webhook configuration changed (shown as a unified diff)."},
}

// RuleSeverity is the severity a rule assigns.
func RuleSeverity(name string) Severity {
	for _, r := range Rules {
		if r.Name == name {
			return r.Severity
		}
	}
	return Compatible
}
