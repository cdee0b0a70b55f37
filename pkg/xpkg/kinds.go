package xpkg

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// allowedKind is an object kind a package may contain, and who allows it.
type allowedKind struct {
	Group, Kind string
	// Since is empty for kinds the xpkg specification lists, or names the
	// Crossplane release that added the kind (today's Crossplane accepts it).
	Since string
}

// allowedObjects is the content rule of the xpkg specification (seed 004),
// extended by what today's Crossplane accepts.
var allowedObjects = map[string][]allowedKind{
	KindProvider: {
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
		{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"},
		{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"},
		{Group: "apiextensions.crossplane.io", Kind: "ManagedResourceDefinition", Since: "Crossplane v2.0"},
	},
	KindConfiguration: {
		{Group: "apiextensions.crossplane.io", Kind: "CompositeResourceDefinition"},
		{Group: "apiextensions.crossplane.io", Kind: "Composition"},
		{Group: "apiextensions.crossplane.io", Kind: "ManagedResourceActivationPolicy", Since: "Crossplane v2.0"},
		{Group: "ops.crossplane.io", Kind: "Operation", Since: "Crossplane v2.0"},
		{Group: "ops.crossplane.io", Kind: "CronOperation", Since: "Crossplane v2.0"},
		{Group: "ops.crossplane.io", Kind: "WatchOperation", Since: "Crossplane v2.0"},
	},
	KindFunction: {
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Since: "Crossplane v1.14"},
	},
}

// AllowedSince tells whether a kind is allowed in a package of pkgKind, and
// if so whether the xpkg specification allows it ("") or a later Crossplane.
func AllowedSince(pkgKind, group, kind string) (since string, ok bool) {
	for _, a := range allowedObjects[pkgKind] {
		if a.Group == group && a.Kind == kind {
			return a.Since, true
		}
	}
	return "", false
}

func checkAllowed(pkgKind string, o *Object) (Violation, bool) {
	gvk := o.GVK()
	if _, ok := AllowedSince(pkgKind, gvk.Group, gvk.Kind); ok {
		return Violation{}, true
	}
	var names []string
	for _, a := range allowedObjects[pkgKind] {
		names = append(names, a.Kind)
	}
	return violation(o, RuleAllowedKind, "%s is not allowed in a %s package (allowed: %s)",
		gvk.GroupKind().String(), pkgKind, strings.Join(names, ", ")), false
}

func nameProblem(n string) string {
	if n == "" {
		return "is missing"
	}
	if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
		return fmt.Sprintf("%q is not a valid name: %s", n, errs[0])
	}
	return ""
}
