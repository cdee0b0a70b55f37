package diagnose

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/activation"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/cluster"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/exit"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
)

// activationState is what doctor reads of Crossplane v2's activation of
// managed resource kinds, on a cluster that has MRDs: the MRDs and CRDs
// as ReadObjects listed them, the Compositions (the list deletions share),
// the MRAPs (one list), and how many objects each active MRD's kind has
// that no Composition composes (a LIST of at most one object each).
type activationState struct {
	// act is what the activation rules judge; actRead says the cluster
	// has MRDs, without which (Crossplane v1, v2.0) they judge nothing.
	act     activation.Input
	actRead bool
	// crdsRead: the CRDs were read, without which no kind is judged
	// undefined; counted: the objects were; policiesRead: the MRAPs.
	crdsRead, counted, policiesRead bool
}

// readActivation reads what the activation rules need beyond the lists of
// MRDs and CRDs ReadObjects made: nothing on a cluster without MRDs.
func (s *State) readActivation(ctx context.Context, c *cluster.Cluster, mrds, crds []cluster.DefinitionMeta, crdsRead bool) {
	if len(mrds) == 0 {
		return
	}
	s.act = cluster.ActivationDefinitions(mrds, crds)
	s.actRead, s.crdsRead = true, crdsRead
	s.readCompositions(ctx, c)
	if s.compositionsRead {
		s.act.Compositions = s.compositions
		composed := activation.Composed(s.compositions)
		err := c.CountActive(ctx, &s.act, mrds, func(d activation.Definition) bool { return !composed[d.Kind] })
		if err != nil {
			s.unread = append(s.unread, exit.Message(err))
		}
		s.counted = err == nil
	}
	policies, err := c.MRAPs(ctx)
	if err != nil {
		s.unread = append(s.unread, exit.Message(err))
		return
	}
	s.act.Policies, s.policiesRead = policies, true
}

// inactiveComposed: a Composition composes a kind whose MRD is Inactive,
// or that nothing defines: the API server refuses its composed resources,
// so its composite resources never become ready.
func (s *State) inactiveComposed() []findings.Finding {
	if !s.actRead || !s.compositionsRead {
		return nil
	}
	var out []findings.Finding
	for _, u := range activation.UnmadeKinds(s.act) {
		if (u.MRD == "" && !s.crdsRead) || (u.MRD != "" && s.definition(cluster.ResourceCRDs, u.MRD) != nil) {
			continue // the CRDs are unknown, or this one exists however
		}
		who := "Composition " + u.Compositions[0] + " composes"
		if len(u.Compositions) > 1 {
			who = fmt.Sprintf("%d Compositions (%s) compose", len(u.Compositions), ShortList(u.Compositions))
		}
		f := findings.Finding{Rule: findings.RuleInactiveComposedKind, Severity: findings.Blocking, Count: findings.Count(int64(len(u.Compositions)))}
		if u.MRD == "" {
			f.Object = u.Kind
			f.Message = fmt.Sprintf("%s %s, which no ManagedResourceDefinition nor CRD in the cluster defines: no installed provider defines it, so the API server refuses the resources composed of it and the composite resources never become ready. Install the provider that serves %s, or correct the apiVersion and kind the Composition composes",
				who, u.Kind, u.Kind)
		} else {
			f.Object = DefinitionObject(cluster.ResourceMRDs, u.MRD)
			f.Message = fmt.Sprintf("%s %s, whose ManagedResourceDefinition %s%s is Inactive: Crossplane has made no CRD for it, so the API server refuses the resources composed of it and the composite resources never become ready. %s",
				who, u.Kind, u.MRD, madeBy(u.Provider), s.activateHint(u.MRD))
		}
		out = append(out, f)
	}
	return out
}

func madeBy(provider string) string {
	if provider == "" {
		return ""
	}
	return " (made by " + provider + ")"
}

