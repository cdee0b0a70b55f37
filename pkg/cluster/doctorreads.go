package cluster

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The resources of the definitions doctor reads, as DefinitionMeta.Resource
// names them (and kubectl patch takes them).
const (
	ResourceCRDs = "customresourcedefinitions"
	ResourceMRDs = "managedresourcedefinitions"
)

// DefinitionMeta is what doctor reads of a CRD or an MRD: who owns and who
// controls it, the versions it defines and those objects are stored at.
type DefinitionMeta struct {
	// Resource is ResourceCRDs or ResourceMRDs.
	Resource        string
	Name            string
	UID             string
	ResourceVersion string
	Owners          []metav1.OwnerReference
	// Deleting is when the definition's deletion started (nil: it is not
	// being deleted); Finalizers what its deletion waits for.
	Deleting   *time.Time
	Finalizers []string
	// Versions are the names of spec.versions, Storage the one objects
	// are written at; Stored is status.storedVersions.
	Versions []string
	Storage  string
	Stored   []string
	// CRD is what a plan reads of a CRD (nil for an MRD): its kind and
	// served versions, for counting its objects.
	CRD *CRD
	// MRD is the same of an MRD (nil for a CRD), whose State is Active or
	// Inactive.
	MRD   *CRD
	State string
}

// AllCRDs reads every CRD in the cluster with one paged list, decoded a
// CRD at a time without its schema: 2,000 CRDs cost five requests (pages of 500) and
// megabytes, and nothing more as they grow.
func (c *Cluster) AllCRDs(ctx context.Context) ([]DefinitionMeta, error) {
	defs, err := c.allDefinitions(ctx, crdResource)
	if err != nil {
		return nil, fmt.Errorf("list CustomResourceDefinitions: %w", err)
	}
	return defs, nil
}

// AllMRDs reads every ManagedResourceDefinition as AllCRDs reads CRDs;
// none, with no error, where Crossplane serves no MRDs (v1, v2.0).
func (c *Cluster) AllMRDs(ctx context.Context) ([]DefinitionMeta, error) {
	defs, err := c.allDefinitions(ctx, mrdGVR)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("list ManagedResourceDefinitions: %w", err)
	}
	return defs, nil
}

func (c *Cluster) allDefinitions(ctx context.Context, gvr schema.GroupVersionResource) ([]DefinitionMeta, error) {
	src, err := c.definitions()
	if err != nil {
		return nil, err
	}
	var out []DefinitionMeta
	_, err = src.list(ctx, gvr, func(d *definitionDoc) {
		def := DefinitionMeta{Resource: gvr.Resource, Name: d.Metadata.Name, UID: d.Metadata.UID,
			ResourceVersion: d.Metadata.ResourceVersion, Owners: d.Metadata.OwnerReferences, Stored: d.Status.StoredVersions,
			Finalizers: d.Metadata.Finalizers}
		if t := d.Metadata.DeletionTimestamp; t != nil {
			def.Deleting = &t.Time
		}
		if gvr == crdResource {
			def.CRD = crdOf(d)
		} else {
			def.MRD, def.State = crdOf(d), d.Spec.State
		}
		for _, v := range d.Spec.Versions {
			def.Versions = append(def.Versions, v.Name)
			if v.Storage {
				def.Storage = v.Name
			}
		}
		out = append(out, def)
	})
	return out, err
}

var runtimeConfigGVR = schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1beta1", Resource: "deploymentruntimeconfigs"}

// RuntimeConfig is what doctor reads of a DeploymentRuntimeConfig: the
// ServiceAccount names it gives the runtimes of the packages that use it.
type RuntimeConfig struct {
	Name string
	// ServiceAccount is spec.serviceAccountTemplate.metadata.name: the
	// ServiceAccount Crossplane makes and controls for each runtime ("":
	// one per revision, named after it).
	ServiceAccount string
	// DeploymentServiceAccount is the runtime Deployment's own
	// serviceAccountName (spec.deploymentTemplate.spec.template.spec):
	// when it names another account, Crossplane makes none.
	DeploymentServiceAccount string
}

// RuntimeConfigs reads every DeploymentRuntimeConfig with one paged list;
// none, with no error, where Crossplane has none (before v1.14).
func (c *Cluster) RuntimeConfigs(ctx context.Context) ([]RuntimeConfig, error) {
	var out []RuntimeConfig
	opts := metav1.ListOptions{Limit: listPage}
	for {
		l, err := c.dyn.Resource(runtimeConfigGVR).List(ctx, opts)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("list DeploymentRuntimeConfigs: %w", err)
		}
		for i := range l.Items {
			u := l.Items[i].Object
			rc := RuntimeConfig{Name: l.Items[i].GetName()}
			rc.ServiceAccount, _, _ = unstructured.NestedString(u, "spec", "serviceAccountTemplate", "metadata", "name")
			rc.DeploymentServiceAccount, _, _ = unstructured.NestedString(u, "spec", "deploymentTemplate", "spec", "template", "spec", "serviceAccountName")
			out = append(out, rc)
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}
