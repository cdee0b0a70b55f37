package versions

import (
	"slices"
	"testing"
)

func names(tags []Tag) []string {
	var out []string
	for _, t := range tags {
		out = append(out, t.Name)
	}
	return out
}

func TestSortFilterNewer(t *testing.T) {
	tags := Sort([]string{"v0.2.1", "latest", "v0.10.0", "v0.4.0", "v1.0.0-rc.1", "main", "v0.9.0", "0.3.0"})
	if got := names(tags); !slices.Equal(got, []string{"v1.0.0-rc.1", "v0.10.0", "v0.9.0", "v0.4.0", "0.3.0", "v0.2.1", "latest", "main"}) {
		t.Errorf("sorted: %v", got)
	}
	stable, _ := Filter(tags, "", false)
	if got := names(stable); !slices.Equal(got, []string{"v0.10.0", "v0.9.0", "v0.4.0", "0.3.0", "v0.2.1"}) {
		t.Errorf("stable: %v", got)
	}
	ranged, err := Filter(tags, ">=0.3 <0.10", false)
	if err != nil || !slices.Equal(names(ranged), []string{"v0.9.0", "v0.4.0", "0.3.0"}) {
		t.Errorf("range: %v %v", names(ranged), err)
	}
	if n, ok := Newer(tags, "v0.4.0", false); !ok || n.Name != "v0.10.0" {
		t.Errorf("newer than v0.4.0: %v", n)
	}
	if n, ok := Newer(tags, "v0.10.0", true); !ok || n.Name != "v1.0.0-rc.1" {
		t.Errorf("newer with --pre: %v", n)
	}
	if _, ok := Newer(tags, "v0.10.0", false); ok {
		t.Error("nothing stable is newer than v0.10.0")
	}
	if _, err := Filter(tags, ">>1", false); err == nil {
		t.Error("bad constraint accepted")
	}
	for s, want := range map[string]bool{"^1.2": true, ">=0.9 <1": true, "~1.4": true, "1.x": true, "v1.2.3": false, "latest": false} {
		if IsConstraint(s) != want {
			t.Errorf("IsConstraint(%q) = %v", s, !want)
		}
	}
}

func TestLatest(t *testing.T) {
	tags := Sort([]string{"v1.0.0", "v1.1.0", "v1.2.0-rc.1", "v1.5.0", "v2.0.0", "latest"})
	if l, ok := Latest(tags); !ok || l.Name != "v2.0.0" {
		t.Errorf("latest %v", l)
	}
}
