package cluster

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/installed"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/reference"
)

// legacyGen is one of the Crossplane v0.x package designs: install requests
// that name a package (or a CRD it owns) and a source registry, answered by
// a record of the installed package.
type legacyGen struct {
	installKinds []string
	recordKind   string
	recordField  string // status field referencing the record
}

var legacyGens = map[string]legacyGen{
	// seed 000; CRDs in crossplane v0.11 (ClusterPackageInstall is served
	// namespaced there, despite its name: it grants cluster-wide rights).
	"packages.crossplane.io": {[]string{"ClusterPackageInstall", "PackageInstall"}, "Package", "packageRecord"},
	// the same design before the rename; crossplane v0.10.
	"stacks.crossplane.io": {[]string{"ClusterStackInstall", "StackInstall"}, "Stack", "stackRecord"},
	// seed 003: no released CRD.
	"extensions.crossplane.io": {[]string{"ExtensionRequest"}, "Extension", "extensionRecord"},
}

// legacyDialect speaks the v0.x generations.
type legacyDialect struct {
	api ServedAPI
	gen legacyGen
}

func newLegacyDialect(api ServedAPI) *legacyDialect {
	return &legacyDialect{api: api, gen: legacyGens[api.Group]}
}

func (d *legacyDialect) API() ServedAPI { return d.api }

func (d *legacyDialect) Kinds() []string {
	var out []string
	for _, k := range d.gen.installKinds {
		if _, ok := d.api.Resource(k); ok {
			out = append(out, k)
		}
	}
	return out
}

func (d *legacyDialect) Resource(kind string) (schema.GroupVersionResource, error) {
	gvr, ok := d.api.Resource(kind)
	if !ok {
		return gvr, fmt.Errorf("the cluster does not serve %s in %s", kind, d.api.Group)
	}
	return gvr, nil
}

func (d *legacyDialect) Namespaced(kind string) bool { return d.api.IsNamespaced(kind) }

func (d *legacyDialect) RevisionKind(string) string { return d.gen.recordKind }

// RevisionList finds the record, which the package manager names after the
// install request.
func (d *legacyDialect) RevisionList(p *installed.Package) metav1.ListOptions {
	return metav1.ListOptions{FieldSelector: "metadata.name=" + p.Name}
}

func (d *legacyDialect) IsRevisionOf(p *installed.Package, rev *unstructured.Unstructured) bool {
	return rev.GetName() == p.Name && rev.GetNamespace() == p.Namespace
}

