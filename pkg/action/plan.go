// Package action holds the use cases of the cluster verbs, as Helm's
// pkg/action does: one Config, built by a command from its flags, serves
// every action it runs. The change verbs (Upgrade, Rollback, UpgradeAll,
// Uninstall) each have Plan (what the change would do, as findings, under
// the rules of findings.Rules, judged by pkg/diagnose against the package
// manager's state) and Apply (do it, as planned, with --atomic; errors
// carry their exit code); Gate refuses a plan with blocking findings.
// Install builds and creates a package object; Outdated says what each
// package may move to; Get, Describe, Tree, Versions and ServerVersion
// read. The command layer binds flags to these types and prints what they
// return; the cluster API is pkg/cluster (which also waits), what the
// package manager records pkg/installed, package contents pkg/source and
// pkg/diff; Doctor reports what pkg/diagnose finds, and repairs it.
package action

import (
	"fmt"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/diagnose"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/findings"
	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/teardown"
)

// Plan is what a change would do, found before doing any of it.
type Plan struct {
	// Action is upgrade, rollback or uninstall.
	Action string `json:"action"`
	// Package is the package changed, as kind/name.
	Package string `json:"package"`
	// From and To are the package references before and after (To is
	// empty for uninstall).
	From     string             `json:"from,omitempty"`
	To       string             `json:"to,omitempty"`
	Findings []findings.Finding `json:"findings"`
	// Packages are the packages an uninstall removes, as kind/name, in
	// the order it removes them.
	Packages []string `json:"packages,omitempty"`
	// Prediction is what the package manager does after an install,
	// upgrade or rollback: the dependencies its resolver installs or
	// moves, whether the Lock resolves, what is then unhealthy, and what
	// the plan knows of its configuration (nil for a plan -f member: the
	// set has one prediction).
	*diagnose.Prediction
	// Teardown is, for uninstall --with-resources, what each package's
	// teardown removes, in order.
	Teardown []*teardown.Plan `json:"teardown,omitempty"`

	// in is the package an upgrade or rollback plan moves; unplanned a
	// change made without a plan (--no-plan), which nothing checked.
	in        *Installed
	unplanned bool
}

// NewPlan is a plan with no findings yet: -o json prints "findings": [],
// not null, when it finds none.
func NewPlan(action, pkg, from, to string) *Plan {
	return &Plan{Action: action, Package: pkg, From: from, To: to, Findings: []findings.Finding{}}
}

// Predicts tells whether the plan predicts that the package manager
// installs or moves a dependency.
func (p *Plan) Predicts() bool {
	return p.Prediction != nil && len(p.Resolution.Changes) > 0
}

// Planned tells a plan that checked the change from one made without a
// plan (--no-plan), which has no findings to show or gate on.
func (p *Plan) Planned() bool { return !p.unplanned }

// Refused is the error of a plan a blocking finding stops; nil when none
// does.
func (p *Plan) Refused() *RefusedError {
	if !p.Blocking() {
		return nil
	}
	return &RefusedError{Plan: p}
}

// Blocking reports whether a finding stops the change.
func (p *Plan) Blocking() bool { return findings.HasBlocking(p.Findings) }

func (p *Plan) add(f ...findings.Finding) { p.Findings = append(p.Findings, f...) }

// RefusedError is a change a blocking finding stopped.
type RefusedError struct {
	Plan *Plan
}

func (e *RefusedError) Error() string {
	var first *findings.Finding
	n := 0
	for i := range e.Plan.Findings {
		if e.Plan.Findings[i].Severity == findings.Blocking {
			if first == nil {
				first = &e.Plan.Findings[i]
			}
			n++
		}
	}
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" (and %d more blocking findings)", n-1)
	}
	return fmt.Sprintf("%s of %s refused: %s%s; pass --force to go ahead anyway", e.Plan.Action, e.Plan.Package, first.Message, more)
}
