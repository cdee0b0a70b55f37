package teardown

import (
	"fmt"
	"slices"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// OthersKinds: each group whose kind another package's XRD defines
// (composite resources that compose the package's managed resources, and
// their claims) is, unless that package is removed too (removing names
// them, kind/name), a blocking finding: the teardown would delete another
// package's objects (--force deletes them).
func (p *Plan) OthersKinds(removing []string) []findings.Finding {
	var out []findings.Finding
	for _, g := range p.Groups {
		if g.DefinedBy == "" || slices.Contains(removing, g.DefinedBy) {
			continue
		}
		out = append(out, findings.Finding{Rule: findings.RuleLiveObjects, Severity: findings.Blocking, Object: g.Kind, Count: findings.Count(int64(len(g.Objects))),
			Message: fmt.Sprintf("the teardown of %s would delete %d %s of kind %s, which %s defines (they compose its managed resources, or claim what does): uninstall %s --with-resources=%s first, or --force to delete them too",
				p.Package, len(g.Objects), g.Stage, g.Kind, g.DefinedBy, g.DefinedBy, p.Mode)})
	}
	return out
}
