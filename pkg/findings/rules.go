package findings

import (
	"slices"
	"strings"
)

// The verbs whose checks raise rules, as the commands name them.
const (
	verbUpgrade   = "upgrade"
	verbRollback  = "rollback"
	verbUninstall = "uninstall"
	verbInstall   = "install"
	verbDoctor    = "doctor"
	verbRename    = "rename"
	verbPlanFiles = "plan"
)

// Rule IDs: stable names of what a plan checks, for scripts and docs.
// Rules describes each.
const (
	RuleStoredVersionDropped = "stored-version-dropped"
	RuleLiveObjects          = "live-objects"
	RuleCrossplaneVersion    = "crossplane-version"
	RuleDependentConstraint  = "dependent-constraint"
	RuleDependencyConstraint = "dependency-constraint"
	RuleDowngrade            = "downgrade"
	RuleManualActivation     = "manual-activation"
	RuleRuntimeRestart       = "runtime-restart"
	RuleDependents           = "dependents"
	RuleBreakingChange       = "breaking-change"
	RulePinnedDependency     = "pinned-dependency"
	RuleInvalidPackage       = "invalid-package"
	RuleExplicitDependency   = "explicit-dependency"
	RulePullSecret           = "pull-secret"
	RuleLockStall            = "lock-stall"
	RuleCrossplaneConfig     = "crossplane-config"
	RuleDefinitionDeleting   = "definition-deleting"
	RuleActivation           = "activation"

	// Doctor's rules: what it finds in the package manager's state.
	RuleDuplicateLockNode     = "duplicate-lock-node"
	RuleDependencyUnresolved  = "dependency-unresolved"
	RuleTwinName              = "twin-name"
	RuleStaleLockEntry        = "stale-lock-entry"
	RuleManualInactive        = "manual-inactive"
	RuleRevisionHistory       = "revision-history"
	RuleControlConflict       = "control-conflict"
	RuleStoredUndefined       = "stored-version-undefined"
	RuleObjectsMissing        = "objects-missing"
	RulePinnedServiceAccount  = "pinned-service-account"
	RuleFamilySkew            = "family-skew"
	RuleUnfinishedOperation   = "unfinished-operation"
	RulePackagePaused         = "package-paused"
	RuleNoRevision            = "package-no-revision"
	RuleDuplicatePackage      = "duplicate-package"
	RuleInactiveRevision      = "inactive-revision"
	RuleDefinitionTerminating = "definition-terminating"
	RuleManagedDeletionStuck  = "managed-deletion-stuck"
	RuleDeletionStuck         = "deletion-stuck"
	RuleProviderConfigStuck   = "providerconfig-deletion-stuck"
	RuleInactiveComposedKind  = "inactive-composed-kind"
	RuleActivationUnused      = "activation-unused"
	RuleActivationUnmatched   = "activation-pattern-unmatched"

	// Install's: what the install would do to the Lock.
	RuleTwinInstall = "twin-install"
	// Rename's: whether the hand-over can be proven, and what it does.
	RuleRenameState    = "rename-state"
	RuleRenameTarget   = "rename-target"
	RuleRenameRelease  = "rename-release"
	RuleRenameGitOps   = "rename-gitops"
	RuleRenameHandOver = "rename-handover"
	// plan -f's: a manifest edits a package's spec beyond its package.
	RuleSpecChange = "spec-change"
	// plan -f --offline's: what only the cluster could check.
	RuleOffline = "offline"

	// Doctor's rules with --crossplane-version: what an upgrade of
	// Crossplane itself would do to the cluster.
	RuleCrossplaneUnknown     = "crossplane-unknown-release"
	RuleCrossplaneDowngrade   = "crossplane-downgrade"
	RuleCrossplaneSkipped     = "crossplane-skipped-minor"
	RuleCrossplaneKnownBad    = "crossplane-known-bad"
	RuleCrossplaneStored      = "crossplane-stored-version"
	RuleCrossplaneRemovedKind = "crossplane-removed-kind"
	RuleCrossplaneRevisions   = "crossplane-new-revisions"
	RuleCrossplaneManual      = "crossplane-manual-offline"
	RuleCrossplaneTwin        = "crossplane-twin-risk"
	RuleCrossplaneConstraint  = "crossplane-constraint"
)

// RuleDoc describes a plan rule: the verbs whose plans raise it, and one
// line of help that says when and how severe. Each verb's help lists its
// rules from here, make docs writes docs/rules.md from it, and a test holds
// the tables of docs/upgrading.md and docs/doctor.md to it.
type RuleDoc struct {
	ID    string
	Verbs []string
	Help  string
}

