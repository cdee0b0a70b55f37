package versions

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/Masterminds/semver/v3"
)

var mentioned = regexp.MustCompile(`\d+(\.\d+)?(\.\d+)?`)

// Narrowed compares two version constraints (Crossplane's, or a
// dependency's) and returns versions the old one accepted that the new
// one refuses: the versions both constraints name, their neighbours, and
// the extra probes given. ok is false when either is not a semver
// constraint (a tag or a digest); the caller can then only say they
// differ.
func Narrowed(old, new string, probes ...string) (lost []string, ok bool) {
	oc, err1 := semver.NewConstraint(old)
	nc, err2 := semver.NewConstraint(new)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	for _, v := range candidates(old+" "+new, probes) {
		if oc.Check(v) && !nc.Check(v) {
			lost = append(lost, "v"+v.String())
		}
	}
	return lost, true
}

// candidates are the probe versions: each version mentioned, completed
// to major.minor.patch, with the versions just around it.
func candidates(text string, probes []string) []*semver.Version {
	seen := map[string]bool{}
	var out []*semver.Version
	addV := func(major, minor, patch int64) {
		if major < 0 || minor < 0 || patch < 0 {
			return
		}
		s := fmt.Sprintf("%d.%d.%d", major, minor, patch)
		if !seen[s] {
			seen[s] = true
			out = append(out, semver.MustParse(s))
		}
	}
	for _, m := range append(mentioned.FindAllString(text, -1), probes...) {
		v, err := semver.NewVersion(m)
		if err != nil {
			continue
		}
		M, n, p := int64(v.Major()), int64(v.Minor()), int64(v.Patch())
		for _, d := range [][3]int64{{0, 0, 0}, {0, 0, 1}, {0, 0, -1}, {0, 1, 0}, {0, -1, 0}, {1, 0, 0}, {-1, 0, 0}} {
			switch {
			case d[0] != 0:
				addV(M+d[0], 0, 0)
			case d[1] != 0:
				addV(M, n+d[1], 0)
			default:
				addV(M, n, p+d[2])
			}
		}
	}
	slices.SortFunc(out, func(a, b *semver.Version) int { return a.Compare(b) })
	return out
}

// CrossplaneReleases are probe versions for Crossplane constraints: the
// first patch of every minor release line up to the current major.
func CrossplaneReleases() []string {
	var out []string
	for minor := range 21 {
		out = append(out, "1."+strconv.Itoa(minor)+".0")
	}
	for minor := range 6 {
		out = append(out, "2."+strconv.Itoa(minor)+".0")
	}
	return out
}
