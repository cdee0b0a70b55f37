#!/usr/bin/env bash
# Builds the crossplane CLI (cmd/crank of crossplane v1.20.0, the newest
# release whose module holds the CLI: v2 moved it out) from the Go module
# proxy, as make build builds the plugin, and caches it under hack/bin/.
# hack/bench measures startup against it.
#
#   hack/build-crossplane-cli.sh     build it if missing, print its path
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
version=v1.20.0
bin="$here/bin/crossplane-cli-$version/crossplane"

grep -q "github.com/crossplane/crossplane $version" "$here/crossplane-cli/go.mod" ||
  { echo "build-crossplane-cli: hack/crossplane-cli/go.mod does not pin crossplane $version" >&2; exit 1; }

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

tmp="$bin.tmp.$$"
mkdir -p "$(dirname "$bin")"
trap 'rm -f "$tmp"' EXIT
echo "build-crossplane-cli: building the crossplane CLI $version; the first time only, about 2 minutes on two cores" >&2
(
  cd "$here/crossplane-cli"
  export CGO_ENABLED=0 GOFLAGS=-mod=mod
  go build -trimpath -ldflags "-s -w" -o "$tmp" github.com/crossplane/crossplane/cmd/crank
)
mv "$tmp" "$bin"
trap - EXIT
echo "$bin"