// activateHint: the entry that activates mrd, or, when a policy matches
// it already, that Crossplane has not acted on it.
func (s *State) activateHint(mrd string) string {
	for _, p := range s.act.Policies {
		for _, e := range p.Activate {
			if activation.Matches(e, mrd) {
				return fmt.Sprintf("ManagedResourceActivationPolicy %s activates it (%q), yet Crossplane has not: check that Crossplane runs (kubectl -n %s get deployment crossplane) and the policy's conditions (kubectl describe managedresourceactivationpolicy %s)", p.Name, e, s.namespace, p.Name)
			}
		}
	}
	return fmt.Sprintf("To activate it, add %q to the spec.activate of an MRAP (ManagedResourceActivationPolicy), or run kubectl xpkg activation plan for the smallest policy that activates what the cluster needs", mrd)
}

// activationUnused: active MRDs nothing uses, each a CRD the API server
// serves for nothing, which stays: Crossplane cannot deactivate an MRD.
func (s *State) activationUnused() []findings.Finding {
	if !s.actRead || !s.counted {
		return nil
	}
	unused := activation.Unused(s.act)
	if len(unused) == 0 {
		return nil
	}
	var names []string
	for _, d := range unused {
		names = append(names, d.Name)
	}
	crds := 0
	for i := range s.defs {
		if s.defs[i].Resource == cluster.ResourceCRDs {
			crds++
		}
	}
	n := len(unused)
	head := fmt.Sprintf("%d active ManagedResourceDefinitions have no object and no Composition composes their kind", n)
	if n == 1 {
		head = "1 active ManagedResourceDefinition has no object and no Composition composes its kind"
	}
	msg := fmt.Sprintf("%s: %s. Each costs a CRD, %d of the cluster's %d, that the API server serves, holds in memory and lists in discovery for nothing, and stays: Crossplane cannot deactivate an MRD yet (crossplane#7205).",
		head, ShortList(names), n, max(crds, n))
	var by []string
	for _, p := range s.act.Policies {
		m := 0
		for _, d := range unused {
			if slices.ContainsFunc(p.Activate, func(e string) bool { return activation.Matches(e, d.Name) }) {
				m++
			}
		}
		if m > 0 {
			by = append(by, fmt.Sprintf("%s (activate %s) activates %d of them", p.Name, strings.Join(p.Activate, ", "), m))
		}
	}
	if len(by) > 0 {
		msg += " ManagedResourceActivationPolicy " + strings.Join(by, "; ") + ": narrowed, it activates no more new kinds than needed."
	}
	msg += " A cluster that starts from kubectl xpkg activation plan's policy never makes them."
	unread := 0
	for _, c := range s.act.Compositions {
		if len(c.Unread) > 0 {
			unread++
		}
	}
	if unread > 0 {
		what := fmt.Sprintf("%d Compositions", unread)
		if unread == 1 {
			what = "1 Composition"
		}
		msg += fmt.Sprintf(" %s could not be read fully (kubectl xpkg activation plan names them) and may compose some of these.", what)
	}
	return []findings.Finding{{Rule: findings.RuleActivationUnused, Severity: findings.Info, Count: findings.Count(int64(n)), Message: msg}}
}

// activationUnmatched: an MRAP's activate entry that matches no MRD
// activates nothing, and nothing reports it.
func (s *State) activationUnmatched() []findings.Finding {
	if !s.actRead || !s.policiesRead {
		return nil
	}
	var out []findings.Finding
	for _, u := range activation.UnmatchedEntries(s.act) {
		msg := fmt.Sprintf("ManagedResourceActivationPolicy %s: its activate entry %q matches no ManagedResourceDefinition in the cluster, so it activates nothing (a typo is not reported)", u.Policy, u.Entry)
		if len(u.Near) > 0 {
			var q []string
			for _, n := range u.Near {
				q = append(q, fmt.Sprintf("%q", n))
			}
			msg += "; did you mean " + strings.Join(q, " or ") + "?"
		} else {
			msg += "; correct it, or install the provider whose kinds it names"
		}
		out = append(out, findings.Finding{Rule: findings.RuleActivationUnmatched, Severity: findings.Warning,
			Object: "managedresourceactivationpolicy/" + u.Policy, Message: msg})
	}
	return out
}
