package cluster

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// CurrentRevisions reads the current revision of each package, by package:
// one list of every revision of each kind the packages have, rather than
// one per package. A package whose revision is not found has none.
func (c *Cluster) CurrentRevisions(ctx context.Context, pkgs []*installed.Package) (map[*installed.Package]*installed.Revision, error) {
	byName := map[string]map[string]*installed.Revision{} // revision kind → name → revision
	out := map[*installed.Package]*installed.Revision{}
	for _, p := range pkgs {
		kind := c.dialect.RevisionKind(p.Kind)
		if kind == "" || p.CurrentRevision == "" {
			continue
		}
		if _, done := byName[kind]; !done {
			revs, err := c.listRevisions(ctx, kind)
			if err != nil {
				return nil, err
			}
			byName[kind] = revs
		}
		if r := byName[kind][p.CurrentRevision]; r != nil {
			out[p] = r
		}
	}
	return out, nil
}

func (c *Cluster) listRevisions(ctx context.Context, kind string) (map[string]*installed.Revision, error) {
	items, err := c.listObjects(ctx, kind, "")
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", strings.ToLower(kind)+"s", err)
	}
	out := make(map[string]*installed.Revision, len(items))
	for i := range items {
		r := c.dialect.DecodeRevision(&items[i])
		out[r.Name] = r
	}
	return out, nil
}

// AllRevisions lists every revision of the package kind's revision kind
// with one request, by package and newest first, each naming its package
// (Revision.Package):
// what reads the whole package manager's state at once (doctor) needs, where
// Revisions would ask once per package.
func (c *Cluster) AllRevisions(ctx context.Context, packageKind string) ([]*installed.Revision, error) {
	kind := c.dialect.RevisionKind(packageKind)
	if kind == "" {
		return nil, nil
	}
	byName, err := c.listRevisions(ctx, kind)
	if err != nil {
		return nil, err
	}
	out := make([]*installed.Revision, 0, len(byName))
	for _, r := range byName {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *installed.Revision) int {
		return cmp.Or(strings.Compare(a.Package, b.Package), cmp.Compare(b.Revision, a.Revision), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}
