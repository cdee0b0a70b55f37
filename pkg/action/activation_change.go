package action

import (
	"context"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// planActivation adds what a provider's install or upgrade does to the
// activation of its kinds (diagnose.ChangeActivation).
func planActivation(ctx context.Context, c *cluster.Cluster, p *Plan, meta *xpkg.Meta, brings []string, target string) error {
	fs, err := diagnose.ChangeActivation(ctx, c, meta, brings, target)
	p.add(fs...)
	return err
}
