package activation

import (
	"regexp"
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
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
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
