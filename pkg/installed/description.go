package installed

import "time"

// Description is everything describe shows about a package.
type Description struct {
	Package      *Package           `json:"package"`
	Revisions    []*Revision        `json:"revisions"`
	Dependencies []DependencyStatus `json:"dependencies,omitempty"`
	Dependents   []string           `json:"dependents,omitempty"`
	Events       []Event            `json:"events,omitempty"`
	// MRDs are the ManagedResourceDefinitions the current revision
	// installed (Crossplane v2 providers), with their state; MRAPs the
	// activation policies that activated some of them.
	MRDs  []MRD  `json:"managedResourceDefinitions,omitempty"`
	MRAPs []MRAP `json:"managedResourceActivationPolicies,omitempty"`
	// LockUnresolved is the Lock's Resolved condition while it is not
	// True: no package's dependencies are resolved until it is.
	LockUnresolved *Condition `json:"lockUnresolved,omitempty"`
}

// Current is the revision the package runs now, if any.
func (d *Description) Current() *Revision {
	for _, r := range d.Revisions {
		if r.Name == d.Package.CurrentRevision {
			return r
		}
	}
	return nil
}

// DependencyStatus is a declared dependency and how the Lock resolved it.
type DependencyStatus struct {
	Package     string `json:"package"`
	Constraints string `json:"constraints"`
	Kind        string `json:"kind,omitempty"`
	// Resolved is the version the Lock holds for it; empty if none yet.
	Resolved string `json:"resolved,omitempty"`
}

// Event is a recent event of the package or one of its revisions.
type Event struct {
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Object  string    `json:"object"`
	Message string    `json:"message"`
	From    string    `json:"from,omitempty"`
	Count   int64     `json:"count"`
	First   time.Time `json:"firstSeen"`
	Last    time.Time `json:"lastSeen"`
}

// MRD is a ManagedResourceDefinition's state, as Crossplane v2's
// safe-start shows it: Active or Inactive, and whether it is Established.
type MRD struct {
	Name        string `json:"name"`
	State       string `json:"state"`
	Established string `json:"established"`
	// Deleting is when the deletion of its CRD began: its State is then
	// Terminating, and it is not Established.
	Deleting *time.Time `json:"deleting,omitempty"`
}

// MRAP is a ManagedResourceActivationPolicy: the patterns it activates and
// the MRDs it did.
type MRAP struct {
	Name      string   `json:"name"`
	Activate  []string `json:"activate"`
	Activated []string `json:"activated,omitempty"`
}
