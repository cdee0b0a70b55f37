package resolve

import (
	"slices"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// Settings are the flags of Crossplane's core that change what its
// resolver does: --enable-dependency-version-upgrades (Upgrades) and
// --enable-dependency-version-downgrades (Downgrades, which turns on
// Upgrades too).
type Settings struct {
	Upgrades   bool `json:"dependencyUpgrades"`
	Downgrades bool `json:"dependencyDowngrades"`
}

// Source is what a simulation reads of registries: a repository's tags,
// and the kind and dependencies of one of its versions.
type Source interface {
	Tags(repo string) ([]versions.Tag, error)
	Dependencies(ref string) (Known, error)
}

// Object is a package object, as the resolver finds one for a
// dependency: its kind (Provider, Configuration, Function), name,
// repository, and version (the tag or digest of status.resolvedPackage
// when set, else of spec.package).
type Object struct {
	Kind, Name, Repo, Version string
}

// Outcome is what the package manager does after a change, step by step
// as its resolver goes, until the Lock resolves or stalls.
type Outcome struct {
	// Changes are the packages the resolver installs, upgrades or
	// downgrades, in its order.
	Changes []Change `json:"changes"`
	// Resolves: the Lock's Resolved condition ends True. Stall is where
	// it stops instead: the Lock is Resolved=False and no package in the
	// cluster gets a dependency installed or moved until that is fixed.
	Resolves bool   `json:"resolves"`
	Stall    *Stall `json:"stall,omitempty"`
	// Unhealthy are the packages whose revision the dependency check
	// fails when the resolver is done, in the Lock's order.
	Unhealthy []Unhealthy `json:"unhealthy,omitempty"`
	// Unknown says why the simulation stopped short: a package it could
	// not read. What it found until then stands.
	Unknown string `json:"unknown,omitempty"`
}

// Change is a package the resolver installs or moves.
type Change struct {
	// Package is the package object, kind/name (a package it installs is
	// named after the repository's path).
	Package    string `json:"package"`
	Repository string `json:"repository"`
	// Action is install, upgrade or downgrade.
	Action string `json:"action"`
	From   string `json:"from,omitempty"`
	To     string `json:"to"`
	// Reason says why that version: the resolver's rule, in a phrase.
	Reason      string          `json:"reason"`
	Constraints []versions.Hold `json:"constraints"`
	// Definitions are what the change brings and drops of the cluster's
	// API, when the plan read the packages.
	Definitions *Definitions `json:"definitions,omitempty"`
}

// Definitions are the CRDs (of CRDs, MRDs, XRDs and claims) a change
// brings, and those it drops; Err says why they could not be read.
type Definitions struct {
	Brings []string `json:"brings,omitempty"`
	Drops  []string `json:"drops,omitempty"`
	Err    string   `json:"error,omitempty"`
}

// Stall is the dependency the resolver stops at.
type Stall struct {
	Repository  string          `json:"repository"`
	Constraints []versions.Hold `json:"constraints,omitempty"`
	// Message is why, in the resolver's words where it has them.
	Message string `json:"message"`
	// Newest is the newest version the repository has, when no version
	// satisfies the constraints ("" when it has none, or it is unknown).
	Newest string `json:"newest,omitempty"`
	// Roots are the packages above the constraints' owners that nothing
	// depends on: those a user installs, and moves to end the stall.
	Roots []string `json:"roots,omitempty"`
}

// Unhealthy is a package whose revision's dependency check fails.
type Unhealthy struct {
	Package string `json:"package"`
	Message string `json:"message"`
	// Dependency is the installed dependency (kind/name) whose version
	// the package's constraint excludes, and Heal the version to move it
	// to that every constraint on it admits (the lowest at or above what
	// runs, else the highest below), or "" when none does.
	Dependency string `json:"dependency,omitempty"`
	Heal       string `json:"heal,omitempty"`
}

// IsUnhealthy tells whether the outcome leaves pkg (kind/name) unhealthy.
func (o *Outcome) IsUnhealthy(pkg string) bool {
	return slices.ContainsFunc(o.Unhealthy, func(u Unhealthy) bool { return u.Package == pkg })
}
