package diagnose

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/activation"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/xpkg"
)

// ActivationFinding says what installing or upgrading to a provider does
// to the activation of its kinds (Crossplane v2, whose policies are
// given): the MRDs it brings (brings: the names of the CRDs the cluster
// does not define yet), Inactive when it declares safe-start and Active
// otherwise, and how many of the inactive ones the policies there
// activate: the CRDs that appear. nil for a package that is no provider,
// or that brings no MRD.
func ActivationFinding(target string, meta *xpkg.Meta, brings []string, policies []installed.MRAP) *findings.Finding {
	if meta == nil || meta.Kind != "Provider" {
		return nil
	}
	mrds := activation.Managed(brings)
	if len(mrds) == 0 {
		return nil
	}
	f := &findings.Finding{Rule: findings.RuleActivation, Severity: findings.Info, Object: target, Count: findings.Count(int64(len(mrds)))}
	caps, _, _ := unstructured.NestedStringSlice(meta.Content, "spec", "capabilities")
	if !activation.SafeStart(caps) {
		f.Message = fmt.Sprintf("%s brings %s, Active as it comes (it does not declare safe-start): %s appear", target, mrdsSaid(len(mrds)), crdsSaid(len(mrds)))
		return f
	}
	var entries [][]string
	var names []string
	for _, p := range policies {
		entries = append(entries, p.Activate)
		names = append(names, p.Name)
	}
	on := activation.Activated(mrds, entries)
	f.Message = fmt.Sprintf("%s brings %s, Inactive as it comes (it declares safe-start): ", target, mrdsSaid(len(mrds)))
	switch {
	case len(policies) == 0:
		f.Message += "no ManagedResourceActivationPolicy activates any, so no CRD appears until one names them (kubectl xpkg activation plan writes one)"
	case len(on) == len(mrds):
		f.Message += fmt.Sprintf("the policies here (%s) activate all %d: %s appear", namesSaid(names), len(on), crdsSaid(len(on)))
	default:
		f.Message += fmt.Sprintf("the policies here (%s) activate %d of them, so %s appear and %d stay unserved until a policy names them (kubectl xpkg activation plan)",
			namesSaid(names), len(on), crdsSaid(len(on)), len(mrds)-len(on))
	}
	return f
}

func namesSaid(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

func mrdsSaid(n int) string {
	if n == 1 {
		return "1 ManagedResourceDefinition"
	}
	return fmt.Sprintf("%d ManagedResourceDefinitions", n)
}

func crdsSaid(n int) string {
	if n == 1 {
		return "1 CRD"
	}
	return fmt.Sprintf("%d CRDs", n)
}
