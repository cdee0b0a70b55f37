package resolve

import (
	"errors"
	"testing"

	"github.com/kubectl-xpkg/kubectl-xpkg/pkg/versions"
)

// The digests of Crossplane's resolver tests.
const (
	digest1 = "sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904"
	digest2 = "sha256:3c25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e04439040"
)

var errInvalid = &InvalidError{}

// TestChooseFollowsCrossplane: the cases of Crossplane's own resolver
// tests (internal/controller/pkg/resolver/reconciler_test.go, the same
// in v2.3.4 and v2.4.2) that choose a version from tags and constraints,
// and the rules of findDependencyVersionToInstall they rest on. The
// update cases that depend on the installed version (UpgradeToSmallestValid,
// ErrorNoValidVersionDowngrade) move a dependency under the alpha
// upgrade flags, which no verb predicts; DowngradeToLargestValid's answer
// is the newest version every constraint admits, which Choose gives.
func TestChooseFollowsCrossplane(t *testing.T) {
	for _, tc := range []struct {
		source      string
		tags        []string
		constraints []string
		want        string
		err         error
	}{
		{"reconciler_test.go: TestReconcile/ErrorInvalidDependency", nil, []string{""}, "", errInvalid},
		{"reconciler_test.go: TestReconcile/ErrorNoValidVersion", []string{"v0.2.0", "v0.3.0", "v1.0.0"}, []string{">v1.0.0"}, "", ErrNoVersion},
		{"reconciler_test.go: TestReconcile/SuccessfulCreateMissingDependency", []string{"v0.2.0", "v0.3.0", "v1.0.0", "v1.2.0"}, []string{">v1.0.0"}, "v1.2.0", nil},
		{"reconciler_test.go: TestReconcile/SuccessfulCreateMissingDependencyWithRejectedTags", []string{"v1.0.0", "v1", "v1.0", "v1.0.1", "v2.0.0", "v2"}, []string{"v1.0.0"}, "v1.0.0", nil},
		{"reconciler_test.go: TestReconcile/SuccessfulCreateMissingDependencyWithDigest", []string{"v0.2.0", "v1.2.0"}, []string{digest1}, digest1, nil},
		{"reconciler_test.go: TestReconcilerFindDependencyVersionToUpgrade/SuccessReturnDigest", nil, []string{digest1, digest1}, digest1, nil},
		{"reconciler_test.go: TestReconcilerFindDependencyVersionToUpgrade/ErrorMixedParentConstraints", nil, []string{digest1, "v0.0.1"}, "", ErrMixedConstraints},
		{"reconciler_test.go: TestReconcilerFindDependencyVersionToUpgrade/SuccessReturnVersion", []string{"v1.0.0", "v1.0.1", "v2.0.0", "v3.0.0"}, []string{">=v1.0.0", "v2.0.0"}, "v2.0.0", nil},
		{"reconciler_test.go: TestReconcilerFindDependencyVersionToUpgrade/ErrorNoValidVersion", []string{"v1.0.0", "v1.0.1"}, []string{">=v1.0.0", "v2.0.0"}, "", ErrNoVersion},
		{"reconciler_test.go: TestReconcilerFindDependencyVersionToUpgrade/DowngradeToLargestValid", []string{"v0.0.1", "v1.0.0", "v2.0.0", "v3.0.0"}, []string{">=v0.0.1", "<v3.0.0"}, "v2.0.0", nil},
		{"reconciler_test.go: TestFindDigestToUpdate/DifferentDigests", nil, []string{digest1, digest2}, "", ErrDifferentDigests},
		{"reconciler_test.go: TestFindDigestToUpdate/MixedConstraintTypes", nil, []string{"v0.0.1", digest1}, "", ErrMixedConstraints},
		// findDependencyVersionToInstall's rules, from reconciler.go.
		{"reconciler.go: semver.NewVersion reads tags without a leading v", []string{"1.4.0", "v1.3.0", "V1.9.0", "01.8.0"}, []string{">=1.0.0"}, "1.4.0", nil},
		{"reconciler.go: incomplete versions are skipped", []string{"v1.2.0", "v1.3", "v2"}, []string{">=1.0.0"}, "v1.2.0", nil},
		{"reconciler.go: semver.Collection, the newest admitted wins", []string{"v1.10.0", "v1.9.0", "v1.2.0"}, []string{"~1"}, "v1.10.0", nil},
		{"reconciler.go: c.Check admits no pre-release a constraint does not name", []string{"v1.0.0", "v1.1.0-rc.1"}, []string{">=1.0.0"}, "v1.0.0", nil},
		{"reconciler.go: c.Check admits a pre-release a constraint names", []string{"v1.0.0", "v1.1.0-rc.1"}, []string{">=1.1.0-0"}, "v1.1.0-rc.1", nil},
		{"reconciler.go: a tag is no constraint", []string{"latest", "v1.0.0"}, []string{"latest"}, "", errInvalid},
		{"reconciler.go: a short sha256 is no digest, and no constraint", []string{"v1.0.0"}, []string{"sha256:abc"}, "", errInvalid},
		{"reconciler.go: of one version tagged twice, the first by name", []string{"v1.0.0", "1.0.0"}, []string{"1.0.0"}, "1.0.0", nil},
	} {
		t.Run(tc.source, func(t *testing.T) {
			got, err := Choose(versions.Sort(tc.tags), tc.constraints)
			var invalid *InvalidError
			switch {
			case tc.err == errInvalid && !errors.As(err, &invalid):
				t.Errorf("Choose(%v, %v): %q %v; want an invalid constraint", tc.tags, tc.constraints, got, err)
			case tc.err != nil && tc.err != errInvalid && !errors.Is(err, tc.err):
				t.Errorf("Choose(%v, %v): %q %v; want %v", tc.tags, tc.constraints, got, err, tc.err)
			case tc.err == nil && (err != nil || got != tc.want):
				t.Errorf("Choose(%v, %v): %q %v; want %q", tc.tags, tc.constraints, got, err, tc.want)
			}
		})
	}
}

