package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/activation"
)

// ErrNoMRDs is returned where the cluster serves no
// ManagedResourceDefinitions: its Crossplane predates them (v1, v2.0).
var ErrNoMRDs = errors.New("the cluster serves no ManagedResourceDefinitions: its Crossplane predates activation (v1.x, v2.0), and every kind a provider installs is active")

// ActivationInput reads what an activation plan and doctor's activation
// rules start from, a fixed number of requests plus one per active MRD:
// every MRD (one paged list) and how many objects each active one's kind
// has (a LIST of at most one object each), the kinds CRDs serve besides
// (one paged list), the Compositions (one) and the MRAPs (one).
func (c *Cluster) ActivationInput(ctx context.Context) (activation.Input, error) {
	var in activation.Input
	mrds, err := c.allDefinitions(ctx, mrdGVR)
	switch {
	case apierrors.IsNotFound(err):
		return in, ErrNoMRDs
	case err != nil:
		return in, fmt.Errorf("list ManagedResourceDefinitions: %w", err)
	}
	var active []*CRD
	var at []int
	isMRD := map[string]bool{}
	for _, m := range mrds {
		if m.MRD == nil {
			continue
		}
		d := activation.Definition{Name: m.Name, Kind: m.MRD.Kind + "." + m.MRD.Group, State: m.State, Provider: packageOwner(m.Owners)}
		isMRD[d.Kind] = true
		if d.Active() {
			active = append(active, m.MRD)
			at = append(at, len(in.Definitions))
		}
		in.Definitions = append(in.Definitions, d)
	}
	counts, err := c.CountAll(ctx, active)
	if err != nil {
		return in, err
	}
	for i, n := range counts {
		in.Definitions[at[i]].Objects = n.N
	}
	crds, err := c.AllCRDs(ctx)
	if err != nil {
		return in, err
	}
	in.Served = map[string]bool{}
	for _, d := range crds {
		if k := d.CRD.Kind + "." + d.CRD.Group; !isMRD[k] {
			in.Served[k] = true
		}
	}
	if in.Compositions, err = c.Compositions(ctx); err != nil {
		return in, err
	}
	in.Policies, err = c.MRAPs(ctx)
	return in, err
}

// packageOwner names the package (kind/name) among a definition's owners.
func packageOwner(refs []metav1.OwnerReference) string {
	for _, r := range refs {
		if strings.HasPrefix(r.APIVersion, "pkg.crossplane.io/") && !strings.HasSuffix(r.Kind, "Revision") {
			return strings.ToLower(r.Kind) + "/" + r.Name
		}
	}
	return ""
}
