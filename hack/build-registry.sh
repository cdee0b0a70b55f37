#!/usr/bin/env bash
# Builds the OCI registry of the local test environment, the CNCF
# distribution registry (cmd/registry, what Docker Hub, Harbor and GitLab
# run), from the Go module proxy (hack/registry is a scratch module outside
# the plugin's go.mod) and caches it by version under hack/bin/, so a warm
# machine skips the build. No registry on PATH is ever used.
#
#   hack/build-registry.sh       build it if missing, print the bin directory
#   REGISTRY_VERSION             must match hack/registry/go.mod (checked below)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
REGISTRY_VERSION=${REGISTRY_VERSION:-v3.0.0}
bindir="$here/bin/registry-$REGISTRY_VERSION"

grep -q "github.com/distribution/distribution/v3 $REGISTRY_VERSION" "$here/registry/go.mod" ||
  { echo "build-registry: hack/registry/go.mod does not pin distribution $REGISTRY_VERSION" >&2; exit 1; }

if [ -x "$bindir/registry" ]; then
  echo "$bindir"
  exit 0
fi

tmp="$bindir.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "build-registry: building the distribution registry $REGISTRY_VERSION; the first time only, about 1 minute on two cores (then cached in hack/bin)" >&2
(
  cd "$here/registry"
  export CGO_ENABLED=0 GOFLAGS=-mod=mod
  go build -trimpath -ldflags "-s -w -X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION" \
    -o "$tmp/registry" github.com/distribution/distribution/v3/cmd/registry
)
rm -rf "$bindir"
mv "$tmp" "$bindir"
trap - EXIT
echo "build-registry: built in $(( $(date +%s) - start ))s" >&2
echo "$bindir"
