package installed

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// PausedAnnotation pauses the package manager's reconciliation of a
// package (crossplane-runtime's meta.AnnotationKeyReconciliationPaused):
// it makes, activates and deactivates none of its revisions, and its
// Installed and Healthy conditions stay as they were before the pause.
const PausedAnnotation = "crossplane.io/paused"

// Paused reports whether the package manager leaves p alone
// (crossplane-runtime's meta.IsPaused: the annotation is "true").
func (p *Package) Paused() bool {
	return p.Object != nil && p.Object.GetAnnotations()[PausedAnnotation] == "true"
}

// OperationAnnotation records, on each package a change of several steps
// touches (rename), which operation it is in and at which step, written
// before each step: a change cut short (SIGKILL) can be found and
// finished, or undone, from what the packages say.
const OperationAnnotation = "kubectl-xpkg.github.io/operation"

// The operations a record names.
const (
	OperationRename        = "rename"
	OperationUpgradeFamily = "upgrade --family"
	// OperationRepair is doctor --fix, recorded on the Lock.
	OperationRepair = "doctor --fix"
)

// Operation is the value of OperationAnnotation, as JSON.
type Operation struct {
	// Operation is the verb: OperationRename or OperationUpgradeFamily.
	Operation string `json:"operation"`
	// ID tells one run of the operation from another.
	ID string `json:"id"`
	// From and To are the two packages, as kind/name.
	From string `json:"from"`
	To   string `json:"to"`
	// Step is the step begun (1 to Of), named by StepName; Undo says the
	// steps done are being undone, Step the last undo step begun.
	Step     int    `json:"step"`
	Of       int    `json:"of"`
	StepName string `json:"stepName"`
	Undo     bool   `json:"undo,omitempty"`
	// Was is, for upgrade --family, the reference the package ran before
	// the step (what a rollback goes back to).
	Was string `json:"was,omitempty"`
	// Backup is, for doctor --fix, the file it saved what it changes to.
	Backup string `json:"backup,omitempty"`
}

// String is the annotation's value.
func (o *Operation) String() string {
	b, _ := json.Marshal(o)
	return string(b)
}

// ReadOperation reads p's operation annotation: nil without one, an error
// when it does not parse.
func ReadOperation(p *Package) (*Operation, error) {
	if p.Object == nil {
		return nil, nil
	}
	v, ok := p.Object.GetAnnotations()[OperationAnnotation]
	if !ok {
		return nil, nil
	}
	var o Operation
	if err := json.Unmarshal([]byte(v), &o); err != nil || o.Operation == "" || o.ID == "" {
		return nil, fmt.Errorf("%s's annotation %s is no operation record: %q", p.KindName(), OperationAnnotation, v)
	}
	return &o, nil
}

// OperationOf is the record on p, nil without one or with one that does
// not parse (ReadOperation says why).
func OperationOf(p *Package) *Operation {
	op, _ := ReadOperation(p)
	return op
}

// NewName is the new package's name (To without its kind).
func (o *Operation) NewName() string {
	_, name, _ := strings.Cut(o.To, "/")
	return name
}

// Later is whichever of two records of one operation is further on: the
// annotation is written on each package in turn, so a cut between two
// writes leaves them a step apart.
func Later(a, b *Operation) *Operation {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.Undo != b.Undo:
		if a.Undo {
			return a
		}
		return b
	case b.Step > a.Step && !a.Undo, b.Step < a.Step && a.Undo:
		return b
	}
	return a
}

// Health is what get, describe and tree show for a package's Installed
// and Healthy: its conditions' status (cond reads one), but never True
// while it is paused (its conditions are from before the pause: Healthy
// says Paused), its current revision cur is inactive (it runs nothing),
// or a CRD cur installed is being deleted (Healthy says Terminating: no
// object of its kind can be made).
func Health(p *Package, cur *Revision, cond func(t string) string) (inst, healthy string) {
	inst, healthy = cond(TypeInstalled), cond(TypeHealthy)
	inactive := cur != nil && strings.EqualFold(cur.DesiredState, "Inactive")
	if inactive {
		inst, healthy = "False", "False"
	}
	if p.Paused() {
		healthy = "Paused"
	}
	if cur != nil && len(cur.Deleting) > 0 {
		healthy = "Terminating"
	}
	return inst, healthy
}

// Standing says, in a sentence, why a package's conditions are not to be
// believed: paused, or its current revision inactive; "" when neither.
func Standing(p *Package, cur *Revision) string {
	var why []string
	if p.Paused() {
		why = append(why, "paused ("+PausedAnnotation+"): the package manager makes, activates and deactivates none of its revisions, and its conditions are from before the pause")
	}
	if cur != nil && strings.EqualFold(cur.DesiredState, "Inactive") {
		why = append(why, "its current revision "+cur.Name+" is inactive: it runs nothing")
	}
	if cur != nil && len(cur.Deleting) > 0 {
		why = append(why, deletingSentence(cur.Deleting))
	}
	return strings.Join(why, "; ")
}

// deletingSentence says which CRDs of a revision are being deleted.
func deletingSentence(ds []Deletion) string {
	d := ds[0]
	since := d.Since.UTC().Format(time.RFC3339)
	if len(ds) == 1 {
		return fmt.Sprintf("its CRD %s is being deleted (since %s): the API server refuses every new object of its kind until the deletion finishes, which the objects of the kind still hold (kubectl xpkg doctor says what holds it)", d.CRD, since)
	}
	return fmt.Sprintf("%d of its CRDs are being deleted (%s since %s, and more): the API server refuses every new object of their kinds until their deletion finishes, which the objects of the kinds still hold (kubectl xpkg doctor says what holds them)", len(ds), d.CRD, since)
}
