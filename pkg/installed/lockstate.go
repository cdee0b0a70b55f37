package installed

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TypeResolved is the Lock's condition: whether the package manager could
// resolve the dependencies of every package in it. While it is False,
// every package's revision reports it (cannot resolve package
// dependencies), whichever package caused it.
const TypeResolved = "Resolved"

// lockStalledGrace is how long the Lock must have been unresolved, with a
// cause no package manager retry gets past, before a wait gives up on it:
// a moment into an upgrade the Lock may hold two revisions of a package.
const lockStalledGrace = 30 * time.Second

// lockStuckMarkers are resolution failures that stay until someone acts: a
// graph with a package twice (two revisions of one source, a twin under
// another name), a dependency no registry version satisfies.
var lockStuckMarkers = []string{"cannot build DAG", "cannot sort DAG", "has no valid version", "already exists"}

// LockUnresolved is the Lock's Resolved condition when it is not True
// (nil when resolved, or when the Lock has no such condition).
func LockUnresolved(u *unstructured.Unstructured) *Condition {
	c := FindCondition(ReadConditions(u), TypeResolved)
	if c == nil || c.Status == "True" {
		return nil
	}
	return c
}

// LockWarning is the line that says the Lock is not resolved, and what it
// does to every package.
func LockWarning(c *Condition) string {
	msg := strings.TrimPrefix(c.Message, "Error occurred during dependency resolution ")
	return fmt.Sprintf("the Lock is not resolved (%s: %s): Crossplane resolves no package's dependencies until it is, and every package may report it; kubectl xpkg doctor says why and what to do", c.Reason, msg)
}

// LockStuck reports an unresolved Lock whose cause no retry of the
// package manager gets past, and that has lasted lockStalledGrace.
func LockStuck(c *Condition) bool {
	if c == nil || c.LastTransitionTime.IsZero() || time.Since(c.LastTransitionTime) < lockStalledGrace {
		return false
	}
	for _, m := range lockStuckMarkers {
		if strings.Contains(c.Message, m) {
			return true
		}
	}
	return false
}

// ReportsLock tells whether the package's present conditions report that
// its dependencies cannot be resolved: the Lock's failure is its own.
func ReportsLock(p *Package) bool {
	for _, t := range []string{TypeHealthy, TypeInstalled} {
		if c := p.Condition(t); IsCurrent(p, c) && c.Status == "False" && strings.Contains(c.Message, "cannot resolve package dependencies") {
			return true
		}
	}
	return false
}
