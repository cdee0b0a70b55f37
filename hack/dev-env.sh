#!/usr/bin/env bash
# Brings up the local development environment (kube-apiserver + etcd with
# Crossplane's CRDs, an OCI registry holding the sample packages), runs the
# plugin against it, and prints the lines that point a shell at it.
#
#   hack/dev-env.sh BINARY
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
binary=$(realpath "${1:?usage: hack/dev-env.sh path/to/kubectl-xpkg}")
bindir=$(hack/build-k8s.sh)
XPKG_REGISTRY_BIN=$(hack/build-registry.sh)
export XPKG_REGISTRY_BIN
exports=$(go run ./hack/devenv up -dir _output/devenv -bin "$bindir" -push-samples)
eval "$exports"

export PATH="$(dirname "$binary"):$bindir:$PATH"
registry=$(sed -n 's/^# registry: \([^ ]*\).*/\1/p' <<<"$exports")
run() { echo; echo "\$ $*"; "$@"; }
run kubectl xpkg version
run kubectl xpkg validate "$registry/crossplane-contrib/provider-nop:v0.4.0" hack/testdata/packages/configuration-aws-network/v0.23.0
run kubectl xpkg extract "$registry/crossplane-contrib/provider-nop:v0.4.0" --only meta
run kubectl xpkg install "$registry/crossplane-contrib/provider-nop:v0.4.0" --dry-run=server
echo
echo "The environment keeps running. Point a shell at it with:"
echo "$exports"
echo "export PATH=$(dirname "$binary"):$bindir:\$PATH"
echo "Packages in its registry: $registry/crossplane-contrib/<name>:<tag> (see hack/testdata)"
echo "Stop it with: make dev-env-down"
