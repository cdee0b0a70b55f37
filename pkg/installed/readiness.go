package installed

import (
	"fmt"
	"strings"
	"time"
)

// Condition types of the pkg.crossplane.io generation.
const (
	TypeInstalled = "Installed"
	TypeHealthy   = "Healthy"
)

// terminalMarkers are failures the package manager will not get past by
// retrying: the image cannot be pulled or read, the package is invalid or
// incompatible. Other False conditions (Healthy=False while a runtime
// starts, say) are waited out.
var terminalMarkers = []string{
	"cannot unpack package", "failed to fetch package", "cannot parse package", "cannot lint package",
	"incompatible", "MANIFEST_UNKNOWN", "NAME_UNKNOWN", "UNAUTHORIZED", "DENIED", "SignatureVerificationFailed",
	// The revision's own checks of the package's contents (Crossplane v2).
	"validating package contents failed", "linting package contents failed", "multiple meta types",
}

// conflictMarker is an object, a definition say, that another revision
// controls (crossplane-runtime's words, after "cannot establish control of
// object"): Crossplane retries, and a moment into an upgrade the old
// revision may still hold it, but once it has lasted conflictGrace it is
// another package's, and stays so until one of them goes.
const (
	conflictMarker = "is already controlled by"
	conflictGrace  = 30 * time.Second
)

// IsCurrent reports whether a condition describes the package's present spec:
// right after spec.package changes, the old Healthy=True is still there
// until the package manager catches up.
func IsCurrent(p *Package, c *Condition) bool {
	if c == nil {
		return false
	}
	if c.ObservedGeneration != 0 && c.ObservedGeneration != p.Generation {
		return false
	}
	return p.CurrentIdentifier == "" || p.CurrentIdentifier == p.Source
}

// Readiness is how far a package has got.
type Readiness struct {
	Ready    bool
	Terminal *Condition
	Pending  []string
}

// PackageReadiness judges a package alone: ready when its current
// ReadConditions say Installed and Healthy.
func PackageReadiness(p *Package) Readiness {
	var r Readiness
	if p.Paused() {
		// Its conditions are from before the pause.
		r.Pending = append(r.Pending, "it is paused ("+PausedAnnotation+")")
		return r
	}
	if p.CurrentIdentifier != "" && p.CurrentIdentifier != p.Source {
		r.Pending = append(r.Pending, fmt.Sprintf("the package manager has not yet acted on %s (still at %s)", p.Source, p.CurrentIdentifier))
	}
	for _, t := range []string{TypeInstalled, TypeHealthy} {
		c := p.Condition(t)
		switch {
		case failedNow(p, c):
			// The new reference could not even be unpacked: Crossplane
			// says so for the present spec before it records the
			// reference as its current identifier.
			r.Terminal = c
			return r
		case !IsCurrent(p, c):
			r.Pending = append(r.Pending, t+" not yet reported for this generation")
		case c.Status == "True":
		case c.Status == "False" && IsTerminal(c):
			r.Terminal = c
			return r
		default:
			r.Pending = append(r.Pending, DescribeCondition(c))
		}
	}
	r.Ready = len(r.Pending) == 0
	return r
}

// failedNow reports a terminal failure the package manager reported for
// the package's present generation, whatever reference it last recorded.
func failedNow(p *Package, c *Condition) bool {
	return c != nil && c.Status == "False" && c.ObservedGeneration != 0 && c.ObservedGeneration == p.Generation && IsTerminal(c)
}

func IsTerminal(c *Condition) bool {
	if strings.Contains(c.Message, conflictMarker) {
		return !c.LastTransitionTime.IsZero() && time.Since(c.LastTransitionTime) >= conflictGrace
	}
	for _, m := range terminalMarkers {
		if strings.Contains(c.Message, m) || c.Reason == m {
			return true
		}
	}
	return false
}

func DescribeCondition(c *Condition) string {
	s := c.Type + "=" + c.Status
	if c.Reason != "" {
		s += " (" + c.Reason
		if c.Message != "" {
			s += ": " + c.Message
		}
		s += ")"
	}
	return s
}
