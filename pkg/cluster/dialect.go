package cluster

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// Dialect speaks one generation of Crossplane's package API: it builds the
// objects that install packages and reads them back into the common model,
// so that the verbs never branch on the generation.
type Dialect interface {
	// API is the served group the dialect speaks.
	API() ServedAPI
	// Kinds are the package kinds a user installs, in display order.
	Kinds() []string
	// Resource is where objects of a package or revision kind live.
	Resource(kind string) (schema.GroupVersionResource, error)
	// Namespaced tells whether objects of kind live in a namespace.
	Namespaced(kind string) bool
	// Build makes the object that installs spec.
	Build(spec installed.InstallSpec) (*unstructured.Unstructured, error)
	// Decode turns a package object into the common model (Build's
	// inverse).
	Decode(u *unstructured.Unstructured) *installed.Package
	// RevisionKind is the kind of kind's revisions ("" if it has none);
	// RevisionList lists the revisions of a package, and IsRevisionOf
	// tells one from a cache.
	RevisionKind(kind string) string
	RevisionList(p *installed.Package) metav1.ListOptions
	IsRevisionOf(p *installed.Package, rev *unstructured.Unstructured) bool
	DecodeRevision(u *unstructured.Unstructured) *installed.Revision
	// Readiness judges how far the package manager has got with a package.
	Readiness(p *installed.Package) installed.Readiness
	// SetPackage points a package object at another reference (upgrade).
	SetPackage(u *unstructured.Unstructured, ref string) error
	// LockResource is where the dependency Lock lives ("" if the
	// generation has none).
	LockResource() (schema.GroupVersionResource, string, bool)
	DecodeLock(u *unstructured.Unstructured) []installed.LockPackage
}

// ResolveKind maps what a user typed (provider, providers, Provider,
// PROVIDER) to one of the dialect's kinds.
func ResolveKind(d Dialect, typed string) (string, error) {
	t := strings.ToLower(typed)
	for _, k := range d.Kinds() {
		l := strings.ToLower(k)
		if t == l || t == l+"s" || t == strings.TrimSuffix(l, "y")+"ies" {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown package kind %q: %s serves %s", typed, d.API().Group, strings.ToLower(strings.Join(d.Kinds(), ", ")))
}

// NewDialect picks the dialect for the package APIs a cluster serves: the
// newest generation, or the one group names.
func NewDialect(apis []ServedAPI, group string) (Dialect, error) {
	if len(apis) == 0 {
		var groups []string
		for _, g := range Generations {
			groups = append(groups, g.Group)
		}
		return nil, fmt.Errorf("the cluster serves no Crossplane package API (%s): is Crossplane installed?", strings.Join(groups, ", "))
	}
	i := 0
	if group != "" {
		i = slices.IndexFunc(apis, func(a ServedAPI) bool { return a.Group == group })
		if i < 0 {
			return nil, fmt.Errorf("--api-group %s: the cluster does not serve it (it serves %s)", group, servedGroups(apis))
		}
	}
	switch apis[i].Group {
	case "pkg.crossplane.io", "pkg.ibm.crossplane.io":
		return newPkgDialect(apis[i]), nil
	case "packages.crossplane.io", "stacks.crossplane.io", "extensions.crossplane.io":
		return newLegacyDialect(apis[i]), nil
	}
	return nil, fmt.Errorf("the cluster serves %s, whose package API this version of kubectl xpkg cannot drive yet", apis[i].Group)
}

func servedGroups(apis []ServedAPI) string {
	var out []string
	for _, a := range apis {
		out = append(out, a.Group)
	}
	return strings.Join(out, ", ")
}

// InstallKind maps what a package says it is to the kind that installs it
// in d: a meta kind (Provider, Configuration, Function) for pkg.crossplane.io;
// for the v0.x generations a legacy package's permission scope
// ("scope:Cluster" or "scope:Namespaced") picks the cluster-wide or the
// namespaced request.
func InstallKind(d Dialect, packageKind string) (string, error) {
	scope, legacyPkg := strings.CutPrefix(packageKind, "scope:")
	kinds := d.Kinds()
	_, isLegacy := d.(*legacyDialect)
	switch {
	case isLegacy && !legacyPkg:
		return "", fmt.Errorf("it is a %s package (package.yaml format), which %s cannot install: it needs Crossplane v0.14 or later", packageKind, d.API().Group)
	case !isLegacy && legacyPkg:
		return "", fmt.Errorf("it is a Crossplane v0.x package (.registry/ format), which %s cannot install", d.API().Group)
	case isLegacy && scope == "Namespaced" && len(kinds) > 1:
		return kinds[1], nil
	case isLegacy:
		return kinds[0], nil
	}
	return ResolveKind(d, packageKind)
}
