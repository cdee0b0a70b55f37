package xpkg

import (
	"fmt"
	"slices"
	"strings"
)

// The groups that hold package metadata: Crossplane's, and the IBM
// distribution's copy of the same API (seed 001).
const (
	MetaGroup    = "meta.pkg.crossplane.io"
	MetaGroupIBM = "meta.pkg.ibm.crossplane.io"
)

// Package kinds.
const (
	KindProvider      = "Provider"
	KindConfiguration = "Configuration"
	KindFunction      = "Function"
)

// metaVersions lists the versions each meta kind has been published at.
var metaVersions = map[string][]string{
	KindProvider:      {"v1alpha1", "v1beta1", "v1"},
	KindConfiguration: {"v1alpha1", "v1beta1", "v1"},
	KindFunction:      {"v1alpha1", "v1beta1", "v1"},
}

// IsMetaGroup reports whether group holds package metadata.
func IsMetaGroup(group string) bool { return group == MetaGroup || group == MetaGroupIBM }

// IsMeta reports whether o is a package meta object of any kind or version.
func IsMeta(o *Object) bool {
	gvk := o.GVK()
	_, known := metaVersions[gvk.Kind]
	return IsMetaGroup(gvk.Group) && known
}

// Meta is a package's metadata object, typed.
type Meta struct {
	*Object
	// Kind is Provider, Configuration or Function.
	Kind string
	// Group and Version are the meta object's API group and version.
	Group, Version string
	// Crossplane is the constraint on Crossplane's version: spec.crossplane.version,
	// or spec.crossplane itself where it is a plain string (the v1alpha1 seed's form).
	Crossplane string
	// DependsOn lists the package's dependencies.
	DependsOn []Dependency
	// ControllerImage is a Provider's spec.controller.image (empty for the
	// other kinds, and for providers whose image is the package itself).
	ControllerImage string
}

// Dependency is one entry of spec.dependsOn.
type Dependency struct {
	// Kind is provider, configuration or function, lower case, as the
	// dependency is written; empty when the entry names no kind.
	Kind string `json:"kind,omitempty"`
	// APIVersion is set by the apiVersion/kind/package form (Crossplane v2).
	APIVersion string `json:"apiVersion,omitempty"`
	// Package is the dependency's OCI repository.
	Package string `json:"package"`
	// Version is the version or semver constraint required.
	Version string `json:"version"`
	// Problems found while reading the entry (e.g. two kinds named).
	Problems []string `json:"-"`
}

// NewMeta reads the typed fields of a meta object.
func NewMeta(o *Object) *Meta {
	gvk := o.GVK()
	m := &Meta{Object: o, Kind: gvk.Kind, Group: gvk.Group, Version: gvk.Version}
	spec, _ := o.Content["spec"].(map[string]any)
	switch c := spec["crossplane"].(type) {
	case string:
		m.Crossplane = c
	case map[string]any:
		m.Crossplane, _ = c["version"].(string)
	}
	if ctrl, ok := spec["controller"].(map[string]any); ok {
		m.ControllerImage, _ = ctrl["image"].(string)
	}
	deps, _ := spec["dependsOn"].([]any)
	for _, d := range deps {
		m.DependsOn = append(m.DependsOn, newDependency(d))
	}
	return m
}

var dependencyKinds = []string{"provider", "configuration", "function"}

func newDependency(v any) Dependency {
	entry, ok := v.(map[string]any)
	if !ok {
		return Dependency{Problems: []string{"is not a mapping"}}
	}
	var d Dependency
	d.Version = stringField(entry, "version", &d.Problems)
	var named []string
	for _, k := range dependencyKinds {
		if _, ok := entry[k]; ok {
			named = append(named, k)
			d.Kind = k
			d.Package = stringField(entry, k, &d.Problems)
		}
	}
	if _, ok := entry["package"]; ok {
		d.Package = stringField(entry, "package", &d.Problems)
		d.APIVersion = stringField(entry, "apiVersion", &d.Problems)
		if kind := stringField(entry, "kind", &d.Problems); kind != "" {
			d.Kind = strings.ToLower(kind)
			named = append(named, "package")
		}
	}
	switch {
	case len(named) == 0 && d.Package == "":
		d.Problems = append(d.Problems, "names no package: set one of provider, configuration, function, or package")
	case len(named) > 1:
		d.Problems = append(d.Problems, fmt.Sprintf("names more than one package (%s)", strings.Join(named, ", ")))
	}
	if d.Kind != "" && !slices.Contains(dependencyKinds, d.Kind) {
		d.Problems = append(d.Problems, fmt.Sprintf("has unknown kind %q", d.Kind))
	}
	return d
}

func stringField(m map[string]any, key string, problems *[]string) string {
	v, ok := m[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		*problems = append(*problems, fmt.Sprintf("field %q is not a string", key))
	}
	return s
}

// String is the dependency as "package version", for messages.
func (d Dependency) String() string {
	return d.Package + " " + d.Version
}
