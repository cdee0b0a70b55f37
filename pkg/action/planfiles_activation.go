package action

import (
	"context"
	"slices"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/activation"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
)

// checkCompositions checks the kinds the manifests' Compositions compose
// against the cluster's MRDs, CRDs and policies and the manifests'
// policies (diagnose.ComposedFindings), where the cluster serves MRDs:
// one list of each. Kinds a package of the manifests brings are left to
// that package's plan (its activation finding).
func (pf *PlanFiles) checkCompositions(ctx context.Context, c *cluster.Cluster, fp *FilesPlan, ws []*wanted) error {
	if len(pf.Compositions) == 0 {
		return nil
	}
	policies, served, err := c.ActivationPolicies(ctx)
	if err != nil || !served {
		return err
	}
	mrds, err := c.AllMRDs(ctx)
	if err != nil {
		return err
	}
	crds, err := c.AllCRDs(ctx)
	if err != nil {
		return err
	}
	in := cluster.ActivationDefinitions(mrds, crds)
	in.Compositions, in.Policies = pf.Compositions, append(policies, pf.Policies...)
	brought := broughtNames(ws)
	for _, f := range diagnose.ComposedFindings(in) {
		if activation.DefinitionOf(f.Object, brought) == "" && !slices.Contains(brought, f.Object) {
			fp.Findings = append(fp.Findings, f)
		}
	}
	return nil
}

// broughtNames are the definitions the manifests' new and changed
// packages make.
func broughtNames(ws []*wanted) []string {
	var out []string
	for _, w := range ws {
		switch {
		case w.checked != nil:
			out = append(out, w.checked.Definitions...)
		case w.read != nil:
			out = append(out, w.read.res.New.Names()...)
		}
	}
	return out
}
