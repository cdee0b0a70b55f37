package cluster

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
)

// DefinedCRDs names the CRDs the package's current revision defines: its
// CRDs, the CRDs of its MRDs (same name), and of its XRDs the composite's
// and the claim's.
func (c *Cluster) DefinedCRDs(ctx context.Context, p *installed.Package) ([]string, error) {
	revs, err := c.Revisions(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []string
	var xrds []installed.ObjectRef
	for _, r := range revs {
		if r.Name != p.CurrentRevision {
			continue
		}
		for _, ref := range r.Objects {
			switch ref.Kind {
			case "CustomResourceDefinition", "ManagedResourceDefinition":
				out = append(out, ref.Name)
			case "CompositeResourceDefinition":
				out = append(out, ref.Name)
				xrds = append(xrds, ref)
			}
		}
	}
	claims, err := c.claimCRDs(ctx, xrds)
	return append(out, claims...), err
}

// claimCRDs names the claim CRDs of XRDs that offer one: a few XRDs are
// read one GET each, at once; more with one list of XRDs. An XRD that
// cannot be read adds nothing (its claim CRD is then not counted).
func (c *Cluster) claimCRDs(ctx context.Context, xrds []installed.ObjectRef) ([]string, error) {
	claim := func(d *definitionDoc) string {
		if d.Spec.ClaimNames == nil || d.Spec.ClaimNames.Plural == "" || d.Spec.Group == "" {
			return ""
		}
		return d.Spec.ClaimNames.Plural + "." + d.Spec.Group
	}
	names := make([]string, len(xrds))
	if len(xrds) <= fewCRDs {
		_ = forEach(len(xrds), fewCRDs, func(i int) error {
			gvr, _ := definitionResource(xrds[i])
			u, err := c.dyn.Resource(gvr).Get(ctx, xrds[i].Name, metav1.GetOptions{})
			if err == nil {
				if d, err := toDefinition(u); err == nil {
					names[i] = claim(d)
				}
			}
			return nil
		})
		return slices.DeleteFunc(names, func(s string) bool { return s == "" }), nil
	}
	src, err := c.definitions()
	if err != nil {
		return nil, err
	}
	want := map[string]int{}
	for i, x := range xrds {
		want[x.APIVersion+"/"+x.Name] = i
	}
	for _, gv := range uniqueAPIVersions(xrds) {
		gvr, _ := definitionResource(installed.ObjectRef{Kind: "CompositeResourceDefinition", APIVersion: gv})
		_, err := src.list(ctx, gvr, func(d *definitionDoc) {
			if i, ok := want[gv+"/"+d.Metadata.Name]; ok {
				names[i] = claim(d)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("list CompositeResourceDefinitions: %w", err)
		}
	}
	return slices.DeleteFunc(names, func(s string) bool { return s == "" }), nil
}

func uniqueAPIVersions(refs []installed.ObjectRef) []string {
	var out []string
	for _, r := range refs {
		if !slices.Contains(out, r.APIVersion) {
			out = append(out, r.APIVersion)
		}
	}
	return out
}
