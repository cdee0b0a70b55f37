package releases

import (
	"fmt"
	"slices"
	"sort"

	"github.com/Masterminds/semver/v3"
)

// index is l's place in Table.
func (l *Line) index() int {
	return slices.IndexFunc(Table, func(o Line) bool { return o.Minor == l.Minor })
}

// Defines maps each core CRD the line ships to the versions it defines,
// in the order they were added: Table folded up to the line.
func (l *Line) Defines() map[string][]string {
	out := map[string][]string{}
	for _, o := range Table[:l.index()+1] {
		for _, c := range o.Adds {
			out[c.Name] = append(out[c.Name], c.Versions...)
		}
		for _, c := range o.Drops {
			out[c.Name] = slices.DeleteFunc(out[c.Name], func(v string) bool { return slices.Contains(c.Versions, v) })
		}
		for _, g := range o.Gone {
			delete(out, g.CRD)
		}
	}
	return out
}

// GoneBy is every core CRD that an earlier line shipped and l does not.
func (l *Line) GoneBy() []Removed {
	var out []Removed
	for _, o := range Table[:l.index()+1] {
		out = append(out, o.Gone...)
	}
	return out
}

// CoreCRDs are the names of every core CRD a line of the table ships.
func CoreCRDs() []string {
	var out []string
	for _, l := range Table {
		for _, c := range l.Adds {
			if !slices.Contains(out, c.Name) {
				out = append(out, c.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// MigratesAt tells whether release v of the line migrates crd's objects
// stored at version at its start.
func (l *Line) MigratesAt(v *semver.Version, crd, version string) bool {
	for _, m := range l.Migrations {
		if m.CRD == crd && m.Version == version && v.Patch() >= m.From && (m.Until == 0 || v.Patch() < m.Until) {
			return true
		}
	}
	return false
}

// FirstMigrating is the first patch release of the line after v whose
// start migrates crd from version ("" when none does).
func (l *Line) FirstMigrating(v *semver.Version, crd, version string) string {
	for _, m := range l.Migrations {
		p := max(m.From, v.Patch()+1)
		if m.CRD == crd && m.Version == version && (m.Until == 0 || p < m.Until) {
			return fmt.Sprintf("%s.%d", l.Minor, p)
		}
	}
	return ""
}

// DefectsAt are the known defects of release v of the line.
func (l *Line) DefectsAt(v *semver.Version) []Defect {
	var out []Defect
	for _, d := range l.Defects {
		if slices.Contains(d.Patches, v.Patch()) {
			out = append(out, d)
		}
	}
	return out
}

// Route is the minor lines an upgrade from one version to another goes
// through, one minor at a time (v1.20 to v2.0 the one major step), up to
// and including the target's: for v2.1.3 to v2.4.2, v2.2, v2.3 and v2.4.
// ok is false when there is no such route (a downgrade, or a major step
// other than v1.20 to v2.0).
func Route(from, to *semver.Version) (steps []string, ok bool) {
	maj, min := from.Major(), from.Minor()
	for range 100 {
		if maj == to.Major() && min == to.Minor() {
			return steps, true
		}
		if maj > to.Major() || maj == to.Major() && min > to.Minor() {
			return nil, false
		}
		maj, min = next(maj, min)
		steps = append(steps, fmt.Sprintf("v%d.%d", maj, min))
	}
	return nil, false
}

// next is the minor line an upgrade goes to from maj.min: Crossplane
// supports upgrading one minor version at a time (crossplane#6864, and the
// upgrade guide it cites), and v2.0 is the step after v1.20 (there is no
// v1.21.0 tag in crossplane/crossplane, only v1.21.0-rc.0).
func next(maj, min uint64) (uint64, uint64) {
	if maj == 1 && min == 20 {
		return 2, 0
	}
	return maj, min + 1
}
