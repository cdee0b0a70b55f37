package resolve

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// ErrNoVersion: no version of the repository satisfies every constraint.
var ErrNoVersion = errors.New("no version satisfies every constraint")

// ErrDifferentDigests and ErrMixedConstraints are the package manager's
// refusals of parents that pin two digests, or pin a digest and range a
// version at once.
var (
	ErrDifferentDigests = errors.New("a dependency package has different digests in parent constraints")
	ErrMixedConstraints = errors.New("a dependency package has different types of parent constraints")
)

// InvalidError is a constraint that is neither a digest nor a semver
// range: the package manager cannot resolve the dependency.
type InvalidError struct {
	Constraint string
	Err        error
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("version constraint on dependency is invalid: %q: %v", e.Constraint, e.Err)
}

// IsDigest tells a constraint that pins a digest, as the package manager
// tells it.
func IsDigest(constraint string) bool {
	_, err := v1.NewHash(constraint)
	return err == nil
}

// Choose is the version the package manager installs for a dependency
// under constraints (its parents'; one for an install): the digest they
// pin, or the newest complete version every range admits, by its tag.
// The errors are ErrNoVersion, ErrDifferentDigests, ErrMixedConstraints
// and *InvalidError (see the package doc).
func Choose(tags []versions.Tag, constraints []string) (string, error) {
	digest, err := pinned(constraints)
	if err != nil || digest != "" {
		return digest, err
	}
	admitted, err := Admitted(tags, constraints, false)
	if err != nil {
		return "", err
	}
	if len(admitted) == 0 {
		return "", fmt.Errorf("%w %v", ErrNoVersion, constraints)
	}
	return admitted[0].Name, nil
}

// listsTags tells whether Choose needs the repository's tags for
// constraints: no digest pins it, and every constraint is a range.
func listsTags(constraints []string) bool {
	if d, err := pinned(constraints); err != nil || d != "" {
		return false
	}
	_, err := parse(constraints)
	return err == nil
}

// pinned is the digest constraints pin ("" for none), or why they cannot
// be resolved.
func pinned(constraints []string) (string, error) {
	digest, ranged := "", false
	for _, c := range constraints {
		if IsDigest(c) {
			if digest != "" && digest != c {
				return "", fmt.Errorf("%w (%v)", ErrDifferentDigests, constraints)
			}
			digest = c
		} else {
			ranged = true
		}
		if ranged && digest != "" {
			return "", fmt.Errorf("%w (%v)", ErrMixedConstraints, constraints)
		}
	}
	return digest, nil
}

// Admitted are the complete versions among tags (newest first, as
// versions.Sort orders them) that every constraint admits, as
// Masterminds' Check admits them: a pre-release only where a constraint
// names one. With no constraint, pre admits pre-releases. A constraint
// that is no semver range is an *InvalidError.
func Admitted(tags []versions.Tag, constraints []string, pre bool) ([]versions.Tag, error) {
	cs, err := parse(constraints)
	if err != nil {
		return nil, err
	}
	var out []versions.Tag
	for _, t := range tags {
		if counts, ok := judge(t, cs, pre); counts && ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// Candidates are the versions above current that every hold admits,
// newest first, counted as Admitted counts them; held are the holds that
// keep out a version newer than the first of them. A hold that is no
// semver range (a digest pins the package) admits none, and is held.
func Candidates(tags []versions.Tag, current string, holds []versions.Hold, pre bool) (admitted []versions.Tag, held []versions.Hold) {
	cur, err := semver.NewVersion(current)
	if err != nil {
		return nil, nil
	}
	cs := make([]*semver.Constraints, len(holds))
	for i, h := range holds {
		if cs[i], err = semver.NewConstraint(h.Constraint); err != nil {
			return nil, []versions.Hold{h}
		}
	}
	for _, t := range tags {
		counts, ok := judge(t, cs, pre)
		if !counts || !t.Version.GreaterThan(cur) {
			continue
		}
		if ok {
			admitted = append(admitted, t)
			continue
		}
		if len(admitted) > 0 {
			continue
		}
		for i, c := range cs {
			if !c.Check(t.Version) && !slices.Contains(held, holds[i]) {
				held = append(held, holds[i])
			}
		}
	}
	return admitted, held
}

// judge tells whether t counts as a version (a complete one; a
// pre-release only where pre or the constraints admit it) and whether
// every constraint admits it.
func judge(t versions.Tag, cs []*semver.Constraints, pre bool) (counts, admitted bool) {
	if !Complete(t) {
		return false, false
	}
	admitted = true
	for _, c := range cs {
		if !c.Check(t.Version) {
			admitted = false
			break
		}
	}
	if t.Prerelease() && !pre && (!admitted || len(cs) == 0) {
		return false, false
	}
	return true, admitted
}

// Complete tells a tag that is a complete semantic version: "v1" parses
// as 1.0.0 but need not be it.
func Complete(t versions.Tag) bool {
	return t.Version != nil && t.Version.String() == strings.TrimPrefix(t.Version.Original(), "v")
}

// IsRange tells a constraint that is a semver range.
func IsRange(constraint string) bool {
	_, err := semver.NewConstraint(constraint)
	return err == nil
}

func parse(constraints []string) ([]*semver.Constraints, error) {
	cs := make([]*semver.Constraints, len(constraints))
	for i, s := range constraints {
		c, err := semver.NewConstraint(s)
		if err != nil {
			return nil, &InvalidError{Constraint: s, Err: err}
		}
		cs[i] = c
	}
	return cs, nil
}
