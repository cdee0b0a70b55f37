// Package resolve reads packages as Crossplane's package manager reads
// them and chooses dependency versions as its resolver does: the Registry
// (ImageConfigs, pull secrets, the user's credentials), meta objects read
// without the rest of a layer, reads shared across a fleet, the dependency
// closure of a package or a set, and the one version choice that
// outdated, plan -f, mirror, upgrade --all and families share.
//
// The version choice follows findDependencyVersionToInstall and
// findDependencyVersionToUpdate in internal/controller/pkg/resolver of
// Crossplane v2.3.4 and v2.4.2 (the same code in both):
//
//   - A constraint that parses as a digest (go-containerregistry's
//     NewHash: "sha256:" and 64 lower-case hex digits) pins that digest;
//     no tag is listed. Anything else must parse as a Masterminds semver
//     constraint, or resolution fails ("version constraint on dependency
//     is invalid"); an empty constraint and a plain tag such as "latest"
//     fail so.
//   - A tag is a version when Masterminds' NewVersion parses it: an
//     optional lower-case "v", one to three numbers without leading
//     zeros, an optional pre-release and build metadata ("1.2.3" counts as
//     "v1.2.3" does, "V1.2.3" and "01.2.3" do not).
//   - To install a missing dependency, only complete versions count: "v1"
//     and "v1.2" parse as 1.0.0 and 1.2.0 but may name other content, and
//     are skipped. Of the rest, the newest the constraint admits is
//     installed, by its tag as written. Of tags that are the same version
//     ("1.0.0" and "v1.0.0", or build metadata apart) the package manager
//     takes either (an unstable sort); this package takes the first by
//     name.
//   - Pre-releases follow Masterminds' Check: a pre-release is admitted
//     only by a constraint whose comparators name a pre-release
//     (">=1.0.0-0", "1.2.0-rc.1"), and then only as its comparison allows.
//   - The dependency is installed with the constraint of the first
//     package in the Lock that needs it. Every parent's constraint counts
//     only with the alpha --enable-dependency-version-upgrades (in both
//     releases; it also drops from resolution the Lock entries of
//     dependencies no constraint admits): a digest among them must
//     be the only one (two digests: "different digests in parent
//     constraints"; a digest and a range: "different types of parent
//     constraints"), and an installed version no constraint admits is
//     moved to the lowest version at or above it that every constraint
//     admits, incomplete versions included; with
//     --enable-dependency-version-downgrades, when there is none, to the
//     highest below it. Without the flags an installed version is never
//     changed: the dependent stays unhealthy.
//
// Simulate follows the resolver step by step over a Lock, with those
// rules and the graph it builds, to where the Lock resolves or stalls
// (the plans' prediction). Choose is the install choice for one
// constraint, and, for a set that must hold every dependent (mirror), for
// several: the digest they all pin, or the newest complete version every
// constraint admits. Admitted and
// Candidates apply the same rules to the versions a user moves a package
// to (outdated, upgrade --all, families), where a package no constraint
// holds admits pre-releases only when asked.
package resolve
