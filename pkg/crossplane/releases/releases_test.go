package releases

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) *Line {
	t.Helper()
	v, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	l := Find(v)
	if l == nil {
		t.Fatalf("the table does not know %s", s)
	}
	return l
}

// TestDefines: what the table folds up to a line is what cluster/crds of
// that release defines (read from crossplane/crossplane at v1.14.0,
// v1.20.0, v2.0.0 and v2.4.2), CRD by CRD.
func TestDefines(t *testing.T) {
	v114 := map[string]string{
		"compositeresourcedefinitions.apiextensions.crossplane.io": "v1", "compositionrevisions.apiextensions.crossplane.io": "v1 v1beta1",
		"compositions.apiextensions.crossplane.io": "v1", "environmentconfigs.apiextensions.crossplane.io": "v1alpha1",
		"usages.apiextensions.crossplane.io": "v1alpha1", "configurationrevisions.pkg.crossplane.io": "v1",
		"configurations.pkg.crossplane.io": "v1", "controllerconfigs.pkg.crossplane.io": "v1alpha1",
		"deploymentruntimeconfigs.pkg.crossplane.io": "v1beta1", "functionrevisions.pkg.crossplane.io": "v1beta1",
		"functions.pkg.crossplane.io": "v1beta1", "locks.pkg.crossplane.io": "v1beta1",
		"providerrevisions.pkg.crossplane.io": "v1", "providers.pkg.crossplane.io": "v1", "storeconfigs.secrets.crossplane.io": "v1alpha1",
	}
	v120 := maps.Clone(v114)
	v120["environmentconfigs.apiextensions.crossplane.io"] = "v1alpha1 v1beta1"
	v120["usages.apiextensions.crossplane.io"] = "v1alpha1 v1beta1"
	v120["functionrevisions.pkg.crossplane.io"] = "v1beta1 v1"
	v120["functions.pkg.crossplane.io"] = "v1beta1 v1"
	v120["imageconfigs.pkg.crossplane.io"] = "v1beta1"
	v2 := maps.Clone(v120)
	delete(v2, "controllerconfigs.pkg.crossplane.io")
	delete(v2, "storeconfigs.secrets.crossplane.io")
	v2["compositeresourcedefinitions.apiextensions.crossplane.io"] = "v1 v2"
	v2["compositionrevisions.apiextensions.crossplane.io"] = "v1"
	v2["environmentconfigs.apiextensions.crossplane.io"] = "v1beta1"
	for _, n := range []string{"managedresourceactivationpolicies.apiextensions.crossplane.io", "managedresourcedefinitions.apiextensions.crossplane.io",
		"cronoperations.ops.crossplane.io", "operations.ops.crossplane.io", "watchoperations.ops.crossplane.io"} {
		v2[n] = "v1alpha1"
	}
	v2["clusterusages.protection.crossplane.io"] = "v1beta1"
	v2["usages.protection.crossplane.io"] = "v1beta1"
	for version, want := range map[string]map[string]string{"v1.14.0": v114, "v1.20.0": v120, "v2.0.0": v2, "v2.3.4": v2, "v2.4.2": v2} {
		got := map[string]string{}
		for crd, vs := range mustParse(t, version).Defines() {
			got[crd] = strings.Join(vs, " ")
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s defines\n%v\nwant\n%v", version, got, want)
		}
	}
	if n := len(CoreCRDs()); n != len(v2)+2 {
		t.Errorf("%d core CRDs, want %d (v2's and the two it removed)", n, len(v2)+2)
	}
}