var (
	changeVerbs = []string{verbUpgrade, verbRollback}
	planVerbs   = []string{verbInstall, verbUpgrade, verbRollback, verbPlanFiles}
	allVerbs    = []string{verbUpgrade, verbRollback, verbUninstall}
	doctorVerb  = []string{verbDoctor}
)

// Rules is every rule a plan applies, and doctor's, in the order the docs
// list them.
var Rules = []RuleDoc{
	{RuleStoredVersionDropped, changeVerbs, "blocking: a CRD (or MRD) stores objects at a version the target no longer defines"},
	{RuleLiveObjects, allVerbs, "blocking: objects exist of a kind the change removes (uninstall: of every kind the package defines); warning: of a version the target drops"},
	{RuleCrossplaneVersion, changeVerbs, "blocking: the target's Crossplane constraint excludes the running Crossplane (its Deployment crossplane in --crossplane-namespace); warning when that cannot be checked"},
	{RuleDependentConstraint, changeVerbs, "blocking: an installed package's dependsOn (in the Lock) excludes the target version"},
	{RuleDependencyConstraint, planVerbs, "warning: after the change and all that Crossplane's resolver then does, a package is unhealthy, its dependency at a version it excludes (the plan names the version that heals it); blocking when no version satisfies every package that depends on it"},
	{RuleLockStall, planVerbs, "blocking: after the change Crossplane's resolver stops at a dependency (no version satisfies its constraints, with the running Crossplane's flags; a repository that does not exist; two nodes of one source): the Lock turns Resolved=False and no package in the cluster resolves; warning when it stalls there already, or the plan could not follow the resolver"},
	{RuleCrossplaneConfig, planVerbs, "warning: Crossplane's configuration (its automatic dependency upgrade flags) could not be read and the outcome depends on it; info: the plan assumes it (--assume-dependency-upgrades)"},
	{RuleDefinitionDeleting, planVerbs, "blocking: the target defines a CRD, MRD or XRD whose CRD in the cluster is being deleted: the package manager cannot make it again until the deletion finishes, and the API server refuses every object of its kind meanwhile"},
	{RuleActivation, []string{verbInstall, verbUpgrade, verbRollback}, "info: the provider brings ManagedResourceDefinitions: how many, Active or Inactive as they come (safe-start), and how many the ManagedResourceActivationPolicies there activate: the CRDs that appear"},
	{RuleInvalidPackage, changeVerbs, "blocking: the target's meta object has a label or annotation that is no string, which Crossplane refuses"},
	{RuleDowngrade, changeVerbs, "blocking for upgrade (use rollback), info for rollback: the target is older than what runs"},
	{RuleManualActivation, changeVerbs, "info: the package activates revisions by hand and the change has no --activate"},
	{RuleRuntimeRestart, []string{verbUpgrade, verbRollback, verbRename}, "info: the change restarts the provider's or function's runtime (a Deployment per revision); rename: it stops until the new package's revision runs it"},
	{RuleDependents, []string{verbUninstall}, "blocking: another installed package depends on it (according to the Lock)"},
	{RuleExplicitDependency, []string{verbUninstall}, "info: with --with-dependencies, a dependency nothing else needs was installed explicitly, not by the package manager: it stays"},
	{RulePullSecret, changeVerbs, "warning: the package was read with your own credentials, since the pull secret an ImageConfig gives it could not be read"},
	{RuleBreakingChange, changeVerbs, "warning: the other breaking changes kubectl xpkg diff finds, per object"},
	{RulePinnedDependency, changeVerbs, "blocking: the target names a digest and an installed package depends on this one with a version range: Crossplane records the digest in the Lock, cannot match it against the range, and the dependent turns unhealthy"},
	{RuleDuplicateLockNode, []string{verbDoctor, verbUpgrade, verbRollback}, "blocking: the Lock holds two entries for one source (two revisions of one package, or two packages of one repository): Crossplane builds no dependency graph and every package may turn unhealthy; doctor names both and the one Crossplane keeps, and no change (upgrade, rollback) becomes healthy until one goes"},
	{RuleDependencyUnresolved, []string{verbDoctor, verbUpgrade, verbRollback}, "blocking (doctor): the Lock is not resolved, or a package's current revision cannot resolve its dependencies: the message, and every package whose constraint on the sources it names takes part; warning (upgrade, rollback): the Lock is not resolved, which the change may be what resolves"},
	{RuleTwinName, []string{verbDoctor, verbInstall, verbRename}, "warning (doctor): a package others depend on is installed under a name other than the resolver's for its repository: the resolver can install a twin (kubectl xpkg rename gives it that name); blocking (install, rename): the name given would be such a name"},
	{RuleTwinInstall, []string{verbInstall}, "blocking: another package installs the same repository already: two nodes for one source in the Lock, and no package's dependencies resolve"},
	{RuleStaleLockEntry, doctorVerb, "warning: a Lock entry whose revision is gone or inactive, or that lacks a name, source, type or a dependency's package or type"},
	{RuleManualInactive, doctorVerb, "warning: a package under Manual activation has no active revision: it runs nothing"},
	{RuleRevisionHistory, doctorVerb, "warning: a package has more revisions than its revisionHistoryLimit keeps"},
	{RuleControlConflict, doctorVerb, "blocking: a CRD or MRD is controlled by a revision that no longer exists (warning where Crossplane takes it over itself) or by another package's revision than the one that installs it, or a revision says it cannot take control of an object: names the reference to remove"},
	{RuleStoredUndefined, doctorVerb, "blocking: a CRD stores objects at a version its spec.versions no longer defines (the API server refuses every update of it), or a revision cannot update a CRD because its package dropped such a version"},
	{RuleObjectsMissing, doctorVerb, "blocking: a healthy active revision's status.objectRefs lacks CRDs or MRDs it installed (they name it as owner) or that an inactive revision of the same digest recorded: Crossplane grants the runtime nothing for them"},
	{RulePinnedServiceAccount, doctorVerb, "warning: a DeploymentRuntimeConfig that pins the runtime's ServiceAccount name is used by several packages, whose revisions fight over it; blocking on Crossplane v2.4.0 and v2.4.1, which refuse a pinned name at the next revision"},
	{RuleFamilySkew, doctorVerb, "warning (doctor and outdated): a provider family's members and family provider run more than one version, a member is in another registry or org than its family provider (Crossplane's RBAC manager then grants it none of the family's types: names the ClusterRole and the CRDs it lacks), or a family has two family providers"},
	{RuleUnfinishedOperation, []string{verbDoctor, verbRename}, "blocking (doctor): a package carries the record of a rename or upgrade --family cut short (kubectl-xpkg.github.io/operation): names its step and the command that finishes it and the one that undoes it; warning (doctor): the Lock carries the record of a doctor --fix cut short, which doctor --fix finishes and removes (blocking when it was cut short after removing the finalizers of objects a definition's deletion held: doctor --fix makes them again from the backup the record names, once the package manager has made their CRD again); info (rename): the run finishes or (--undo) undoes it"},
	{RulePackagePaused, doctorVerb, "warning: a package is paused (crossplane.io/paused): the package manager makes, activates and deactivates none of its revisions, and its conditions are from before the pause"},
	{RuleNoRevision, doctorVerb, "warning: a package has no revision: it installs and runs nothing"},
	{RuleDuplicatePackage, doctorVerb, "blocking: two packages install one repository, even paused or out of the Lock: once both are in the Lock no package's dependencies resolve; names the one the resolver keeps"},
	{RuleInactiveRevision, doctorVerb, "blocking when others depend on it, else warning: a package under Automatic activation none of whose revisions is active (its current revision inactive): it runs nothing, whatever its conditions say"},
	{RuleDefinitionTerminating, doctorVerb, "blocking: a CRD or MRD is being deleted and objects of its kind hold it, whose finalizers only the controller of a provider that no longer runs removes (a provider deleted while its managed resources existed): names the objects, that provider and what the deletion breaks; a warning for its first two minutes while that controller runs; doctor --fix makes the objects again once the provider is installed again"},
	{RuleManagedDeletionStuck, doctorVerb, "blocking: managed resources are being deleted and wait for their finalizer, while the provider that serves their kind has no active revision (is not installed, or deactivated)"},
	{RuleProviderConfigStuck, doctorVerb, "blocking: a ProviderConfig has been deleting for over two minutes, held by in-use.crossplane.io, which its provider's controller removes once no ProviderConfigUsage names it: names the usages, which tell of resources that are gone (the garbage collector cannot delete a usage whose owner's kind is no longer served) and the command that removes those"},
	{RuleDeletionStuck, doctorVerb, "blocking: a package or revision has been deleting for over two minutes, held by a finalizer: names it and who removes it; nothing of its name can be made meanwhile"},
	{RuleInactiveComposedKind, []string{verbDoctor, verbInstall, verbUpgrade, verbRollback, verbPlanFiles}, "warning (install, upgrade, rollback): a Composition composes a kind the provider brings Inactive (safe-start) that no ManagedResourceActivationPolicy activates; warning (plan -f): a Composition of the manifests composes a kind whose MRD is Inactive and that no policy of the cluster or the manifests activates, or that nothing defines; blocking (doctor): a Composition composes a kind whose ManagedResourceDefinition is Inactive (Crossplane made no CRD for it), or that no MRD nor CRD defines: its composite resources cannot become ready; one finding per kind, naming the Compositions, the MRD, the provider that made it and the activate entry that would activate it"},
	{RuleActivationUnused, doctorVerb, "info: how many active MRDs no Composition composes and whose kind has no object, and the CRDs they cost, which stay (Crossplane cannot deactivate an MRD, crossplane#7205); names a few"},
	{RuleActivationUnmatched, doctorVerb, "warning: a ManagedResourceActivationPolicy's activate entry matches no MRD (a typo activates nothing): names the policy and the entry, and an MRD name close to it"},
	{RuleCrossplaneUnknown, doctorVerb, "warning: with --crossplane-version, the release table does not know the target (or the running release, or the target is a pre-release): only what can be checked without it is"},
	{RuleCrossplaneDowngrade, doctorVerb, "blocking: the target is older than the running Crossplane, which does not support downgrades"},
	{RuleCrossplaneSkipped, doctorVerb, "blocking: the target skips a minor version (Crossplane upgrades one minor at a time; v1.20 to v2.0 is the one major step): names the releases to go through"},
	{RuleCrossplaneKnownBad, doctorVerb, "blocking: the target is a release with a known defect that this cluster triggers (v2.4.0 and v2.4.1 with a DeploymentRuntimeConfig that names its ServiceAccount); warning when it does not"},
	{RuleCrossplaneStored, doctorVerb, "blocking: a core CRD stores objects at a version the target no longer defines: Crossplane's start cannot update it and Crossplane does not start; names what migrates it"},
	{RuleCrossplaneRemovedKind, doctorVerb, "warning: objects exist of a core kind the target no longer has (ControllerConfig, StoreConfig from v2.0); blocking for a package whose runtime takes its settings from one"},
	{RuleCrossplaneRevisions, doctorVerb, "info: the target names revisions differently (v2.3 to v2.4), so every package gets a new revision and every provider's and function's runtime restarts: one finding that counts and names them"},
	{RuleCrossplaneManual, doctorVerb, "blocking for a provider or function, warning for a configuration: under Manual activation, the new revision the target makes stays inactive and the running one is deactivated: offline until someone activates it"},
	{RuleCrossplaneTwin, doctorVerb, "blocking: a package others depend on, under a name other than the resolver's, when the target replaces every revision: the resolver can install a twin and take every package down"},
	{RuleCrossplaneConstraint, doctorVerb, "blocking: a package's Crossplane constraint (its meta object's spec.crossplane.version, read from its registry) excludes the target; warning when it cannot be read, once with --offline"},
	{RuleRenameState, []string{verbRename}, "blocking: the package is paused, being deleted, has no active healthy current revision, or what the rename needs could not be read: nothing would prove the hand-over"},
	{RuleRenameTarget, []string{verbRename}, "blocking: the new name is taken by a package of the kind, or is no valid name"},
	{RuleRenameRelease, []string{verbRename}, "blocking: the running Crossplane is not v2.3 or v2.4 (or its version cannot be read), the releases whose hand-over between packages rename was built on"},
	{RuleRenameGitOps, []string{verbRename}, "blocking: Argo CD, Flux or Helm manages the package (its tracking label or annotation): it would put it back under its old name, a twin"},
	{RuleRenameHandOver, []string{verbRename}, "info: what the package manager does with the CRDs, MRDs and other objects on the running release while they change hands, and the dependents whose dependency is missing meanwhile"},
	{RuleSpecChange, []string{verbPlanFiles}, "info: a manifest edits a package's spec beyond its package, and what that does on the running Crossplane; warning when, under Manual activation from v2.4, the running revision stops"},
	{RuleOffline, []string{verbPlanFiles}, "with --offline, what only the cluster can check: warning, once per plan, when the target drops a CRD's kind or served version (live objects are not counted); info when it has a Crossplane constraint (not checked)"},
}

// RulesHelp lists the rules a verb's plan applies, one "* id: help" line
// each, for its --help (whose renderer makes them a list).
func RulesHelp(verb string) string {
	var lines []string
	for _, r := range Rules {
		if slices.Contains(r.Verbs, verb) {
			lines = append(lines, "* "+r.ID+": "+r.Help)
		}
	}
	return strings.Join(lines, "\n")
}
