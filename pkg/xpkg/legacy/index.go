package legacy

import (
	"path"
	"slices"
	"strings"
)

// scope is which CRDs a metadata file applies to: those in its directory or
// below it and, for a name prefixed with a kind (and a version), only the
// CRDs of that kind (serving that version). Kinds compare case-insensitively,
// as the design's example prefixes kind Mytype with "mytype".
type scope struct {
	dir     string
	kind    string
	version string
}

// newScope parses a "kind" or "kind.version" name prefix.
func newScope(dir, prefix string) (scope, bool) {
	sc := scope{dir: dir}
	if prefix == "" {
		return sc, true
	}
	parts := strings.Split(prefix, ".")
	if len(parts) > 2 || slices.Contains(parts, "") {
		return scope{}, false
	}
	sc.kind = parts[0]
	if len(parts) == 2 {
		sc.version = parts[1]
	}
	return sc, true
}

// specificity ranks names: kind.version (2) over kind (1) over none (0).
func (s scope) specificity() int {
	switch {
	case s.version != "":
		return 2
	case s.kind != "":
		return 1
	}
	return 0
}

// matches checks the kind and version part of the scope; the directory part
// is checked by walking a CRD's ancestors.
func (s scope) matches(c *crd) bool {
	if s.kind != "" && !strings.EqualFold(s.kind, c.kind) {
		return false
	}
	return s.version == "" || slices.Contains(c.versions, s.version)
}

// ancestors lists dir and every directory above it up to the root ("."),
// nearest first.
func ancestors(dir string) []string {
	dirs := []string{dir}
	for dir != "." {
		dir = path.Dir(dir)
		dirs = append(dirs, dir)
	}
	return dirs
}

// index holds the metadata files by directory.
type index struct {
	groups    map[string]*groupMeta
	resources map[string][]*resourceMeta
	icons     map[string][]*icon
	uis       map[string][]*uiSchema
	order     []*file        // every metadata file, in walk order
	inScope   map[*file]bool // files that apply to at least one CRD
}

// contents is what the files below the root hold.
type contents struct {
	crds  []*crd
	icons []*icon
	index *index
}

// readContents parses the CRDs and metadata files of the tree.
func readContents(files []*file, warn *warnings) (*contents, error) {
	x := &index{
		groups: map[string]*groupMeta{}, resources: map[string][]*resourceMeta{},
		icons: map[string][]*icon{}, uis: map[string][]*uiSchema{}, inScope: map[*file]bool{},
	}
	out := &contents{index: x}
	for _, f := range files {
		if err := out.add(f, warn); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// add parses one file into the contents.
func (c *contents) add(f *file, warn *warnings) error {
	x, dir := c.index, f.dir()
	switch f.kind {
	case kindCRD:
		crds, err := parseCRDFile(f, MaxCRDs-len(c.crds))
		if len(crds) == 0 && err == nil {
			warn.add(f.name, "holds no CustomResourceDefinition")
		}
		c.crds = append(c.crds, crds...)
		return err
	case kindGroup:
		g, err := parseGroup(f, warn)
		if g != nil {
			x.groups[dir] = g
			x.order = append(x.order, f)
		}
		return err
	case kindResource:
		r, err := parseResource(f, warn)
		if r != nil {
			x.addResource(dir, r, warn)
		}
		return err
	case kindIcon:
		if ic := newIcon(f, warn); ic != nil {
			x.icons[dir] = append(x.icons[dir], ic)
			c.icons = append(c.icons, ic)
			x.order = append(x.order, f)
		}
	case kindUISchema:
		ui, err := newUISchema(f, warn)
		if ui != nil {
			x.uis[dir] = append(x.uis[dir], ui)
			x.order = append(x.order, f)
		}
		return err
	}
	return nil
}

// groupFor is the nearest group.yaml at or above the CRD.
func (x *index) groupFor(c *crd) *groupMeta {
	for _, d := range ancestors(c.file.dir()) {
		if g := x.groups[d]; g != nil {
			return g
		}
	}
	return nil
}

// addResource indexes a *resource.yaml. Two in one directory with the same
// id are reported once, here; the first in walk (lexical) order is the one
// used.
func (x *index) addResource(dir string, r *resourceMeta, warn *warnings) {
	for _, other := range x.resources[dir] {
		if strings.EqualFold(other.ID, r.ID) {
			warn.add(r.f.name, "id %q is also the id of %s, which is used instead", r.ID, other.f.name)
			return
		}
	}
	x.resources[dir] = append(x.resources[dir], r)
	x.order = append(x.order, r.f)
}

// resourceFor is the nearest *resource.yaml whose id is the CRD's kind.
func (x *index) resourceFor(c *crd) *resourceMeta {
	for _, d := range ancestors(c.file.dir()) {
		for _, r := range x.resources[d] {
			if strings.EqualFold(r.ID, c.kind) {
				return r
			}
		}
	}
	return nil
}

// iconFor is the best applicable icon of the nearest directory that has one.
func (x *index) iconFor(c *crd) *icon {
	for _, d := range ancestors(c.file.dir()) {
		var best *icon
		for _, ic := range x.icons[d] {
			if ic.scope.matches(c) && (best == nil || ic.better(best)) {
				best = ic
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// uiSchemasFor is every applicable ui-schema, from the root down to the
// CRD's directory; within a directory, plain before kind before
// kind.version, then by file name.
func (x *index) uiSchemasFor(c *crd) []*uiSchema {
	var out []*uiSchema
	dirs := ancestors(c.file.dir())
	for i := len(dirs) - 1; i >= 0; i-- {
		var here []*uiSchema
		for _, ui := range x.uis[dirs[i]] {
			if ui.scope.matches(c) {
				here = append(here, ui)
			}
		}
		slices.SortStableFunc(here, func(a, b *uiSchema) int {
			if d := a.scope.specificity() - b.scope.specificity(); d != 0 {
				return d
			}
			return strings.Compare(a.f.rel, b.f.rel)
		})
		out = append(out, here...)
	}
	return out
}

// markInScope records the metadata files that apply to c, whether or not a
// nearer or preferred file won, so that only files that apply to no CRD at
// all are reported.
func (x *index) markInScope(c *crd) {
	for _, d := range ancestors(c.file.dir()) {
		if g := x.groups[d]; g != nil {
			x.inScope[g.f] = true
		}
		for _, r := range x.resources[d] {
			x.inScope[r.f] = x.inScope[r.f] || strings.EqualFold(r.ID, c.kind)
		}
		for _, ic := range x.icons[d] {
			x.inScope[ic.f] = x.inScope[ic.f] || ic.scope.matches(c)
		}
		for _, ui := range x.uis[d] {
			x.inScope[ui.f] = x.inScope[ui.f] || ui.scope.matches(c)
		}
	}
}

// warnUnused reports the metadata files that apply to no CRD, in walk order.
func (x *index) warnUnused(pkgIcon *icon, warn *warnings) {
	for _, f := range x.order {
		if !x.inScope[f] && (pkgIcon == nil || f != pkgIcon.f) {
			warn.add(f.name, "applies to no CustomResourceDefinition; ignored")
		}
	}
}
