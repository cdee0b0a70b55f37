package cluster

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// Labels and values of the pkg.crossplane.io generation.
const (
	// LabelPackage links a revision to its package (the group prefix is the
	// generation's group).
	labelPackageSuffix = "/package"
	// labelFamilySuffix names a provider's family (set by its package's
	// meta object; Crossplane's RBAC manager reads it).
	labelFamilySuffix = "/provider-family"
	lockName          = "lock"
)

// pkgDialect speaks pkg.crossplane.io (Crossplane v0.14 and later) and the
// IBM distribution's pkg.ibm.crossplane.io, which is the same API under
// another group.
type pkgDialect struct {
	api ServedAPI
}

func newPkgDialect(api ServedAPI) *pkgDialect { return &pkgDialect{api: api} }

func (d *pkgDialect) API() ServedAPI { return d.api }

// Kinds lists the package kinds this cluster serves (Functions arrived in
// Crossplane v1.11).
func (d *pkgDialect) Kinds() []string {
	var out []string
	for _, k := range []string{"Provider", "Configuration", "Function"} {
		if _, ok := d.api.Resource(k); ok {
			out = append(out, k)
		}
	}
	return out
}

func (d *pkgDialect) Resource(kind string) (schema.GroupVersionResource, error) {
	gvr, ok := d.api.Resource(kind)
	if !ok {
		return gvr, fmt.Errorf("the cluster does not serve %s in %s", kind, d.api.Group)
	}
	return gvr, nil
}

func (d *pkgDialect) Namespaced(string) bool { return false }

func (d *pkgDialect) RevisionKind(kind string) string { return kind + "Revision" }

// RevisionList selects a package's revisions by the label the package
// manager puts on them.
func (d *pkgDialect) RevisionList(p *installed.Package) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: d.api.Group + labelPackageSuffix + "=" + p.Name}
}

func (d *pkgDialect) IsRevisionOf(p *installed.Package, rev *unstructured.Unstructured) bool {
	return rev.GetLabels()[d.api.Group+labelPackageSuffix] == p.Name
}

func (d *pkgDialect) Readiness(p *installed.Package) installed.Readiness {
	return installed.PackageReadiness(p)
}

// Build sets only what the user asked for: the API server defaults the
// rest, and some defaults differ from a zero value (revisionHistoryLimit: 0
// disables revision cleanup).
func (d *pkgDialect) Build(s installed.InstallSpec) (*unstructured.Unstructured, error) {
	gvr, err := d.Resource(s.Kind)
	if err != nil {
		return nil, err
	}
	if s.RuntimeConfig != nil && s.Kind == "Configuration" {
		return nil, fmt.Errorf("--runtime-config applies to providers and functions, not to configurations")
	}
	if s.Source != "" || s.CRD != "" || len(s.ServiceAccountAnnotations) > 0 {
		return nil, fmt.Errorf("--source, --crd and --service-account-annotation apply to Crossplane v0.x package installs, not to %s", d.api.Group)
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(s.Kind)
	u.SetName(s.Name)
	spec := map[string]any{"package": s.Package}
	setIf(spec, "revisionActivationPolicy", s.ActivationPolicy)
	setIf(spec, "packagePullPolicy", s.PullPolicy)
	setIf(spec, "ignoreCrossplaneConstraints", s.IgnoreCrossplaneConstraints)
	setIf(spec, "skipDependencyResolution", s.SkipDependencyResolution)
	if s.HistoryLimit != nil {
		spec["revisionHistoryLimit"] = *s.HistoryLimit
	}
	if s.RuntimeConfig != nil {
		spec["runtimeConfigRef"] = map[string]any{"name": *s.RuntimeConfig}
	}
	if len(s.PullSecrets) > 0 {
		var refs []any
		for _, n := range s.PullSecrets {
			refs = append(refs, map[string]any{"name": n})
		}
		spec["packagePullSecrets"] = refs
	}
	setMap(spec, "commonLabels", s.CommonLabels)
	setMap(spec, "commonAnnotations", s.CommonAnnotations)
	u.Object["spec"] = spec
	return u, nil
}

func setIf[T any](m map[string]any, key string, v *T) {
	if v != nil {
		m[key] = *v
	}
}

func setMap(m map[string]any, key string, v map[string]string) {
	if len(v) == 0 {
		return
	}
	out := map[string]any{}
	for k, val := range v {
		out[k] = val
	}
	m[key] = out
}

func (d *pkgDialect) Decode(u *unstructured.Unstructured) *installed.Package {
	p := &installed.Package{
		Kind: u.GetKind(), Name: u.GetName(), Generation: u.GetGeneration(),
		Created: u.GetCreationTimestamp().Time, Conditions: installed.ReadConditions(u), Object: u,
	}
	p.Source, _, _ = unstructured.NestedString(u.Object, "spec", "package")
	p.Version = cmp.Or(reference.Tag(p.Source), reference.Version(p.Source))
	p.Digest = reference.Digest(p.Source)
	p.ActivationPolicy, _, _ = unstructured.NestedString(u.Object, "spec", "revisionActivationPolicy")
	p.RuntimeConfig, _, _ = unstructured.NestedString(u.Object, "spec", "runtimeConfigRef", "name")
	if limit, found, _ := unstructured.NestedInt64(u.Object, "spec", "revisionHistoryLimit"); found {
		p.HistoryLimit = &limit
	}
	p.CurrentRevision, _, _ = unstructured.NestedString(u.Object, "status", "currentRevision")
	p.CurrentIdentifier, _, _ = unstructured.NestedString(u.Object, "status", "currentIdentifier")
	p.ResolvedPackage, _, _ = unstructured.NestedString(u.Object, "status", "resolvedPackage")
	refs, _, _ := unstructured.NestedSlice(u.Object, "status", "appliedImageConfigRefs")
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			a := imageconfig.Applied{}
			a.Name, _ = m["name"].(string)
			a.Reason, _ = m["reason"].(string)
			p.AppliedImageConfigs = append(p.AppliedImageConfigs, a)
		}
	}
	return p
}

