#!/usr/bin/env bash
# Builds the real Crossplane binary (core init / core start: the package
# manager the end-to-end tests run out of cluster) from the Go module proxy
# (hack/crossplane/VERSION is a scratch module outside the plugin's go.mod,
# one per release the tests run) and caches it by version under hack/bin/,
# so a warm machine skips the build.
#
#   hack/build-crossplane.sh     build it if missing, print the bin directory
#   CROSSPLANE_VERSION           v2.3.4 (default) or v2.4.2: a release with a
#                                module in hack/crossplane/ (checked below)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CROSSPLANE_VERSION=${CROSSPLANE_VERSION:-v2.3.4}
bindir="$here/bin/crossplane-$CROSSPLANE_VERSION"

module="$here/crossplane/$CROSSPLANE_VERSION"
grep -qs "github.com/crossplane/crossplane/v2 $CROSSPLANE_VERSION" "$module/go.mod" ||
  { echo "build-crossplane: no hack/crossplane/$CROSSPLANE_VERSION/go.mod pinning crossplane $CROSSPLANE_VERSION (releases: $(ls "$here/crossplane" | tr '\n' ' '))" >&2; exit 1; }

if [ -x "$bindir/crossplane" ]; then
  echo "$bindir"
  exit 0
fi

# Packages' crossplane.version constraints are checked against this version.
ldflags="-s -w -X=github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$CROSSPLANE_VERSION"

tmp="$bindir.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "build-crossplane: building crossplane $CROSSPLANE_VERSION; the first time only, about 2 minutes on two cores (then cached in hack/bin)" >&2
(
  cd "$module"
  export CGO_ENABLED=0 GOFLAGS=-mod=mod
  go build -trimpath -ldflags "$ldflags" -o "$tmp/crossplane" github.com/crossplane/crossplane/v2/cmd/crossplane
)
rm -rf "$bindir"
mv "$tmp" "$bindir"
trap - EXIT
echo "build-crossplane: built in $(( $(date +%s) - start ))s" >&2
echo "$bindir"
