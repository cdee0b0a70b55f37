package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/activation"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// ErrNoMRDs is returned where the cluster serves no
// ManagedResourceDefinitions: its Crossplane predates them (v1, v2.0).
var ErrNoMRDs = errors.New("the cluster serves no ManagedResourceDefinitions: its Crossplane predates activation (v1.x, v2.0), and every kind a provider installs is active")

// ActivationInput reads what an activation plan starts from, a fixed
// number of requests plus one per active MRD: every MRD (one paged list)
// and how many objects each active one's kind has (a LIST of at most one
// object each), the kinds CRDs serve besides (one paged list), the
// Compositions (one) and the MRAPs (one). Doctor reads the same with the
// lists it has made already (ActivationDefinitions, CountActive).
func (c *Cluster) ActivationInput(ctx context.Context) (activation.Input, error) {
	mrds, err := c.allDefinitions(ctx, mrdGVR)
	switch {
	case apierrors.IsNotFound(err):
		return activation.Input{}, ErrNoMRDs
	case err != nil:
		return activation.Input{}, fmt.Errorf("list ManagedResourceDefinitions: %w", err)
	}
	crds, err := c.AllCRDs(ctx)
	if err != nil {
		return activation.Input{}, err
	}
	in := ActivationDefinitions(mrds, crds)
	if err := c.CountActive(ctx, &in, mrds, nil); err != nil {
		return in, err
	}
	if in.Compositions, err = c.Compositions(ctx); err != nil {
		return in, err
	}
	in.Policies, err = c.MRAPs(ctx)
	return in, err
}

// ActivationDefinitions is an activation Input's Definitions (their
// objects not counted: CountActive) and Served, made from the MRDs and
// CRDs as AllMRDs and AllCRDs read them.
func ActivationDefinitions(mrds, crds []DefinitionMeta) activation.Input {
	var in activation.Input
	isMRD := map[string]bool{}
	for _, m := range mrds {
		if m.MRD == nil {
			continue
		}
		d := activation.Definition{Name: m.Name, Kind: m.MRD.Kind + "." + m.MRD.Group, State: m.State, Provider: packageOwner(m.Owners)}
		isMRD[d.Kind] = true
		in.Definitions = append(in.Definitions, d)
	}
	in.Served = map[string]bool{}
	for _, d := range crds {
		if d.CRD == nil {
			continue
		}
		if k := d.CRD.Kind + "." + d.CRD.Group; !isMRD[k] {
			in.Served[k] = true
		}
	}
	return in
}

// CountActive sets the Objects of in's active Definitions (all, or those
// count says), read with a LIST of at most one object each (CountAll);
// mrds are what in was made from. An MRD that names no plural has no
// objects to list.
func (c *Cluster) CountActive(ctx context.Context, in *activation.Input, mrds []DefinitionMeta, count func(activation.Definition) bool) error {
	byName := map[string]*CRD{}
	for _, m := range mrds {
		if m.MRD != nil && m.MRD.Plural != "" {
			byName[m.Name] = m.MRD
		}
	}
	var active []*CRD
	var at []int
	for i, d := range in.Definitions {
		if d.Active() && byName[d.Name] != nil && (count == nil || count(d)) {
			active = append(active, byName[d.Name])
			at = append(at, i)
		}
	}
	counts, err := c.CountAll(ctx, active)
	if err != nil {
		return err
	}
	for i, n := range counts {
		in.Definitions[at[i]].Objects = n.N
	}
	return nil
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

// ActivationPolicies reads the MRAPs, and whether the cluster serves them
// at all (its Crossplane makes MRDs of providers' CRDs: v2.1 and later).
func (c *Cluster) ActivationPolicies(ctx context.Context) ([]installed.MRAP, bool, error) {
	if _, err := c.dyn.Resource(mrapGVR).List(ctx, metav1.ListOptions{Limit: 1}); apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	ps, err := c.MRAPs(ctx)
	return ps, err == nil, err
}
