package diagnose

import (
	"context"
	"slices"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/activation"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// ChangeActivation is what a provider's install or upgrade does to the
// activation of its kinds (ActivationFinding), where the cluster serves
// MRDs: brings are the definitions the target makes that the cluster
// has not (an MRD there already, inactive and so without a CRD, is not
// brought: one list of MRDs). When some come Inactive and no policy
// activates them, the Compositions are read (one list): one that
// composes such a kind is a warning (InactiveComposedFindings).
func ChangeActivation(ctx context.Context, c *cluster.Cluster, meta *xpkg.Meta, brings []string, target string) ([]findings.Finding, error) {
	if meta == nil || meta.Kind != "Provider" || len(brings) == 0 {
		return nil, nil
	}
	policies, served, err := c.ActivationPolicies(ctx)
	if err != nil || !served {
		return nil, err
	}
	there, err := c.MRDs(ctx, brings)
	if err != nil {
		return nil, err
	}
	brings = slices.DeleteFunc(slices.Clone(brings), func(n string) bool {
		return slices.ContainsFunc(there, func(m installed.MRD) bool { return m.Name == n })
	})
	f, inactive := ActivationFinding(target, meta, brings, policies)
	var out []findings.Finding
	if f != nil {
		out = append(out, *f)
	}
	if len(inactive) == 0 {
		return out, nil
	}
	comps, err := c.Compositions(ctx)
	if err != nil {
		return nil, err
	}
	return append(out, InactiveComposedFindings(target, inactive, comps)...), nil
}

// ManifestsActivation is plan -f's check of the manifests' Compositions
// (ComposedFindings) against the cluster's MRDs, CRDs and policies and the
// manifests' policies, where the cluster serves MRDs: one list of each.
// Kinds brought (the definitions the manifests' packages make) are left
// to those packages' plans.
func ManifestsActivation(ctx context.Context, c *cluster.Cluster, comps []composition.Composition, policies []installed.MRAP, brought []string) ([]findings.Finding, error) {
	if len(comps) == 0 {
		return nil, nil
	}
	there, served, err := c.ActivationPolicies(ctx)
	if err != nil || !served {
		return nil, err
	}
	mrds, err := c.AllMRDs(ctx)
	if err != nil {
		return nil, err
	}
	crds, err := c.AllCRDs(ctx)
	if err != nil {
		return nil, err
	}
	in := cluster.ActivationDefinitions(mrds, crds)
	in.Compositions, in.Policies = comps, append(there, policies...)
	var out []findings.Finding
	for _, f := range ComposedFindings(in) {
		if activation.DefinitionOf(f.Object, brought) == "" && !slices.Contains(brought, f.Object) {
			out = append(out, f)
		}
	}
	return out, nil
}
