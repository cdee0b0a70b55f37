package installed

import (
	"testing"
	"time"
)

// TestTerminalConditions: the revision's own checks of a package's
// contents fail for good; a definition another package controls does
// once the conflict has lasted, not a moment into an upgrade.
func TestTerminalConditions(t *testing.T) {
	pkg := func(installed, healthy Condition) *Package {
		return &Package{Source: "r/p:v1", CurrentIdentifier: "r/p:v1", Generation: 2, Conditions: []Condition{installed, healthy}}
	}
	ok := Condition{Type: TypeInstalled, Status: "True", ObservedGeneration: 2}
	unhealthy := func(msg string, since time.Duration) Condition {
		return Condition{Type: TypeHealthy, Status: "False", Reason: "UnhealthyPackageRevision", ObservedGeneration: 2, Message: msg, LastTransitionTime: time.Now().Add(-since)}
	}
	for _, c := range []struct {
		name     string
		p        *Package
		terminal bool
	}{
		{"lint", pkg(ok, unhealthy(`Package revision health is "False" with message: linting package contents failed: bad`, 0)), true},
		{"validate", pkg(ok, unhealthy(`Package revision health is "False" with message: validating package contents failed: bad`, 0)), true},
		{"conflict, new", pkg(ok, unhealthy(`Package revision health is "False" with message: cannot establish control of object: widgets.example.org is already controlled by ProviderRevision other-abc (UID 1234)`, time.Second)), false},
		{"conflict, lasting", pkg(ok, unhealthy(`Package revision health is "False" with message: cannot establish control of object: widgets.example.org is already controlled by ProviderRevision other-abc (UID 1234)`, time.Minute)), true},
		{"webhook secret", pkg(ok, unhealthy(`Package revision health is "False" with message: cannot establish control of object: waiting for package runtime controller to set revision's webhook TLS secret`, time.Minute)), false},
		{"runtime starting", pkg(ok, unhealthy(`Package runtime health is "False" with message: Deployment is not available`, time.Minute)), false},
		// A tag that does not exist: Crossplane reports it for the present
		// generation before it records the new reference as current.
		{"unpack, new reference", unpacking(2, "r/p:v1"), true},
		{"unpack, older generation", unpacking(1, "r/p:v1"), false},
	} {
		if got := PackageReadiness(c.p).Terminal != nil; got != c.terminal {
			t.Errorf("%s: terminal %v, want %v", c.name, got, c.terminal)
		}
	}
}

// unpacking is a package moved to r/p:v2 whose image Crossplane could not
// unpack, reported at generation observed, its identifier still at
// identifier.
func unpacking(observed int64, identifier string) *Package {
	return &Package{Source: "r/p:v2", CurrentIdentifier: identifier, Generation: 2, Conditions: []Condition{
		{Type: TypeInstalled, Status: "False", Reason: "UnpackingPackage", ObservedGeneration: observed,
			Message: "cannot unpack package: failed to fetch package digest from remote: GET https://r/v2/p/manifests/v2: MANIFEST_UNKNOWN: manifest unknown"},
		{Type: TypeHealthy, Status: "False", Reason: "UnhealthyPackageRevision", ObservedGeneration: observed},
	}}
}
