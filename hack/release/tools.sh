#!/usr/bin/env bash
# Builds the release tools pinned in hack/tools/go.mod (goreleaser, krew,
# validate-krew-manifest) from the Go module proxy and caches them under
# hack/bin/tools-<hash of hack/tools/go.mod and go.sum>/, so a warm machine
# reuses them and a version bump rebuilds them.
#
#   hack/release/tools.sh          build if missing; print each tool's path
#   hack/release/tools.sh NAME     the same, but print only NAME's path
#
# hack/tools is its own module: its dependencies never reach the plugin's
# go.mod, and `go build ./...` at the root skips it.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
mod="$here/tools"
tools=(goreleaser krew validate-krew-manifest)

key=$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-12)
bindir="$here/bin/tools-$key"

built() {
  local t
  for t in "${tools[@]}"; do
    [ -x "$bindir/$t" ] || return 1
  done
}

build() {
  local tmp="$bindir.tmp.$$" start
  start=$(date +%s)
  echo "tools: building ${tools[*]} from hack/tools/go.mod into hack/bin/tools-$key (cold: ~4 minutes)" >&2
  mkdir -p "$tmp"
  trap "rm -rf '$tmp'" EXIT
  # `tool` is every tool directive of hack/tools/go.mod. krew is left
  # unstamped: a build without a release tag never checks GitHub for updates.
  (cd "$mod" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/" tool)
  # One rename: a concurrent reader never sees a half-filled directory. If a
  # concurrent build got there first, keep its directory.
  if built; then rm -rf "$tmp"; else rm -rf "$bindir" && mv "$tmp" "$bindir"; fi
  trap - EXIT
  echo "tools: built in $(( $(date +%s) - start ))s" >&2
}

if [ $# -gt 1 ] || { [ $# -eq 1 ] && [[ " ${tools[*]} " != *" $1 "* ]]; }; then
  (IFS='|' && echo "usage: $0 [${tools[*]}]" >&2)
  exit 2
fi
built || build
if [ $# -eq 1 ]; then
  echo "$bindir/$1"
else
  for t in "${tools[@]}"; do echo "$bindir/$t"; done
fi