// TestPinned: findDigestToUpdate's cases (reconciler_test.go:
// TestFindDigestToUpdate).
func TestPinned(t *testing.T) {
	for name, tc := range map[string]struct {
		constraints []string
		want        string
		err         error
	}{
		"AllSameDigests":       {[]string{digest1, digest1}, digest1, nil},
		"DifferentDigests":     {[]string{digest1, digest2}, "", ErrDifferentDigests},
		"AllVersions":          {[]string{"v0.0.1", "v0.0.2"}, "", nil},
		"MixedConstraintTypes": {[]string{"v0.0.1", digest1}, "", ErrMixedConstraints},
	} {
		got, err := pinned(tc.constraints)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%s: %q %v; want %q %v", name, got, err, tc.want, tc.err)
		}
	}
}

// TestCandidates: the versions a package may move to under its
// dependents' constraints, counted as the resolver counts them.
func TestCandidates(t *testing.T) {
	tags := versions.Sort([]string{"v1.0.0", "v1.1.0", "v1.2.0-rc.1", "v1.5.0", "v2.0.0", "v3", "latest"})
	hold := func(c string) versions.Hold { return versions.Hold{By: "configuration/c", Constraint: c} }
	for _, tc := range []struct {
		current string
		holds   []versions.Hold
		pre     bool
		want    string // "" when nothing newer is admitted
		held    int
	}{
		{"v1.0.0", nil, false, "v2.0.0", 0}, // v3 is no complete version
		{"v1.0.0", []versions.Hold{hold(">=v1.0.0 <v2.0.0")}, false, "v1.5.0", 1},
		{"v1.0.0", []versions.Hold{hold(">=v1.0.0 <v2.0.0"), hold("<v1.2.0")}, false, "v1.1.0", 2},
		{"v1.1.0", []versions.Hold{hold("<v1.2.0")}, true, "", 1}, // the pre-release counts, and is refused too
		{"v1.1.0", []versions.Hold{hold(">=v1.2.0-0 <v1.3.0")}, true, "v1.2.0-rc.1", 1},
		{"v1.1.0", []versions.Hold{hold(">=v1.2.0-0 <v1.3.0")}, false, "v1.2.0-rc.1", 1}, // the constraint names a pre-release
		{"v2.0.0", nil, false, "", 0},
		{"v1.0.0", []versions.Hold{hold("sha256:" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")}, false, "", 1},
		{"sha256:abc", nil, false, "", 0},
	} {
		admitted, held := Candidates(tags, tc.current, tc.holds, tc.pre)
		got := ""
		if len(admitted) > 0 {
			got = admitted[0].Name
		}
		if got != tc.want || len(held) != tc.held {
			t.Errorf("from %s under %v (pre %v): %q held by %v; want %q held by %d", tc.current, tc.holds, tc.pre, got, held, tc.want, tc.held)
		}
	}
}
