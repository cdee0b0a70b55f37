// Package findings holds what the verbs' checks find: a Finding with its
// Severity, the rule IDs and the table that documents them (each verb's
// --help, docs/rules.md and the docs' tables of rules come from it), and
// the text writers every verb prints findings with. It imports nothing of
// this module.
package findings

import "fmt"

// Severity says what a finding does to the change.
type Severity string

const (
	// Blocking findings stop the change unless it is forced.
	Blocking Severity = "blocking"
	// Warning findings are printed; the change goes ahead.
	Warning Severity = "warning"
	// Info findings say what will happen.
	Info Severity = "info"
)

// Finding is one thing a plan (or doctor) found.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Message names the object and the way out.
	Message string `json:"message"`
	// Count is how many objects the finding is about, where it counts.
	Count *int64 `json:"count,omitempty"`
	// Object is what the finding is about, as KIND/NAME or a CRD's name.
	Object string `json:"object,omitempty"`
}

// Key tells findings apart: the same rule about the same object, the
// same count.
func (f Finding) Key() string {
	n := int64(-1)
	if f.Count != nil {
		n = *f.Count
	}
	return fmt.Sprintf("%s|%s|%s|%d", f.Rule, f.Severity, f.Object, n)
}

// Count is n as a finding's Count.
func Count(n int64) *int64 { return &n }

// HasBlocking reports whether a finding of fs is blocking.
func HasBlocking(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == Blocking {
			return true
		}
	}
	return false
}

// Counts tallies findings by severity.
func Counts(fs []Finding) (blocking, warnings, infos int) {
	for _, f := range fs {
		switch f.Severity {
		case Blocking:
			blocking++
		case Warning:
			warnings++
		default:
			infos++
		}
	}
	return
}
