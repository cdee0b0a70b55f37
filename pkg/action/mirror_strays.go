package action

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/resolve"
)

// MirrorStray is an installed package that the mirror's ImageConfigs,
// applied beside the cluster's own, would send to the mirror although the
// mirror does not hold it: its next revision, upgrade or cache eviction
// would fail to pull.
type MirrorStray struct {
	// Package is the Lock's entry's name, Ref the reference it runs.
	Package, Ref string
	// ImageConfig is the one that would send it (or the listing of its
	// repository's versions) to the mirror, Resolved where.
	ImageConfig, Resolved string
}

// Strays are the installed packages (the cluster's Lock) whose
// references, as written, the plan's ImageConfigs would send to the
// mirror without the plan copying their repository: a repository whose
// name begins with a mirrored one's, or one an ImageConfig the cluster
// already has (an older, broader mirror's) sends to the same prefix. Only
// when the command reads through the cluster; none for a layout.
func (m *Mirror) Strays(ctx context.Context, plan *MirrorPlan) ([]MirrorStray, error) {
	if m.ToLayout != "" || !m.FromCluster && !m.ThroughCluster {
		return nil, nil
	}
	reg, err := m.registry(ctx)
	if err != nil {
		return nil, err
	}
	c, err := m.cfg.connect()
	if err != nil {
		return nil, err
	}
	lock, err := c.Lock(ctx)
	if err != nil {
		return nil, err
	}
	configs := withMirrorConfigs(reg.Configs, MirrorConfigs(plan.Packages, m.To, m.PullSecret))
	mirrored := map[string]bool{}
	for _, p := range plan.Packages {
		mirrored[reference.Repository(p.Package)] = true
	}
	to := strings.TrimSuffix(m.To, "/") + "/"
	var out []MirrorStray
	for _, lp := range lock {
		if mirrored[reference.Repository(lp.Source)] {
			continue
		}
		// The reference it pulls, then the repository whose versions the
		// resolver lists when it is a dependency.
		ref := resolve.Ref(lp.Source, lp.Version)
		for _, read := range []string{ref, lp.Source} {
			res, err := imageconfig.Resolve(configs, read)
			if err == nil && res.Rewritten() != "" && strings.HasPrefix(res.Resolved, to) {
				out = append(out, MirrorStray{Package: lp.Name, Ref: ref, ImageConfig: res.Rewritten(), Resolved: res.Resolved})
				break
			}
		}
	}
	return out, nil
}

// withMirrorConfigs are the cluster's ImageConfigs once the mirror's are
// applied: one of the same name is replaced, and the API server lists
// them by name.
func withMirrorConfigs(have, mirror []imageconfig.Config) []imageconfig.Config {
	out := slices.DeleteFunc(slices.Clone(have), func(c imageconfig.Config) bool {
		return slices.ContainsFunc(mirror, func(n imageconfig.Config) bool { return n.Name == c.Name })
	})
	out = append(out, mirror...)
	slices.SortStableFunc(out, func(a, b imageconfig.Config) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
