package installed

import (
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PackageManagerFieldManager is the field manager Crossplane's package
// manager writes under: the API server names a manager after the
// client's user agent, and Crossplane's is its binary's name. Its
// dependency resolver creates a missing dependency's package with no label,
// annotation or owner that says so: the field manager that set the
// package's reference is the only record of who installed it.
const PackageManagerFieldManager = "crossplane"

// InstalledByAnnotation keeps, on a package the package manager installed
// as a dependency, that it did, once kubectl xpkg changes its reference
// (an upgrade, a rollback): the change makes kubectl xpkg the field
// manager of spec.package, and the record would be lost.
const InstalledByAnnotation = "kubectl-xpkg.github.io/installed-by"

// Origin is who installed a package, as its managed fields record it.
type Origin int

const (
	// OriginUnknown: the object records no owner of its reference (no
	// managedFields: stripped, or an API server that keeps none).
	OriginUnknown Origin = iota
	// OriginDependency: the package manager alone set its reference: it
	// installed the package to satisfy another's dependency.
	OriginDependency
	// OriginExplicit: someone else set or changed its reference (kubectl,
	// kubectl xpkg, a GitOps tool): a package installed, or taken over,
	// on purpose.
	OriginExplicit
)

// PackageOrigin says who installed the package: the field managers that
// own its spec.package (apart from subresources), and what that makes it.
// Changing a dependency's reference with another tool makes it explicit,
// as apt marks a package installed by hand once asked for by name;
// kubectl xpkg's own changes keep the record (InstalledByAnnotation).
func PackageOrigin(u *unstructured.Unstructured) (Origin, []string) {
	var owners []string
	for _, e := range u.GetManagedFields() {
		if e.Subresource != "" || e.FieldsV1 == nil || !ownsField(e.FieldsV1.Raw, "f:spec", "f:package") {
			continue
		}
		if !slices.Contains(owners, e.Manager) {
			owners = append(owners, e.Manager)
		}
	}
	switch {
	case u.GetAnnotations()[InstalledByAnnotation] == PackageManagerFieldManager:
		return OriginDependency, owners
	case len(owners) == 0:
		return OriginUnknown, nil
	case len(owners) == 1 && owners[0] == PackageManagerFieldManager:
		return OriginDependency, owners
	}
	return OriginExplicit, owners
}

// ownsField: the FieldsV1 set holds the path.
func ownsField(raw []byte, path ...string) bool {
	for _, p := range path {
		var set map[string]json.RawMessage
		if json.Unmarshal(raw, &set) != nil {
			return false
		}
		next, ok := set[p]
		if !ok {
			return false
		}
		raw = next
	}
	return true
}
