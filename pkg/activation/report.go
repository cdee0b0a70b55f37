package activation

import (
	"fmt"
	"strings"
)

// PolicyAPIVersion and PolicyKind are the MRAP's.
const (
	PolicyAPIVersion = "apiextensions.crossplane.io/v1alpha1"
	PolicyKind       = "ManagedResourceActivationPolicy"
)

// Policy is the plan's MRAP, named name, as an object to print; nil when
// nothing is needed: Crossplane refuses a policy that activates nothing
// (spec.activate has one entry at least).
func (p *Plan) Policy(name string) map[string]any {
	if len(p.Activate) == 0 {
		return nil
	}
	activate := make([]any, len(p.Activate))
	for i, a := range p.Activate {
		activate[i] = a
	}
	return map[string]any{
		"apiVersion": PolicyAPIVersion,
		"kind":       PolicyKind,
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"activate": activate},
	}
}

// Lines say what the plan found and what the policy saves, for a reader:
// the figures, what needs each kind, what is missing or unread, and the
// policies there are.
func (p *Plan) Lines() []string {
	c := p.Counts
	out := []string{
		fmt.Sprintf("ManagedResourceDefinitions: %d, %d active today; %d needed by the Compositions and the objects there are.", c.MRDs, c.ActiveNow, c.Needed),
	}
	switch {
	case len(p.Activate) == 0:
		line := "Nothing needs a managed resource kind: there is no policy to print (Crossplane refuses one that activates nothing)."
		if c.ActiveNow > 0 {
			line += fmt.Sprintf(" The %d active here stay so: Crossplane cannot deactivate an MRD.", c.ActiveNow)
		}
		out = append(out, line)
	default:
		out = append(out, fmt.Sprintf("This policy activates the %d needed in %s; %d of them are inactive today (their CRDs appear once it is applied).", c.Needed, count(len(p.Activate), "entry", "entries"), c.Activates))
	}
	if c.Unneeded > 0 && len(p.Activate) > 0 {
		line := fmt.Sprintf("It leaves out %s: a cluster that starts from it never makes their %s.", count(c.Unneeded, "MRD", "MRDs"), count(c.Unneeded, "CRD", "CRDs"))
		if c.ActiveUnneeded > 0 {
			line += fmt.Sprintf(" Here %d of them are active already and stay so: Crossplane cannot deactivate an MRD.", c.ActiveUnneeded)
		}
		out = append(out, line)
	}
	for _, e := range p.Existing {
		line := fmt.Sprintf("Policy %s (activate %s) activates %s", e.Name, strings.Join(e.Activate, ", "), count(e.Matches, "MRD", "MRDs"))
		if e.Beyond > 0 {
			line += fmt.Sprintf(", %d of them needed by nothing: once this policy is applied, delete it, or it activates every new kind it matches", e.Beyond)
		}
		out = append(out, line+".")
		for _, u := range e.Unmatched {
			out = append(out, fmt.Sprintf("Policy %s: %q matches no ManagedResourceDefinition: a typo activates nothing.", e.Name, u))
		}
	}
	if len(p.Needs) > 0 {
		out = append(out, "Needed:")
		for _, n := range p.Needs {
			out = append(out, fmt.Sprintf("  %s (%s%s): %s", n.MRD, n.State, provider(n.Provider), strings.Join(n.By, ", ")))
		}
	}
	if len(p.Missing) > 0 {
		out = append(out, "Composed, but no MRD or CRD defines them (install the provider that serves them):")
		for _, n := range p.Missing {
			out = append(out, fmt.Sprintf("  %s: %s", n.Kind, strings.Join(n.By, ", ")))
		}
	}
	if len(p.Unread) > 0 {
		out = append(out, "Not read fully (the policy may miss kinds they compose; add them by hand):")
		for _, u := range p.Unread {
			out = append(out, "  "+u)
		}
	}
	return out
}

func provider(p string) string {
	if p == "" {
		return ""
	}
	return ", " + p
}

// count is n and the noun for n of it: "1 entry", "3 entries".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
