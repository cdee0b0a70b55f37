// Package teardown plans and carries out uninstall --with-resources: every
// object of the kinds a package serves removed in the order that finishes
// (claims, then composite resources, then the managed resources that are
// left, users before what a Usage protects, then ProviderConfigs), while
// the package's runtime still runs to remove their finalizers; with
// ModeOrphan, each managed resource first set to keep what it manages.
package teardown

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What becomes of the objects' external resources.
const (
	ModeDelete = "delete"
	ModeOrphan = "orphan"
)

// Fates of an object's external resource.
const (
	FateDeleted = "deleted"
	FateKept    = "kept"
)

// The stages, in the order they run.
const (
	StageClaims          = "claims"
	StageComposites      = "composites"
	StageManaged         = "managed resources"
	StageOther           = "other objects"
	StageProviderConfigs = "ProviderConfigs"
)

// Stages is the order of the stages.
var Stages = []string{StageClaims, StageComposites, StageManaged, StageOther, StageProviderConfigs}

// Object is one object the teardown deletes.
type Object struct {
	Namespace    string `json:"namespace,omitempty"`
	Name         string `json:"name"`
	ExternalName string `json:"externalName,omitempty"`
	// Fate is what becomes of a managed resource's external resource,
	// Why says by which policy ("" for objects that manage nothing).
	Fate string `json:"fate,omitempty"`
	Why  string `json:"why,omitempty"`
	// Usage names the Usage objects that make it wait for their users.
	UsedBy []string `json:"usedBy,omitempty"`

	gvr schema.GroupVersionResource
	u   *unstructured.Unstructured
}

// Group is the objects of one kind, removed in one stage.
type Group struct {
	Kind  string `json:"kind"`
	Stage string `json:"stage"`
	// DefinedBy names the package (kind/name) whose XRD defines the kind
	// of composite resources, and their claims, that compose the package's
	// managed resources; "" for the package's own kinds and those no
	// package defines.
	DefinedBy string   `json:"definedBy,omitempty"`
	Objects   []Object `json:"objects"`

	gvr schema.GroupVersionResource
}

// Plan is the teardown of one package: its groups in stage order.
type Plan struct {
	Mode    string  `json:"mode"`
	Package string  `json:"package"`
	Groups  []Group `json:"groups"`
	// Usages are the Usage objects that order the managed resources.
	Usages []string `json:"usages,omitempty"`
	// Definitions are the CRDs the package makes, checked gone at the end.
	Definitions []string `json:"-"`
}

// Managed are the managed resources whose external resource the mode
// decides (every object with a Fate).
func (p *Plan) Managed() []*Object {
	var out []*Object
	for gi := range p.Groups {
		for oi := range p.Groups[gi].Objects {
			if o := &p.Groups[gi].Objects[oi]; o.Fate != "" {
				out = append(out, o)
			}
		}
	}
	return out
}

// Summary is the plan's head line.
func (p *Plan) Summary() string {
	var parts []string
	for _, st := range Stages {
		n := 0
		for _, g := range p.Groups {
			if g.Stage == st {
				n += len(g.Objects)
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no object of its kinds")
	}
	return fmt.Sprintf("Teardown (--with-resources=%s): %s, then %s", p.Mode, strings.Join(parts, ", then "), p.Package)
}

// Lines are the plan, one line per kind and per object, indented.
func (p *Plan) Lines() []string {
	out := []string{p.Summary()}
	for _, g := range p.Groups {
		head := fmt.Sprintf("  %s (%d, %s", g.Kind, len(g.Objects), g.Stage)
		if g.DefinedBy != "" {
			head += ", a kind " + g.DefinedBy + " defines"
		}
		out = append(out, head+"):")
		for _, o := range g.Objects {
			line := "    " + o.display()
			if o.ExternalName != "" {
				line += " (external name " + o.ExternalName + ")"
			}
			switch o.Fate {
			case FateDeleted:
				line += ": deleted with it (" + o.Why + ")"
			case FateKept:
				line += ": kept (" + o.Why + ")"
			default:
				line += ": deleted"
			}
			if len(o.UsedBy) > 0 {
				line += "; after its users (" + strings.Join(o.UsedBy, ", ") + ")"
			}
			out = append(out, line)
		}
	}
	return out
}

func (o *Object) display() string {
	if o.Namespace != "" {
		return o.Namespace + "/" + o.Name
	}
	return o.Name
}

// externalFate decides, as crossplane-runtime's managed reconciler does,
// whether deleting u deletes its external resource: by its
// managementPolicies alone for a namespaced (v2) managed resource; by
// those and its deletionPolicy for a cluster-scoped one (the legacy
// resolver: deleted when deletionPolicy is Delete and the policies hold
// Delete or *, or when the policies are not the default and hold Delete).
func externalFate(u *unstructured.Unstructured) (fate, why string) {
	mgmt, found, _ := unstructured.NestedStringSlice(u.Object, "spec", "managementPolicies")
	if !found || len(mgmt) == 0 {
		mgmt = []string{"*"}
	}
	has := func(p string) bool { return slices.Contains(mgmt, p) }
	policies := "managementPolicies [" + strings.Join(mgmt, ", ") + "]"
	dp, dpFound, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy")
	if u.GetNamespace() != "" && !dpFound {
		if has("Delete") || has("*") {
			return FateDeleted, policies
		}
		return FateKept, policies + " has no Delete"
	}
	if dp == "" {
		dp = "Delete"
	}
	def := len(mgmt) == 1 && mgmt[0] == "*"
	switch {
	case dp == "Delete" && (has("Delete") || has("*")):
		return FateDeleted, "deletionPolicy Delete, " + policies
	case !def && has("Delete"):
		return FateDeleted, policies + " holds Delete"
	case dp != "Delete":
		return FateKept, "deletionPolicy " + dp
	}
	return FateKept, policies + " has no Delete"
}

// keepPolicies are the policies that make u keep what it manages:
// deletionPolicy Orphan where it has one (or is cluster-scoped), and
// managementPolicies without Delete (the default * spelled out without
// it). nil management: leave them.
func keepPolicies(u *unstructured.Unstructured) (deletion string, management []string) {
	mgmt, found, _ := unstructured.NestedStringSlice(u.Object, "spec", "managementPolicies")
	if !found || len(mgmt) == 0 {
		mgmt = []string{"*"}
	}
	var keep []string
	for _, p := range mgmt {
		switch p {
		case "*":
			keep = append(keep, "Observe", "Create", "Update", "LateInitialize")
		case "Delete":
		default:
			if !slices.Contains(keep, p) {
				keep = append(keep, p)
			}
		}
	}
	if _, dpFound, _ := unstructured.NestedString(u.Object, "spec", "deletionPolicy"); dpFound || u.GetNamespace() == "" {
		deletion = "Orphan"
		if len(mgmt) == 1 && mgmt[0] == "*" {
			// The legacy resolver keeps what the default policies manage
			// once deletionPolicy says Orphan.
			return deletion, nil
		}
	}
	if slices.Equal(keep, mgmt) {
		return deletion, nil
	}
	return deletion, keep
}
