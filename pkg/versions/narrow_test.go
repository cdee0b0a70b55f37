package versions

import (
	"slices"
	"testing"
)

func TestNarrowed(t *testing.T) {
	cases := []struct {
		old, new string
		lost     []string
		ok       bool
	}{
		{">=v1.14.0", ">=v1.17.0", []string{"v1.14.0", "v1.14.1", "v1.15.0", "v1.16.0"}, true},
		{">=v1.17.0", ">=v1.14.0", nil, true},
		{"v1.19.0", "v1", nil, true},
		{"v0.4.0", "v0.4.2", []string{"v0.4.0"}, true},
		{">=v0.2.0", ">=v0.2.0 <v1", []string{"v1.0.0", "v1.0.1", "v1.1.0", "v2.0.0"}, true},
		{"latest", ">=v1", nil, false},
	}
	for _, c := range cases {
		lost, ok := Narrowed(c.old, c.new)
		if ok != c.ok || !slices.Equal(lost, c.lost) {
			t.Errorf("Narrowed(%q, %q) = %v, %v; want %v, %v", c.old, c.new, lost, ok, c.lost, c.ok)
		}
	}
	lost, _ := Narrowed(">=v1.14.0", ">=v2.0.0", CrossplaneReleases()...)
	if !slices.Contains(lost, "v1.20.0") || slices.Contains(lost, "v1.13.0") {
		t.Errorf("with Crossplane's releases as probes: %v", lost)
	}
}
