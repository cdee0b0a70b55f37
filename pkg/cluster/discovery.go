package cluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
// kinds it serves, in the order of Generations.
func DiscoverPackageAPIs(dc discovery.DiscoveryInterface) ([]ServedAPI, error) {
	groups, resources, err := dc.ServerGroupsAndResources()
	if err != nil && !onlyOtherGroupsFailed(err) {
		return nil, fmt.Errorf("discover API groups: %w", err)
	}
	kinds := map[schema.GroupVersion][]string{}
	plurals := map[schema.GroupVersion]map[string]string{}
	namespaced := map[schema.GroupVersion]map[string]bool{}
	for _, rl := range resources {
		gv, perr := schema.ParseGroupVersion(rl.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range rl.APIResources {
			if strings.Contains(r.Name, "/") { // subresources
				continue
			}
			kinds[gv] = append(kinds[gv], r.Kind)
			if plurals[gv] == nil {
				plurals[gv], namespaced[gv] = map[string]string{}, map[string]bool{}
			}
			plurals[gv][r.Kind] = r.Name
			namespaced[gv][r.Kind] = r.Namespaced
		}
	}
	var out []ServedAPI
	for _, gen := range Generations {
		for _, g := range groups {
			if g.Name != gen.Group {
				continue
			}
			api := ServedAPI{Generation: gen, PreferredVersion: g.PreferredVersion.Version}
			for _, v := range g.Versions {
				gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
				k := kinds[gv]
				slices.Sort(k)
				api.Versions = append(api.Versions, ServedVersion{Version: v.Version, Kinds: slices.Compact(k), Resources: plurals[gv], Namespaced: namespaced[gv]})
			}
			out = append(out, api)
		}
	}
	return out, nil
}

// onlyOtherGroupsFailed tolerates a partial discovery failure (an aggregated
// API server that is down, say) unless it hit a package API group.
func onlyOtherGroupsFailed(err error) bool {
	var gerr *discovery.ErrGroupDiscoveryFailed
	if !errors.As(err, &gerr) {
		return false
	}
	for gv := range gerr.Groups {
		if _, ok := GenerationOf(gv.Group); ok {
			return false
		}
	}
	return true
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