func TestParse(t *testing.T) {
	for _, ok := range []string{"v2.4.2", "2.4.2", "v2.4.0-rc.0", "v1.20.11"} {
		if _, err := Parse(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "v2.4", "2", "latest", "vv2.4.2", "v2.4.2.1"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "want MAJOR.MINOR.PATCH") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	for _, unknown := range []string{"v1.13.0", "v2.5.0", "v3.0.0", "v1.21.0"} {
		v, _ := Parse(unknown)
		if l := Find(v); l != nil {
			t.Errorf("%s is in the table as %s", unknown, l.Minor)
		}
	}
	if Known() != "v1.14 to v2.4" {
		t.Errorf("Known: %s", Known())
	}
}

func TestRoute(t *testing.T) {
	for _, c := range []struct {
		from, to, steps string
		ok              bool
	}{
		{"v2.3.4", "v2.4.2", "v2.4", true},
		{"v2.4.0", "v2.4.2", "", true},
		{"v2.1.3", "v2.4.2", "v2.2 v2.3 v2.4", true},
		{"v1.20.3", "v2.0.1", "v2.0", true},
		{"v1.19.3", "v2.1.0", "v1.20 v2.0 v2.1", true},
		{"v2.4.2", "v2.3.4", "", false},
		{"v2.4.2", "v3.0.0", "", false},
	} {
		from, _ := Parse(c.from)
		to, _ := Parse(c.to)
		steps, ok := Route(from, to)
		if strings.Join(steps, " ") != c.steps || ok != c.ok {
			t.Errorf("%s to %s: %v %v, want %q %v", c.from, c.to, steps, ok, c.steps, c.ok)
		}
	}
}

// TestMigrations: v1.20.0 and .1 migrate CompositionRevisions from
// v1alpha1, later patches from v1beta1, which v2.0 drops; v2.0.3 stopped
// migrating Locks.
func TestMigrations(t *testing.T) {
	const comprev = "compositionrevisions.apiextensions.crossplane.io"
	l := mustParse(t, "v1.20.0")
	at := func(s string) bool {
		v, _ := Parse(s)
		return l.MigratesAt(v, comprev, "v1beta1")
	}
	if at("v1.20.1") || !at("v1.20.2") || !at("v1.20.11") {
		t.Error("v1.20's migration of v1beta1 CompositionRevisions is not v1.20.2's and later")
	}
	v, _ := Parse("v1.20.0")
	if got := l.FirstMigrating(v, comprev, "v1beta1"); got != "v1.20.2" {
		t.Errorf("first migrating after v1.20.0: %q", got)
	}
	v, _ = Parse("v1.20.5")
	if got := l.FirstMigrating(v, comprev, "v1beta1"); got != "v1.20.6" {
		t.Errorf("first migrating after v1.20.5: %q", got)
	}
	if got := l.FirstMigrating(v, comprev, "v1alpha1"); got != "" {
		t.Errorf("a later v1.20 patch migrates v1alpha1 again: %q", got)
	}
	v2 := mustParse(t, "v2.0.0")
	for s, want := range map[string]bool{"v2.0.2": true, "v2.0.3": false} {
		v, _ := Parse(s)
		if got := v2.MigratesAt(v, "locks.pkg.crossplane.io", "v1alpha1"); got != want {
			t.Errorf("%s migrates Locks: %v", s, got)
		}
	}
}

func TestNamingAndDefects(t *testing.T) {
	if mustParse(t, "v2.3.4").Naming != ByDigest || mustParse(t, "v2.4.2").Naming != ByDigestAndGeneration {
		t.Error("revision naming: v2.3 by the digest, v2.4 by digest and generation")
	}
	l := mustParse(t, "v2.4.0")
	for s, n := range map[string]int{"v2.4.0": 1, "v2.4.1": 1, "v2.4.2": 0} {
		v, _ := Parse(s)
		ds := l.DefectsAt(v)
		if len(ds) != n || n > 0 && (ds[0].When != PinnedServiceAccount || ds[0].Issue != "crossplane/crossplane#7838" || ds[0].FixedIn != "v2.4.2") {
			t.Errorf("%s defects: %+v", s, ds)
		}
	}
	gone := mustParse(t, "v2.4.2").GoneBy()
	if !slices.ContainsFunc(gone, func(r Removed) bool { return r.Kind == "ControllerConfig" && r.Ref == "controllerConfigRef" }) ||
		len(mustParse(t, "v1.20.0").GoneBy()) != 0 {
		t.Errorf("gone by v2.4: %+v", gone)
	}
}
