package versions

import (
	"testing"

	"github.com/Masterminds/semver/v3"
)

// FuzzConstraints feeds tag lists and constraints to the parsers and
// checks their promises: no panic, Sort keeps every tag and puts versions
// newest first, Filter keeps only what the constraint admits, and every
// version Narrowed reports was admitted by the old constraint and is
// refused by the new.
func FuzzConstraints(f *testing.F) {
	for _, s := range [][3]string{
		{"v1.2.3", ">=v1.0.0", ">=v1.2.0 <2"},
		{"latest", "^1.2", "~1.4"},
		{"v0.4.0-rc.1", "v0.4.0", "v0.4.2"},
		{"1.x", ">= 1, < 3 || >= 4", "*"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, tag, old, new string) {
		tags := Sort([]string{tag, "v1.0.0", "v0.9.0", old})
		if len(tags) != 4 {
			t.Fatalf("Sort lost tags: %v", tags)
		}
		for i := 1; i < len(tags); i++ {
			a, b := tags[i-1].Version, tags[i].Version
			if a == nil && b != nil || a != nil && b != nil && a.LessThan(b) {
				t.Fatalf("Sort order: %v before %v", tags[i-1].Name, tags[i].Name)
			}
		}
		_ = IsConstraint(old)
		if kept, err := Filter(tags, old, true); err == nil {
			c, _ := semver.NewConstraint(old)
			for _, k := range kept {
				if c != nil && !c.Check(k.Version) {
					t.Fatalf("Filter(%q) kept %s", old, k.Name)
				}
			}
		}
		lost, ok := Narrowed(old, new)
		if !ok {
			return
		}
		oc, _ := semver.NewConstraint(old)
		nc, _ := semver.NewConstraint(new)
		for _, v := range lost {
			sv := semver.MustParse(v)
			if !oc.Check(sv) || nc.Check(sv) {
				t.Fatalf("Narrowed(%q, %q) reports %s", old, new, v)
			}
		}
	})
}