func (d *pkgDialect) DecodeRevision(u *unstructured.Unstructured) *installed.Revision {
	r := &installed.Revision{Kind: u.GetKind(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time, Conditions: installed.ReadConditions(u), Object: u}
	r.Package = u.GetLabels()[d.api.Group+labelPackageSuffix]
	r.Family = u.GetLabels()[d.api.Group+labelFamilySuffix]
	r.Image, _, _ = unstructured.NestedString(u.Object, "spec", "image")
	r.Revision, _, _ = unstructured.NestedInt64(u.Object, "spec", "revision")
	r.DesiredState, _, _ = unstructured.NestedString(u.Object, "spec", "desiredState")
	refs, _, _ := unstructured.NestedSlice(u.Object, "status", "objectRefs")
	for _, ref := range refs {
		m, _ := ref.(map[string]any)
		o := installed.ObjectRef{}
		o.APIVersion, _ = m["apiVersion"].(string)
		o.Kind, _ = m["kind"].(string)
		o.Name, _ = m["name"].(string)
		r.Objects = append(r.Objects, o)
	}
	return r
}

func (d *pkgDialect) SetPackage(u *unstructured.Unstructured, ref string) error {
	return unstructured.SetNestedField(u.Object, ref, "spec", "package")
}

func (d *pkgDialect) LockResource() (schema.GroupVersionResource, string, bool) {
	gvr, ok := d.api.Resource("Lock")
	return gvr, lockName, ok
}

// DecodeLock decodes the Lock's packages. Crossplane v1 names dependencies'
// kinds in "type" (Provider, Configuration, Function); v2 adds apiVersion and
// kind: both are kept.
func (d *pkgDialect) DecodeLock(u *unstructured.Unstructured) []installed.LockPackage {
	raw, _, _ := unstructured.NestedSlice(u.Object, "packages")
	var out []installed.LockPackage
	for _, r := range raw {
		m, _ := r.(map[string]any)
		lp := installed.LockPackage{}
		lp.Name, _ = m["name"].(string)
		lp.Type, _ = m["type"].(string)
		lp.Kind, _ = m["kind"].(string)
		lp.Source, _ = m["source"].(string)
		lp.Version, _ = m["version"].(string)
		deps, _ := m["dependencies"].([]any)
		for _, dep := range deps {
			dm, _ := dep.(map[string]any)
			ld := installed.LockDependency{}
			ld.Package, _ = dm["package"].(string)
			ld.Constraints, _ = dm["constraints"].(string)
			ld.Type, _ = dm["type"].(string)
			ld.Kind, _ = dm["kind"].(string)
			lp.Dependencies = append(lp.Dependencies, ld)
		}
		out = append(out, lp)
	}
	slices.SortFunc(out, func(a, b installed.LockPackage) int { return strings.Compare(a.Source, b.Source) })
	return out
}
