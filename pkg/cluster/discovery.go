package cluster

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// Generation is one way Crossplane has exposed packages through the API.
type Generation struct {
	// Group is the API group of the package objects.
	Group string `json:"group"`
	// Name says which Crossplane design the group belongs to.
	Name string `json:"generation"`
}

// Generations lists every package API, newest first.
var Generations = []Generation{
	{Group: "pkg.crossplane.io", Name: "packages (Crossplane v0.14 and later)"},
	{Group: "pkg.ibm.crossplane.io", Name: "packages (IBM distribution)"},
	{Group: "packages.crossplane.io", Name: "package installs (Crossplane v0.11-v0.13)"},
	{Group: "stacks.crossplane.io", Name: "stacks (Crossplane v0.4-v0.10)"},
	{Group: "extensions.crossplane.io", Name: "extensions (Crossplane v0.3)"},
}

// GenerationOf returns the generation that owns group.
func GenerationOf(group string) (Generation, bool) {
	i := slices.IndexFunc(Generations, func(g Generation) bool { return g.Group == group })
	if i < 0 {
		return Generation{}, false
	}
	return Generations[i], true
}

// ServedAPI is one package API group as a cluster serves it.
type ServedAPI struct {
	Generation
	PreferredVersion string          `json:"preferredVersion"`
	Versions         []ServedVersion `json:"versions"`
}

// ServedVersion lists the kinds served under one version of a group.
type ServedVersion struct {
	Version string   `json:"version"`
	Kinds   []string `json:"kinds"`
	// Resources maps each kind to its resource (plural) name.
	Resources map[string]string `json:"-"`
	// Namespaced holds the kinds whose objects live in namespaces.
	Namespaced map[string]bool `json:"-"`
}

// DiscoverPackageAPIs asks the cluster which package API groups, versions and
// kinds it serves, in the order of Generations. It reads the resources of
// the package groups only, not of every group the server serves: from a
// warm discovery cache (--cache-dir) that is a few files, not a file per
// group version of the whole server (on a cold cache client-go fetches
// every group's resources at once anyway).
func DiscoverPackageAPIs(dc discovery.DiscoveryInterface) ([]ServedAPI, error) {
	groups, err := dc.ServerGroups()
	if err != nil {
		return nil, fmt.Errorf("discover API groups: %w", err)
	}
	var out []ServedAPI
	for _, gen := range Generations {
		for _, g := range groups.Groups {
			if g.Name != gen.Group {
				continue
			}
			api := ServedAPI{Generation: gen, PreferredVersion: g.PreferredVersion.Version}
			for _, v := range g.Versions {
				rl, err := dc.ServerResourcesForGroupVersion(v.GroupVersion)
				if err != nil {
					return nil, fmt.Errorf("discover API groups: %s: %w", v.GroupVersion, err)
				}
				api.Versions = append(api.Versions, servedVersion(v.Version, rl))
			}
			out = append(out, api)
		}
	}
	return out, nil
}

// servedVersion is what one version of a package group serves: its
// kinds (sorted), their resources and which are namespaced.
func servedVersion(version string, rl *metav1.APIResourceList) ServedVersion {
	v := ServedVersion{Version: version, Resources: map[string]string{}, Namespaced: map[string]bool{}}
	for _, r := range rl.APIResources {
		if strings.Contains(r.Name, "/") { // subresources
			continue
		}
		v.Kinds = append(v.Kinds, r.Kind)
		v.Resources[r.Kind] = r.Name
		v.Namespaced[r.Kind] = r.Namespaced
	}
	slices.Sort(v.Kinds)
	v.Kinds = slices.Compact(v.Kinds)
	return v
}

// IsNamespaced tells whether the group serves kind in namespaces.
func (a ServedAPI) IsNamespaced(kind string) bool {
	for _, v := range a.Versions {
		if v.Namespaced[kind] {
			return true
		}
	}
	return false
}

// Resource finds the version and resource that serve kind, preferring the
// group's preferred version.
func (a ServedAPI) Resource(kind string) (schema.GroupVersionResource, bool) {
	versions := slices.Clone(a.Versions)
	slices.SortStableFunc(versions, func(x, y ServedVersion) int {
		switch {
		case x.Version == a.PreferredVersion:
			return -1
		case y.Version == a.PreferredVersion:
			return 1
		}
		return 0
	})
	for _, v := range versions {
		if r, ok := v.Resources[kind]; ok {
			return schema.GroupVersionResource{Group: a.Group, Version: v.Version, Resource: r}, true
		}
	}
	return schema.GroupVersionResource{}, false
}

// DiscoverPackageAPIsFresh is DiscoverPackageAPIs that asks the server
// again when the cached answer has no package API: the discovery cache
// (--cache-dir) may predate Crossplane's CRDs.
func DiscoverPackageAPIsFresh(dc discovery.CachedDiscoveryInterface) ([]ServedAPI, error) {
	apis, err := DiscoverPackageAPIs(dc)
	if err != nil || len(apis) > 0 || dc.Fresh() {
		return apis, err
	}
	dc.Invalidate()
	return DiscoverPackageAPIs(dc)
}
