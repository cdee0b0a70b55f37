#!/usr/bin/env bash
# Brings up the local development environment (kube-apiserver + etcd with
# Crossplane's CRDs, a docker-registry holding the sample packages), runs the
# plugin against it, and prints the lines that point a shell at it.
#
#   hack/dev-env.sh BINARY
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
binary=$(realpath "${1:?usage: hack/dev-env.sh path/to/kubectl-xpkg}")
bindir=$(hack/build-k8s.sh)
exports=$(go run ./hack/devenv up -dir _output/devenv -bin "$bindir" -push-samples)
eval "$exports"

echo
echo "\$ kubectl xpkg version"
PATH="$(dirname "$binary"):$bindir:$PATH" kubectl xpkg version
echo
echo "The environment keeps running. Point a shell at it with:"
echo "$exports"
echo "export PATH=$(dirname "$binary"):$bindir:\$PATH"
echo "Stop it with: make dev-env-down"
