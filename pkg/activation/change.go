package activation

import (
	"regexp"
	"slices"
	"strings"
)

// configKinds are the plurals of the kinds a provider's CRDs keep as CRDs
// when Crossplane makes MRDs of the others (its
// CustomToManagedResourceDefinitions: ProviderConfig, ClusterProviderConfig
// and their usages).
var configKinds = []string{"providerconfigs.", "clusterproviderconfigs.", "providerconfigusages.", "clusterproviderconfigusages."}

// Managed are the names, among a provider's CRDs, of those Crossplane
// makes MRDs of.
func Managed(crds []string) []string {
	var out []string
	for _, n := range crds {
		if !hasPrefix(n, configKinds) {
			out = append(out, n)
		}
	}
	return out
}

func hasPrefix(s string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

var notAlnum = regexp.MustCompile("[^a-zA-Z0-9]+")

// SafeStart reports whether a provider's spec.capabilities declare
// safe-start, matched as Crossplane matches capabilities: letters and
// digits alone, in any case ("SafeStart", "safe_start").
func SafeStart(capabilities []string) bool {
	for _, c := range capabilities {
		if strings.EqualFold(notAlnum.ReplaceAllString(c, ""), "safestart") {
			return true
		}
	}
	return false
}

// Activated are the names that some entry of the policies matches.
func Activated(names []string, policies [][]string) []string {
	var out []string
	for _, n := range names {
	entries:
		for _, p := range policies {
			for _, e := range p {
				if Matches(e, n) {
					out = append(out, n)
					break entries
				}
			}
		}
	}
	return out
}

// Plurals are the plural names a kind's CRD may have, as Kubernetes'
// code generators and upjet make them from its name: kind + s, + es, y to
// ies. A composed Kind.group whose plural is not among them is not
// matched to a definition by name; a plan then says less, never wrong.
func Plurals(kind string) []string {
	k := strings.ToLower(kind)
	out := []string{k + "s", k + "es"}
	if strings.HasSuffix(k, "y") {
		out = append(out, strings.TrimSuffix(k, "y")+"ies")
	}
	return out
}

// DefinitionOf is the name, among names (plural.group), of the definition
// of the composed kind Kind.group; "" when none is.
func DefinitionOf(kindGroup string, names []string) string {
	kind, group, ok := strings.Cut(kindGroup, ".")
	if !ok {
		return ""
	}
	for _, p := range Plurals(kind) {
		if n := p + "." + group; slices.Contains(names, n) {
			return n
		}
	}
	return ""
}
