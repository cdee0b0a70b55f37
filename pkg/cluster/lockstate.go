package cluster

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// LockState reads the Lock's packages and, when it is not resolved, its
// Resolved condition.
func (c *Cluster) LockState(ctx context.Context) ([]installed.LockPackage, *installed.Condition, error) {
	gvr, name, ok := c.dialect.LockResource()
	if !ok {
		return nil, nil, nil
	}
	if c.shared != nil {
		u := c.shared.cachedResource(gvr, name)
		if u == nil {
			return nil, nil, nil
		}
		r := c.shared.memo(u, func() any { return lockRead{c.dialect.DecodeLock(u), installed.LockUnresolved(u)} }).(lockRead)
		return slices.Clone(r.lock), r.unresolved, nil
	}
	u, err := c.getObject(ctx, gvr, name)
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read the Lock: %w", err)
	}
	return c.dialect.DecodeLock(u), installed.LockUnresolved(u), nil
}

// lockRead is what LockState reads of one version of the Lock.
type lockRead struct {
	lock       []installed.LockPackage
	unresolved *installed.Condition
}
