// Package releases is what kubectl xpkg knows of Crossplane's own
// releases, in one table: for each minor release line, the versions its
// core CRDs define, how its package manager names package revisions, the
// stored versions its start migrates, and patch releases with known
// defects. Every fact names where it was read; what the table does not
// say is not known. Pure data and lookups: no cluster, no network.
package releases

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Naming is how a release's package manager names the revision it makes
// of a package.
type Naming string

const (
	// ByDigest: the package's name and the first 12 hex digits of its
	// image digest (xpkg.FriendlyID(name, digest)).
	ByDigest Naming = "the image digest"
	// ByDigestAndGeneration: the package's name and the first 12 hex digits
	// of sha256(digest + "|" + metadata.generation).
	ByDigestAndGeneration Naming = "a hash of the image digest and the package's generation"
)

// Condition says when a defect bites.
type Condition string

// PinnedServiceAccount: a DeploymentRuntimeConfig names its
// ServiceAccount (spec.serviceAccountTemplate.metadata.name), so the
// revisions of a package share one.
const PinnedServiceAccount Condition = "a DeploymentRuntimeConfig pins spec.serviceAccountTemplate.metadata.name"

// Defect is a known defect of some patch releases of a line.
type Defect struct {
	// Patches are the affected patch releases of the line.
	Patches []uint64
	Issue   string
	Summary string
	// When is what makes it bite ("" always).
	When Condition
	// FixedIn is the first release without it.
	FixedIn string
}

// CRD is a core CRD and some of its versions.
type CRD struct {
	Name     string
	Versions []string
}

// Removed is a core CRD a line no longer ships. Its CRD stays in the
// cluster (Crossplane applies its own CRDs and deletes none), but nothing
// serves its objects any more.
type Removed struct {
	CRD, Kind string
	// Ref is the spec field of packages that pointed at objects of the
	// kind, which the line's package CRDs drop with it ("" none).
	Ref string
}

// Migration is a stored version whose objects a release's start (its init
// container: cmd/crossplane/core/init.go, NewCoreCRDsMigrator) moves to the
// CRD's storage version, removing it from status.storedVersions, in the
// patch releases From up to (not including) Until of a line (0: open).
type Migration struct {
	CRD, Version string
	From, Until  uint64
}

// Line is one minor release line of Crossplane.
type Line struct {
	// Minor is vMAJOR.MINOR.
	Minor  string
	Naming Naming
	// Adds are the core CRD versions the line defines that the line before
	// did not (a CRD first shipped has all its versions here); Drops those
	// it no longer defines; Gone the CRDs it no longer ships.
	Adds, Drops []CRD
	Gone        []Removed
	Migrations  []Migration
	Defects     []Defect
}

const (
	xrds    = "compositeresourcedefinitions.apiextensions.crossplane.io"
	comps   = "compositions.apiextensions.crossplane.io"
	comprev = "compositionrevisions.apiextensions.crossplane.io"
	envcfg  = "environmentconfigs.apiextensions.crossplane.io"
	usages  = "usages.apiextensions.crossplane.io"
	fns     = "functions.pkg.crossplane.io"
	fnrevs  = "functionrevisions.pkg.crossplane.io"
	locks   = "locks.pkg.crossplane.io"
	ctrlcfg = "controllerconfigs.pkg.crossplane.io"
	stores  = "storeconfigs.secrets.crossplane.io"
)

// The migrations every line from v1.14 to v2.0.2 makes (init.go at each
// tag: compositionrevisions and locks from v1alpha1).
var (
	migrateLockV1alpha1 = Migration{CRD: locks, Version: "v1alpha1"}
	migrateFunctions    = []Migration{{CRD: fns, Version: "v1beta1"}, {CRD: fnrevs, Version: "v1beta1"}}
)

