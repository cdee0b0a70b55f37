package installed

import (
	"fmt"
	"strings"
)

// Crossplane's words for revisions that wait: a package's Installed=False
// while its current revision is inactive, and, from Crossplane v2.4, a
// revision's RuntimeActive condition (False, AwaitingActivation, while a
// safe-start provider's runtime is scaled to zero until one of its managed
// resource definitions is active; the package then reports Healthy=True
// with that reason).
const (
	TypeRuntimeActive        = "RuntimeActive"
	ReasonInactive           = "InactivePackageRevision"
	ReasonAwaitingActivation = "AwaitingActivation"
)

// RuntimeState is what the revision's RuntimeActive condition says of its
// runtime: "Active", "AwaitingActivation", another reason when its status
// is not True, or "" when the revision has none (Crossplane before v2.4, or
// a package without a runtime).
func (r *Revision) RuntimeState() string {
	c := r.Condition(TypeRuntimeActive)
	switch {
	case c == nil:
		return ""
	case c.Status == "True":
		return "Active"
	case c.Reason != "":
		return c.Reason
	}
	return c.Status
}

// AwaitsActivation reports whether the package is healthy with its runtime
// scaled to zero until one of its managed resource definitions is active.
func (p *Package) AwaitsActivation() bool {
	c := p.Condition(TypeHealthy)
	return c != nil && c.Status == "True" && c.Reason == ReasonAwaitingActivation
}

// AwaitingActivationNote is the line a wait prints for such a package.
func AwaitingActivationNote(what string) string {
	return what + ": healthy; its runtime is scaled to zero until one of its managed resource definitions is active " +
		"(a ManagedResourceActivationPolicy activates them: kubectl get managedresourcedefinitions)"
}

// ManualActivationError ends a wait for a package under Manual activation
// whose current revision is inactive: nothing but its owner activates it,
// so the wait could only run out.
type ManualActivationError struct {
	Package, Revision string
}

func (e *ManualActivationError) Error() string {
	return fmt.Sprintf("%s activates revisions by hand (revisionActivationPolicy: Manual) and its revision %s is inactive: "+
		"nothing will activate it; kubectl xpkg upgrade %s --activate --wait activates it", e.Package, e.Revision, e.Package)
}

// InactiveByHand is the ManualActivationError for p when its current
// ReadConditions say its revision is inactive, and that revision (as revs
// holds it) waits for someone to activate it.
func InactiveByHand(p *Package, revs []*Revision) error {
	c := p.Condition(TypeInstalled)
	if p.ActivationPolicy != "Manual" || p.CurrentRevision == "" || !IsCurrent(p, c) || c.Status != "False" || c.Reason != ReasonInactive {
		return nil
	}
	for _, r := range revs {
		if r.Name == p.CurrentRevision && !strings.EqualFold(r.DesiredState, "Active") {
			return &ManualActivationError{Package: p.KindName(), Revision: r.Name}
		}
	}
	return nil
}