// Build writes the install request: spec.source is the registry, taken from
// the reference when it names one and --source does not; spec.package the
// rest; or spec.crd to install the package owning a CRD.
func (d *legacyDialect) Build(s installed.InstallSpec) (*unstructured.Unstructured, error) {
	gvr, err := d.Resource(s.Kind)
	if err != nil {
		return nil, err
	}
	if err := d.checkUnsupported(s); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(s.Kind)
	u.SetName(s.Name)
	if d.Namespaced(s.Kind) {
		u.SetNamespace(s.Namespace)
	}
	spec := map[string]any{}
	source, pkg := s.Source, s.Typed
	if host, rest, ok := strings.Cut(pkg, "/"); ok && source == "" && strings.ContainsAny(host, ".:") {
		source, pkg = host, rest
	}
	setIf(spec, "source", nonEmpty(source))
	setIf(spec, "package", nonEmpty(pkg))
	setIf(spec, "crd", nonEmpty(s.CRD))
	setIf(spec, "imagePullPolicy", s.PullPolicy)
	if len(s.PullSecrets) > 0 {
		var refs []any
		for _, n := range s.PullSecrets {
			refs = append(refs, map[string]any{"name": n})
		}
		spec["imagePullSecrets"] = refs
	}
	if len(s.ServiceAccountAnnotations) > 0 {
		ann := map[string]any{}
		setMap(ann, "annotations", s.ServiceAccountAnnotations)
		spec["serviceAccount"] = ann
	}
	u.Object["spec"] = spec
	return u, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (d *legacyDialect) checkUnsupported(s installed.InstallSpec) error {
	if s.ActivationPolicy != nil || s.HistoryLimit != nil || s.RuntimeConfig != nil || s.IgnoreCrossplaneConstraints != nil ||
		s.SkipDependencyResolution != nil || len(s.CommonLabels) > 0 || len(s.CommonAnnotations) > 0 {
		return fmt.Errorf("revision, runtime, constraint, dependency and common label flags apply to pkg.crossplane.io; %s takes --source, --crd, --image-pull-policy, --package-pull-secrets and --service-account-annotation", d.api.Group)
	}
	if s.Typed == "" && s.CRD == "" {
		return fmt.Errorf("name a PACKAGE or a --crd")
	}
	return nil
}

func (d *legacyDialect) Decode(u *unstructured.Unstructured) *installed.Package {
	p := &installed.Package{Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace(), Generation: u.GetGeneration(),
		Created: u.GetCreationTimestamp().Time, Conditions: legacyConditions(u), Object: u}
	source, _, _ := unstructured.NestedString(u.Object, "spec", "source")
	pkg, _, _ := unstructured.NestedString(u.Object, "spec", "package")
	p.Source = pkg
	if source != "" && pkg != "" {
		p.Source = source + "/" + pkg
	}
	if pkg == "" {
		crd, _, _ := unstructured.NestedString(u.Object, "spec", "crd")
		p.Source = "crd:" + crd
	}
	p.Version = reference.Version(pkg)
	p.CurrentRevision, _, _ = unstructured.NestedString(u.Object, "status", d.gen.recordField, "name")
	return p
}

// legacyConditions reads status.conditions (the seeds' form) or
// status.conditionedStatus.conditions (what Crossplane v0.10 and v0.11
// serve).
func legacyConditions(u *unstructured.Unstructured) []installed.Condition {
	if cs := installed.ReadConditions(u); len(cs) > 0 {
		return cs
	}
	inner, ok, _ := unstructured.NestedMap(u.Object, "status", "conditionedStatus")
	if !ok {
		return nil
	}
	return installed.ReadConditions(&unstructured.Unstructured{Object: map[string]any{"status": inner}})
}

func (d *legacyDialect) DecodeRevision(u *unstructured.Unstructured) *installed.Revision {
	r := &installed.Revision{Kind: u.GetKind(), Name: u.GetName(), Created: u.GetCreationTimestamp().Time,
		Conditions: legacyConditions(u), Object: u, DesiredState: "Active", Revision: 1}
	// The records name the package's version, not its image.
	r.Version, _, _ = unstructured.NestedString(u.Object, "spec", "version")
	crds, _, _ := unstructured.NestedSlice(u.Object, "spec", "customresourcedefinitions")
	for _, c := range crds {
		m, _ := c.(map[string]any)
		kind, _ := m["kind"].(string)
		apiVersion, _ := m["apiVersion"].(string)
		r.Objects = append(r.Objects, installed.ObjectRef{Kind: kind, APIVersion: apiVersion, Name: kind})
	}
	return r
}

// SetPackage replaces the package part of the request; the source stays.
func (d *legacyDialect) SetPackage(u *unstructured.Unstructured, ref string) error {
	if source, _, _ := unstructured.NestedString(u.Object, "spec", "source"); source != "" {
		ref = strings.TrimPrefix(ref, source+"/")
	}
	return unstructured.SetNestedField(u.Object, ref, "spec", "package")
}

func (d *legacyDialect) LockResource() (schema.GroupVersionResource, string, bool) {
	return schema.GroupVersionResource{}, "", false
}

func (d *legacyDialect) DecodeLock(*unstructured.Unstructured) []installed.LockPackage { return nil }

// Readiness of a v0.x request is its Ready condition; these generations
// record no observedGeneration.
func (d *legacyDialect) Readiness(p *installed.Package) installed.Readiness {
	c := p.Condition("Ready")
	switch {
	case c == nil:
		return installed.Readiness{Pending: []string{"Ready not yet reported"}}
	case c.Status == "True":
		return installed.Readiness{Ready: true}
	case c.Status == "False" && installed.IsTerminal(c):
		return installed.Readiness{Terminal: c}
	}
	return installed.Readiness{Pending: []string{installed.DescribeCondition(c)}}
}