// Table is every release line the plugin knows, oldest first. The CRD
// facts are read from cluster/crds of crossplane/crossplane at each tag
// (v1.14.0, v1.20.0, v2.3.4 and v2.4.2 also from the Go module), patch
// releases checked to define the same; the migrations from
// cmd/crossplane/core/init.go at each patch tag; the naming from
// internal/controller/pkg/manager (revisioner.go to v2.1, reconciler.go
// from v2.2).
var Table = []Line{
	{Minor: "v1.14", Naming: ByDigest,
		// cluster/crds at v1.14.0: the base every later line changes.
		Adds: []CRD{{xrds, []string{"v1"}}, {comprev, []string{"v1", "v1beta1"}}, {comps, []string{"v1"}},
			{envcfg, []string{"v1alpha1"}}, {usages, []string{"v1alpha1"}},
			{"configurationrevisions.pkg.crossplane.io", []string{"v1"}}, {"configurations.pkg.crossplane.io", []string{"v1"}},
			{ctrlcfg, []string{"v1alpha1"}}, {"deploymentruntimeconfigs.pkg.crossplane.io", []string{"v1beta1"}},
			{fnrevs, []string{"v1beta1"}}, {fns, []string{"v1beta1"}}, {locks, []string{"v1beta1"}},
			{"providerrevisions.pkg.crossplane.io", []string{"v1"}}, {"providers.pkg.crossplane.io", []string{"v1"}},
			{stores, []string{"v1alpha1"}}},
		Migrations: []Migration{{CRD: comprev, Version: "v1alpha1"}, migrateLockV1alpha1}},
	{Minor: "v1.15", Naming: ByDigest,
		Migrations: []Migration{{CRD: comprev, Version: "v1alpha1"}, migrateLockV1alpha1}},
	{Minor: "v1.16", Naming: ByDigest,
		Migrations: []Migration{{CRD: comprev, Version: "v1alpha1"}, migrateLockV1alpha1}},
	{Minor: "v1.17", Naming: ByDigest,
		// pkg.crossplane.io_functions.yaml and _functionrevisions.yaml at v1.17.0: v1 joins v1beta1.
		Adds:       []CRD{{fns, []string{"v1"}}, {fnrevs, []string{"v1"}}},
		Migrations: append([]Migration{{CRD: comprev, Version: "v1alpha1"}, migrateLockV1alpha1}, migrateFunctions...)},
	{Minor: "v1.18", Naming: ByDigest,
		// apiextensions.crossplane.io_environmentconfigs.yaml and pkg.crossplane.io_imageconfigs.yaml at v1.18.0.
		Adds: []CRD{{envcfg, []string{"v1beta1"}}, {"imageconfigs.pkg.crossplane.io", []string{"v1beta1"}}},
		// init.go: environmentconfigs from v1alpha1 in v1.18.0-1, from v1beta1 from v1.18.2.
		Migrations: append([]Migration{{CRD: comprev, Version: "v1alpha1"}, migrateLockV1alpha1,
			{CRD: envcfg, Version: "v1alpha1", Until: 2}, {CRD: envcfg, Version: "v1beta1", From: 2}}, migrateFunctions...)},
	{Minor: "v1.19", Naming: ByDigest,
		// apiextensions.crossplane.io_usages.yaml at v1.19.0: v1beta1 joins v1alpha1.
		Adds: []CRD{{usages, []string{"v1beta1"}}},
		Migrations: append([]Migration{{CRD: comprev, Version: "v1alpha1"}, migrateLockV1alpha1,
			{CRD: envcfg, Version: "v1beta1"}, {CRD: usages, Version: "v1beta1"}}, migrateFunctions...)},
	{Minor: "v1.20", Naming: ByDigest,
		// init.go: compositionrevisions from v1alpha1 in v1.20.0-1, from v1beta1 (which v2.0 drops) from v1.20.2.
		Migrations: append([]Migration{{CRD: comprev, Version: "v1alpha1", Until: 2}, {CRD: comprev, Version: "v1beta1", From: 2},
			migrateLockV1alpha1, {CRD: envcfg, Version: "v1alpha1"}, {CRD: usages, Version: "v1beta1"}}, migrateFunctions...)},
	{Minor: "v2.0", Naming: ByDigest,
		// cluster/crds at v2.0.0: XRDs add v2; the managed resource definitions,
		// operations and protection groups are new.
		Adds: []CRD{{xrds, []string{"v2"}},
			{"managedresourceactivationpolicies.apiextensions.crossplane.io", []string{"v1alpha1"}},
			{"managedresourcedefinitions.apiextensions.crossplane.io", []string{"v1alpha1"}},
			{"cronoperations.ops.crossplane.io", []string{"v1alpha1"}}, {"operations.ops.crossplane.io", []string{"v1alpha1"}},
			{"watchoperations.ops.crossplane.io", []string{"v1alpha1"}},
			{"clusterusages.protection.crossplane.io", []string{"v1beta1"}}, {"usages.protection.crossplane.io", []string{"v1beta1"}}},
		// apiextensions.crossplane.io_compositionrevisions.yaml (v1 only) and
		// _environmentconfigs.yaml (v1beta1 only) at v2.0.0.
		Drops: []CRD{{comprev, []string{"v1beta1"}}, {envcfg, []string{"v1alpha1"}}},
		// No controllerconfigs or storeconfigs CRD at v2.0.0, and the package
		// CRDs have no spec.controllerConfigRef.
		Gone: []Removed{{CRD: ctrlcfg, Kind: "ControllerConfig", Ref: "controllerConfigRef"}, {CRD: stores, Kind: "StoreConfig"}},
		// init.go: six migrations in v2.0.0-2, three from v2.0.3.
		Migrations: append([]Migration{{CRD: comprev, Version: "v1alpha1", Until: 3}, {CRD: envcfg, Version: "v1alpha1", Until: 3},
			{CRD: locks, Version: "v1alpha1", Until: 3}, {CRD: usages, Version: "v1beta1"}}, migrateFunctions...)},
	{Minor: "v2.1", Naming: ByDigest, Migrations: v2Migrations()},
	// manager/reconciler.go at v2.2.0 and v2.3.4: FriendlyID(name, pkg.DigestHex()).
	{Minor: "v2.2", Naming: ByDigest, Migrations: v2Migrations()},
	{Minor: "v2.3", Naming: ByDigest, Migrations: v2Migrations()},
	// manager/reconciler.go at v2.4.2: packageRevisionID(digest, generation)
	// (crossplane#7473); v2.4.0-rc.0 still named by the digest alone.
	{Minor: "v2.4", Naming: ByDigestAndGeneration, Migrations: v2Migrations(),
		Defects: []Defect{{Patches: []uint64{0, 1}, Issue: "crossplane/crossplane#7838", When: PinnedServiceAccount, FixedIn: "v2.4.2",
			// v2.4.2's runtime.go applySharedRuntimeObject demotes the old
			// revision's controller reference; v2.4.0 and v2.4.1 did not.
			Summary: "the new revision of a provider or function cannot take over a ServiceAccount its old revision controls (only one owner reference may be the controller): its runtime does not start and it stays unhealthy"}}},
}

// v2Migrations are the migrations of v2.1 to v2.4 (init.go at v2.1.0 to
// v2.3.4, and v2.4.2).
func v2Migrations() []Migration {
	return append([]Migration{{CRD: usages, Version: "v1beta1"}}, migrateFunctions...)
}

// Parse reads a Crossplane version: MAJOR.MINOR.PATCH, with or without a
// leading v, a pre-release allowed.
func Parse(s string) (*semver.Version, error) {
	v, err := semver.StrictNewVersion(strings.TrimPrefix(s, "v"))
	if err != nil {
		return nil, fmt.Errorf("%q is no Crossplane version: want MAJOR.MINOR.PATCH such as v2.4.2 (%v)", s, err)
	}
	return v, nil
}

// Find is the line of v, or nil when the table does not know it.
func Find(v *semver.Version) *Line {
	minor := fmt.Sprintf("v%d.%d", v.Major(), v.Minor())
	for i := range Table {
		if Table[i].Minor == minor {
			return &Table[i]
		}
	}
	return nil
}

// Known says which lines the table knows, for messages.
func Known() string { return Table[0].Minor + " to " + Table[len(Table)-1].Minor }
