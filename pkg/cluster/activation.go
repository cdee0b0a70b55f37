package cluster

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// inactiveByHand is the ManualActivationError for p when its current
// conditions say its revision is inactive, and that revision (as revs
// holds it) waits for someone to activate it.
func inactiveByHand(p *Package, revs []*Revision) error {
	c := p.Condition(TypeInstalled)
	if p.ActivationPolicy != "Manual" || p.CurrentRevision == "" || !current(p, c) || c.Status != "False" || c.Reason != ReasonInactive {
		return nil
	}
	for _, r := range revs {
		if r.Name == p.CurrentRevision && !strings.EqualFold(r.DesiredState, "Active") {
			return &ManualActivationError{Package: p.KindName(), Revision: r.Name}
		}
	}
	return nil
}

// CurrentRevisions reads the current revision of each package, by package:
// one list of every revision of each kind the packages have, rather than
// one per package. A package whose revision is not found has none.
func (c *Cluster) CurrentRevisions(ctx context.Context, pkgs []*Package) (map[*Package]*Revision, error) {
	byName := map[string]map[string]*Revision{} // revision kind → name → revision
	out := map[*Package]*Revision{}
	for _, p := range pkgs {
		kind := c.dialect.RevisionKind(p.Kind)
		if kind == "" || p.CurrentRevision == "" {
			continue
		}
		if _, done := byName[kind]; !done {
			revs, err := c.listRevisions(ctx, kind)
			if err != nil {
				return nil, err
			}
			byName[kind] = revs
		}
		if r := byName[kind][p.CurrentRevision]; r != nil {
			out[p] = r
		}
	}
	return out, nil
}

func (c *Cluster) listRevisions(ctx context.Context, kind string) (map[string]*Revision, error) {
	rc, err := c.client(kind)
	if err != nil {
		return nil, err
	}
	l, err := rc.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", strings.ToLower(kind)+"s", err)
	}
	out := make(map[string]*Revision, len(l.Items))
	for i := range l.Items {
		r := c.dialect.ReadRevision(&l.Items[i])
		out[r.Name] = r
	}
	return out, nil
}
