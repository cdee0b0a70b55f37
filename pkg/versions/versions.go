// Package versions orders a package's registry tags the way Crossplane's
// dependency resolution does (semantic versions, newest first) and finds
// the versions a user names (a tag, a range, the newest). How the package
// manager chooses a dependency's version is pkg/resolve's.
package versions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Tag is a registry tag, with its semantic version when it has one.
type Tag struct {
	Name    string          `json:"tag"`
	Version *semver.Version `json:"-"`
}

// Prerelease tells whether the tag is a pre-release (v1.2.0-rc.1).
func (t Tag) Prerelease() bool { return t.Version != nil && t.Version.Prerelease() != "" }

// Sort orders tags: semantic versions newest first, then the other tags by
// name.
func Sort(names []string) []Tag {
	tags := make([]Tag, 0, len(names))
	for _, n := range names {
		t := Tag{Name: n}
		if v, err := semver.NewVersion(n); err == nil {
			t.Version = v
		}
		tags = append(tags, t)
	}
	slices.SortStableFunc(tags, func(a, b Tag) int {
		switch {
		case a.Version != nil && b.Version != nil:
			if c := b.Version.Compare(a.Version); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		case a.Version != nil:
			return -1
		case b.Version != nil:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return tags
}

// Filter keeps the tags that satisfy constraint ("" keeps all semantic
// versions); pre-releases only when pre is set (or the constraint names
// one, as Masterminds/semver decides).
func Filter(tags []Tag, constraint string, pre bool) ([]Tag, error) {
	var c *semver.Constraints
	if constraint != "" {
		var err error
		if c, err = semver.NewConstraint(constraint); err != nil {
			return nil, fmt.Errorf("version constraint %q: %w", constraint, err)
		}
	}
	var out []Tag
	for _, t := range tags {
		if t.Version == nil || (t.Prerelease() && !pre) {
			continue
		}
		if c != nil && !c.Check(t.Version) {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// IsConstraint tells a semver range (^1.2, >=0.9 <1, ~1.4, 1.x) from a
// plain tag (v1.2.3, latest).
func IsConstraint(s string) bool {
	if strings.ContainsAny(s, "^~<>=*, |") {
		return true
	}
	return strings.Contains(s, ".x") || strings.HasSuffix(s, ".X")
}

// Newer is the newest tag above current that Filter keeps; with a current
// version that is no semantic version, the newest overall.
func Newer(tags []Tag, current string, pre bool) (Tag, bool) {
	kept, _ := Filter(tags, "", pre)
	cur, err := semver.NewVersion(current)
	for _, t := range kept {
		if err != nil || t.Version.GreaterThan(cur) {
			return t, true
		}
	}
	return Tag{}, false
}

// Hold is a constraint another package puts on this one: who (as
// kind/name) and the semver range (or digest).
type Hold struct {
	By         string `json:"by"`
	Constraint string `json:"constraint"`
}

// Latest is the newest stable semantic version among tags.
func Latest(tags []Tag) (Tag, bool) {
	kept, _ := Filter(tags, "", false)
	if len(kept) == 0 {
		return Tag{}, false
	}
	return kept[0], true
}

// Satisfies checks a version against a semver constraint the way the
// package manager does.
func Satisfies(constraint, version string) (bool, error) {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return false, err
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return false, err
	}
	return c.Check(v), nil
}
