// Package installed is what Crossplane's package manager records of the
// packages it installs, as plain values: a package, its revisions and their
// conditions, the Lock's entries and what they say about dependencies, how
// ready a package is, who installed it, and when a revision waits to be
// activated. It reads nothing from a cluster (pkg/cluster does, and hands
// these values over), so the use cases and the command layer can judge and
// print them without an API client.
package installed

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/imageconfig"
)

// Condition is one status condition of a package or revision.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	ObservedGeneration int64     `json:"observedGeneration,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime,omitzero"`
}

// Package is an installed package, whatever API generation holds it.
type Package struct {
	// Kind is the object's kind: Provider, Configuration, Function (or a
	// legacy generation's install kind).
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Source is the package's image reference (spec.package).
	Source string `json:"package"`
	// Version is the reference's tag, or its digest when it names no tag.
	Version string `json:"version"`
	// Digest is the digest that pins the reference (repository:tag@digest
	// or repository@digest), or "".
	Digest string `json:"digest,omitempty"`
	// ActivationPolicy and RuntimeConfig as set or defaulted.
	ActivationPolicy string `json:"revisionActivationPolicy,omitempty"`
	RuntimeConfig    string `json:"runtimeConfig,omitempty"`
	// CurrentRevision is the active revision's name; CurrentIdentifier the
	// package reference it was made from; ResolvedPackage the reference
	// after image configs rewrote it.
	CurrentRevision   string `json:"currentRevision,omitempty"`
	CurrentIdentifier string `json:"currentIdentifier,omitempty"`
	ResolvedPackage   string `json:"resolvedPackage,omitempty"`
	// AppliedImageConfigs are the ImageConfigs the package manager applied
	// to the package (status.appliedImageConfigRefs).
	AppliedImageConfigs []imageconfig.Applied `json:"appliedImageConfigRefs,omitempty"`
	Generation          int64                 `json:"generation"`
	Conditions          []Condition           `json:"conditions,omitempty"`
	Created             time.Time             `json:"created"`
	// HistoryLimit is spec.revisionHistoryLimit (nil when unset: the
	// package manager then collects no revisions; 0 keeps every one).
	HistoryLimit *int64 `json:"-"`

	Object *unstructured.Unstructured `json:"-"`
}

// KindName is how the verbs name a package: kind/name, the kind in lower
// case (provider/provider-nop), as kubectl names objects.
func (p *Package) KindName() string { return KindName(p.Kind, p.Name) }

// KindName names an object of kind as the verbs name packages: kind/name,
// the kind in lower case.
func KindName(kind, name string) string { return strings.ToLower(kind) + "/" + name }

// Condition returns the condition of type t, or nil.
func (p *Package) Condition(t string) *Condition { return FindCondition(p.Conditions, t) }

// Revision is one revision of a package.
type Revision struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Image string `json:"image"`
	// Package is the name of the package the revision belongs to (its
	// label), "" when the generation records none.
	Package string `json:"-"`
	// Family is the provider family its package declares (the label
	// pkg.crossplane.io/provider-family, copied from the package's meta
	// object), "" for none.
	Family string `json:"family,omitempty"`
	// Version is set instead of Image by Crossplane v0.x's records, which
	// name only the package's version.
	Version      string      `json:"version,omitempty"`
	Revision     int64       `json:"revision"`
	DesiredState string      `json:"desiredState"`
	Conditions   []Condition `json:"conditions,omitempty"`
	Objects      []ObjectRef `json:"objects,omitempty"`
	Created      time.Time   `json:"created"`
	// Deleting are the definitions it installed whose CRD is being deleted:
	// read from the cluster's CRDs (not the revision's record) by the
	// verbs that show state.
	Deleting []Deletion `json:"definitionsDeleting,omitempty"`

	Object *unstructured.Unstructured `json:"-"`
}

// Deletion is a CRD being deleted (metadata.deletionTimestamp set): the
// API server refuses every new object of its kind until every one is
// gone, whatever its conditions (and its MRD's) say.
type Deletion struct {
	CRD   string    `json:"crd"`
	Since time.Time `json:"since"`
}

// DeletionOf is the deletion of the CRD named, nil when it is not being
// deleted.
func (r *Revision) DeletionOf(crd string) *Deletion {
	for i := range r.Deleting {
		if r.Deleting[i].CRD == crd {
			return &r.Deleting[i]
		}
	}
	return nil
}

// Condition returns the condition of type t, or nil.
func (r *Revision) Condition(t string) *Condition { return FindCondition(r.Conditions, t) }

// IsActive reports whether the revision's desired state is Active.
func (r *Revision) IsActive() bool { return strings.EqualFold(r.DesiredState, "Active") }

// HasRuntime says whether packages of kind run a runtime (a Deployment
// per revision).
func HasRuntime(kind string) bool { return kind == "Provider" || kind == "Function" }

// ObjectRef names an object a revision installed.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
}

// LockPackage is one entry of the Lock: an active revision and what it
// depends on.
type LockPackage struct {
	Name         string           `json:"name"`
	Type         string           `json:"type,omitempty"`
	Kind         string           `json:"kind,omitempty"`
	Source       string           `json:"source"`
	Version      string           `json:"version"`
	Dependencies []LockDependency `json:"dependencies,omitempty"`
}

// LockDependency is a dependency a locked package declares.
type LockDependency struct {
	Package     string `json:"package"`
	Constraints string `json:"constraints"`
	Type        string `json:"type,omitempty"`
	Kind        string `json:"kind,omitempty"`
}

func FindCondition(cs []Condition, t string) *Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// ReadConditions reads status.conditions of an object.
func ReadConditions(u *unstructured.Unstructured) []Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []Condition
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		c := Condition{}
		c.Type, _ = m["type"].(string)
		c.Status, _ = m["status"].(string)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		c.ObservedGeneration, _ = m["observedGeneration"].(int64)
		if s, ok := m["lastTransitionTime"].(string); ok {
			c.LastTransitionTime, _ = time.Parse(time.RFC3339, s)
		}
		out = append(out, c)
	}
	return out
}

// UID is the revision object's, empty when it was not read from a cluster.
func (r *Revision) UID() string {
	if r.Object == nil {
		return ""
	}
	return string(r.Object.GetUID())
}
