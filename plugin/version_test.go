package plugin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestVersionAgainstACluster: version prints the server's version and the
// package APIs it serves, as text and as JSON.
func TestVersionAgainstACluster(t *testing.T) {
	x := newCLI(t)
	r := x.Run("version").Succeeds(t)
	for _, want := range []string{"Server Version: v1.", "pkg.crossplane.io", "Provider", "ProviderRevision", "Configuration", "Function", "Lock"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("version output lacks %q:\n%s", want, r.Stdout)
		}
	}

	r = x.Run("version", "-o", "json").Succeeds(t)
	var report struct {
		ServerVersion struct{ GitVersion string }
		PackageAPIs   []struct {
			Group    string
			Versions []struct {
				Version string
				Kinds   []string
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(report.ServerVersion.GitVersion, "v1.") {
		t.Errorf("server version = %q", report.ServerVersion.GitVersion)
	}
	if len(report.PackageAPIs) == 0 || report.PackageAPIs[0].Group != "pkg.crossplane.io" {
		t.Fatalf("package APIs = %+v", report.PackageAPIs)
	}
	if got := report.PackageAPIs[0].Versions; len(got) != 2 || got[0].Version != "v1" || !slices.Contains(got[0].Kinds, "Provider") || !slices.Contains(got[1].Kinds, "Lock") {
		t.Errorf("pkg.crossplane.io versions = %+v", got)
	}
}
