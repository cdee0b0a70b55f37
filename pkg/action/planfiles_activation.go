package action

import (
	"context"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
)

// checkCompositions checks the kinds the manifests' Compositions compose
// (diagnose.ManifestsActivation); those the manifests' new and changed
// packages bring are left to their plans.
func (pf *PlanFiles) checkCompositions(ctx context.Context, c *cluster.Cluster, fp *FilesPlan, ws []*wanted) error {
	var brought []string
	for _, w := range ws {
		switch {
		case w.checked != nil:
			brought = append(brought, w.checked.Definitions...)
		case w.read != nil:
			brought = append(brought, w.read.res.New.Names()...)
		}
	}
	fs, err := diagnose.ManifestsActivation(ctx, c, pf.Compositions, pf.Policies, brought)
	fp.Findings = append(fp.Findings, fs...)
	return err
}
