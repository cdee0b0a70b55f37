package cluster

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	rc, err := c.client(kind)
	if err != nil {
		return nil, err
	}
	l, err := rc.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", strings.ToLower(kind)+"s", err)
	}
	out := make(map[string]*installed.Revision, len(l.Items))
	for i := range l.Items {
		r := c.dialect.ReadRevision(&l.Items[i])
		out[r.Name] = r
	}
	return out, nil
}
