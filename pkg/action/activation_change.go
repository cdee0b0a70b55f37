package action

import (
	"context"
	"slices"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diff"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// planActivation adds what a provider's install or upgrade does to the
// activation of its kinds (diagnose.ActivationFinding), where the cluster
// serves MRDs: brings are the definitions the target makes that the
// cluster has not.
func planActivation(ctx context.Context, c *cluster.Cluster, p *Plan, meta *xpkg.Meta, brings []string, target string) error {
	if meta == nil || meta.Kind != "Provider" || len(brings) == 0 {
		return nil
	}
	policies, served, err := c.ActivationPolicies(ctx)
	if err != nil || !served {
		return err
	}
	// An MRD there is already (inactive: no CRD) is not brought.
	there, err := c.MRDs(ctx, brings)
	if err != nil {
		return err
	}
	brings = slices.DeleteFunc(slices.Clone(brings), func(n string) bool {
		return slices.ContainsFunc(there, func(m installed.MRD) bool { return m.Name == n })
	})
	if f := diagnose.ActivationFinding(target, meta, brings, policies); f != nil {
		p.add(*f)
	}
	return nil
}

func (c *Change) planActivation(ctx context.Context, p *Plan, meta *xpkg.Meta, brings []string, target string) error {
	return planActivation(ctx, c.Cluster, p, meta, brings, target)
}

// newNames are the definitions to makes that from does not.
func newNames(from, to diff.Definitions) []string {
	var out []string
	for _, n := range to.Names() {
		if _, ok := from[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}
