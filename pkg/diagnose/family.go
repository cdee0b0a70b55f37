package diagnose

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// A provider family (provider-upjet-aws's provider-family-aws and its
// ~170 members) is a set of providers whose packages carry the label
// pkg.crossplane.io/provider-family: NAME. The family provider (the
// package named NAME) installs the ProviderConfig CRDs; each member
// depends on it at ">= 0.0.0", so Crossplane never reports members and
// family provider at different versions. Crossplane's RBAC manager grants
// each member the CRDs of every other revision of its family, but only
// those of the same registry and org (the repository path's first part).

// familyMember is a provider of a family: the package and the revision
// that runs (nil when none is known).
type familyMember struct {
	pkg *installed.Package
	rev *installed.Revision
}

// image is what the member runs: its revision's image, else its
// package's reference.
func (m familyMember) image() string {
	if m.rev != nil && m.rev.Image != "" {
		return m.rev.Image
	}
	return m.pkg.Source
}

// version is the tag (or digest) it runs.
func (m familyMember) version() string { return reference.Version(m.image()) }

// providerFamily is one family as installed.
type providerFamily struct {
	name string
	// providers are the family providers (the package NAME), members the
	// rest.
	providers, members []familyMember
}

func (f *providerFamily) all() []familyMember { return append(slices.Clone(f.providers), f.members...) }

// FamilyFindings are the family-skew findings about pkgs, each provider
// judged by the revision running reports (nil when none runs).
func FamilyFindings(pkgs []*installed.Package, running func(*installed.Package) *installed.Revision) []findings.Finding {
	return familyFindings(providerFamilies(pkgs, running))
}

// providerFamilies groups the providers by the family label of the
// revision that runs; a family provider is a provider of the family
// whose repository is named after it.
func providerFamilies(pkgs []*installed.Package, running func(*installed.Package) *installed.Revision) []*providerFamily {
	var out []*providerFamily
	byName := map[string]*providerFamily{}
	for _, p := range pkgs {
		if p.Kind != "Provider" {
			continue
		}
		rev := running(p)
		if rev == nil || rev.Family == "" {
			continue
		}
		f := byName[rev.Family]
		if f == nil {
			f = &providerFamily{name: rev.Family}
			byName[rev.Family] = f
			out = append(out, f)
		}
		m := familyMember{pkg: p, rev: rev}
		if NamesFamily(reference.Repository(m.image()), f.name) {
			f.providers = append(f.providers, m)
		} else {
			f.members = append(f.members, m)
		}
	}
	return out
}

// NamesFamily: the repository is the family provider's, named after
// the family.
func NamesFamily(repo, family string) bool { return path.Base(repo) == family }

// FamilyOf is the family of the package whose running revision is rev
// ("" for none: no revision, not a provider, no label).
func FamilyOf(p *installed.Package, rev *installed.Revision) string {
	if p == nil || rev == nil || p.Kind != "Provider" {
		return ""
	}
	return rev.Family
}

// familyFindings: a family whose providers run more than one version, a
// member outside its family provider's registry and org, a family with
// two family providers (or none to hold the ProviderConfigs).
func familyFindings(fams []*providerFamily) []findings.Finding {
	var out []findings.Finding
	for _, f := range fams {
		out = append(out, f.skew()...)
		out = append(out, f.orgs()...)
		if len(f.providers) > 1 {
			out = append(out, findings.Finding{Rule: findings.RuleFamilySkew, Severity: findings.Warning, Object: "family " + f.name,
				Message: fmt.Sprintf("family %s has %d family providers (%s): each installs the family's ProviderConfig CRDs, and only one can control them; keep the one the members' dependency resolves to (the resolver's name for its repository) and uninstall the other", f.name, len(f.providers), describeMembers(f.providers))})
		}
	}
	return out
}

// skew: the members and the family provider run different versions.
func (f *providerFamily) skew() []findings.Finding {
	at := map[string][]familyMember{}
	var versions []string
	for _, m := range f.all() {
		v := m.version()
		if _, ok := at[v]; !ok {
			versions = append(versions, v)
		}
		at[v] = append(at[v], m)
	}
	if len(versions) < 2 {
		return nil
	}
	slices.Sort(versions)
	parts := make([]string, len(versions))
	for i, v := range versions {
		parts[i] = fmt.Sprintf("%s: %s", v, describeMembers(at[v]))
	}
	return []findings.Finding{{Rule: findings.RuleFamilySkew, Severity: findings.Warning, Object: "family " + f.name, Count: findings.Count(int64(len(versions))),
		Message: fmt.Sprintf("family %s runs %d versions (%s): a family is released and tested as one version, and its members depend on the family provider at >= 0.0.0, so Crossplane reports no skew; move them to one version", f.name, len(versions), strings.Join(parts, "; "))}}
}

// orgs: a member in another registry or org than the family provider
// gets none of the family's CRDs in its ClusterRole.
func (f *providerFamily) orgs() []findings.Finding {
	if len(f.providers) == 0 {
		return nil
	}
	fp := f.providers[0]
	var out []findings.Finding
	for _, m := range f.members {
		if !orgDiffers(m.image(), fp.image()) {
			continue
		}
		role := "its ClusterRole"
		if m.rev != nil {
			role = "its ClusterRole crossplane:provider:" + m.rev.Name + ":system"
		}
		out = append(out, findings.Finding{Rule: findings.RuleFamilySkew, Severity: findings.Warning, Object: m.pkg.KindName(),
			Message: fmt.Sprintf("%s (%s) is not in the registry and org of its family provider %s (%s): Crossplane's RBAC manager grants a member its family's types only within one registry and org, so %s does not grant %s: its controllers cannot read their ProviderConfigs; install the member and the family provider from one registry and org (an ImageConfig can rewrite both)",
				m.pkg.KindName(), org(m.image()), fp.pkg.KindName(), org(fp.image()), role, familyTypes(fp))})
	}
	return out
}

// familyTypes are the CRDs the family provider's revision installed,
// as the ClusterRole would name them.
func familyTypes(fp familyMember) string {
	var crds []string
	if fp.rev != nil {
		for _, o := range fp.rev.Objects {
			if o.Kind == "CustomResourceDefinition" || o.Kind == "ManagedResourceDefinition" {
				crds = append(crds, o.Name)
			}
		}
	}
	if len(crds) == 0 {
		return "the types " + fp.pkg.KindName() + " installs"
	}
	slices.Sort(crds)
	return strings.Join(crds, ", ")
}

// orgDiffers is Crossplane's test: another registry, or another first
// part of the repository path.
func orgDiffers(a, b string) bool { return org(a) != org(b) || org(a) == "" }

// org is a reference's registry and the first part of its repository
// ("" when it does not parse).
func org(ref string) string {
	r, err := name.ParseReference(ref, name.WithDefaultRegistry(""))
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(r.Context().RepositoryStr(), "/")
	return r.Context().RegistryStr() + "/" + first
}

func describeMembers(ms []familyMember) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.pkg.KindName()
	}
	return strings.Join(names, ", ")
}

// familySkew is doctor's family-skew rule, on the revisions that run.
func (s *State) familySkew() []findings.Finding {
	return FamilyFindings(s.pkgs, func(p *installed.Package) *installed.Revision { return s.revByName[p.CurrentRevision] })
}
