package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/activation"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/composition"
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
func ActivationFinding(target string, meta *xpkg.Meta, brings []string, policies []installed.MRAP) (f *findings.Finding, inactive []string) {
	if meta == nil || meta.Kind != "Provider" {
		return nil, nil
	}
	mrds := activation.Managed(brings)
	if len(mrds) == 0 {
		return nil, nil
	}
	f = &findings.Finding{Rule: findings.RuleActivation, Severity: findings.Info, Object: target, Count: findings.Count(int64(len(mrds)))}
	caps, _, _ := unstructured.NestedStringSlice(meta.Content, "spec", "capabilities")
	if !activation.SafeStart(caps) {
		f.Message = fmt.Sprintf("%s brings %s, Active as it comes (it does not declare safe-start): %s", target, mrdsSaid(len(mrds)), crdsAppear(len(mrds)))
		return f, nil
	}
	var entries [][]string
	var names []string
	for _, p := range policies {
		entries = append(entries, p.Activate)
		names = append(names, p.Name)
	}
	on := activation.Activated(mrds, entries)
	inactive = slices.DeleteFunc(slices.Clone(mrds), func(n string) bool { return slices.Contains(on, n) })
	f.Message = fmt.Sprintf("%s brings %s, Inactive as it comes (it declares safe-start): ", target, mrdsSaid(len(mrds)))
	switch {
	case len(policies) == 0:
		f.Message += "no ManagedResourceActivationPolicy activates any, so no CRD appears until one names them (kubectl xpkg activation plan writes one)"
	case len(on) == len(mrds):
		f.Message += fmt.Sprintf("the policies here (%s) activate all %d: %s", namesSaid(names), len(on), crdsAppear(len(on)))
	default:
		stay := "stay"
		if len(mrds)-len(on) == 1 {
			stay = "stays"
		}
		f.Message += fmt.Sprintf("the policies here (%s) activate %d of them, so %s and %d %s unserved until a policy names them (kubectl xpkg activation plan)",
			namesSaid(names), len(on), crdsAppear(len(on)), len(mrds)-len(on), stay)
	}
	return f, inactive
}

// InactiveComposedFindings: a Composition composes a kind that target
// brings Inactive and no policy activates (inactive names their MRDs):
// its composite resources will not become ready. A warning, one per kind.
func InactiveComposedFindings(target string, inactive []string, comps []composition.Composition) []findings.Finding {
	by := map[string][]string{}
	var order []string
	for _, c := range comps {
		for _, gk := range c.Composes {
			name := activation.DefinitionOf(gk.String(), inactive)
			if name == "" {
				continue
			}
			if by[name] == nil {
				order = append(order, name)
			}
			if !slices.Contains(by[name], c.Where()) {
				by[name] = append(by[name], c.Where())
			}
		}
	}
	var out []findings.Finding
	for _, name := range order {
		out = append(out, findings.Finding{Rule: findings.RuleInactiveComposedKind, Severity: findings.Warning, Object: name,
			Message: fmt.Sprintf("%s composes the kind of %s, which %s brings Inactive and no ManagedResourceActivationPolicy activates: its composite resources will not become ready; add %q to a policy's spec.activate (kubectl xpkg activation plan writes one)",
				namesSaid(by[name]), name, target, name)})
	}
	return out
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

// crdsAppear says that n CRDs appear.
func crdsAppear(n int) string {
	if n == 1 {
		return "1 CRD appears"
	}
	return fmt.Sprintf("%d CRDs appear", n)
}

// ComposedFindings is plan -f's check of the Compositions it reads (in's
// Compositions) against the cluster's MRDs and CRDs (in's Definitions and
// Served) and the policies there and in the manifests (in's Policies): a
// kind one composes whose MRD is Inactive and that no policy activates,
// or that nothing defines, is a warning (inactive-composed-kind): once
// applied, its composite resources would not become ready.
func ComposedFindings(in activation.Input) []findings.Finding {
	var out []findings.Finding
	for _, u := range activation.UnmadeKinds(in) {
		if u.MRD != "" && slices.ContainsFunc(in.Policies, func(p installed.MRAP) bool {
			return slices.ContainsFunc(p.Activate, func(e string) bool { return activation.Matches(e, u.MRD) })
		}) {
			continue // a policy activates it
		}
		who := "Composition " + namesSaid(u.Compositions)
		f := findings.Finding{Rule: findings.RuleInactiveComposedKind, Severity: findings.Warning, Object: u.Kind, Count: findings.Count(int64(len(u.Compositions)))}
		if u.MRD == "" {
			f.Message = fmt.Sprintf("%s composes %s, which no ManagedResourceDefinition nor CRD in the cluster defines: install the provider that serves it, or its composite resources will not become ready", who, u.Kind)
		} else {
			f.Object = u.MRD
			f.Message = fmt.Sprintf("%s composes %s, whose ManagedResourceDefinition %s is Inactive and which no ManagedResourceActivationPolicy in the cluster or the manifests activates: its composite resources will not become ready; add %q to a policy's spec.activate (kubectl xpkg activation plan -f writes one)", who, u.Kind, u.MRD, u.MRD)
		}
		out = append(out, f)
	}
	return out
}
