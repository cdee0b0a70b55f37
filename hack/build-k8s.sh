#!/usr/bin/env bash
# Builds kube-apiserver, etcd, kubectl and kube-controller-manager for the
# local test cluster from the Go module proxy (hack/k8s is a scratch module
# outside the plugin's go.mod) and caches them by version under hack/bin/, so
# a warm machine skips the build; only missing binaries are built.
#
#   hack/build-k8s.sh            build what is missing, print the bin directory
#   K8S_VERSION, ETCD_VERSION    must match hack/k8s/go.mod (checked below)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=${K8S_VERSION:-v1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.8}
bindir="$here/bin/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"

grep -q "k8s.io/kubernetes $K8S_VERSION" "$here/k8s/go.mod" ||
  { echo "build-k8s: hack/k8s/go.mod does not pin k8s.io/kubernetes $K8S_VERSION" >&2; exit 1; }
grep -q "go.etcd.io/etcd/server/v3 $ETCD_VERSION" "$here/k8s/go.mod" ||
  { echo "build-k8s: hack/k8s/go.mod does not pin etcd $ETCD_VERSION" >&2; exit 1; }

k8s_cmds=()
missing=()
for b in kube-apiserver kubectl kube-controller-manager etcd; do
  [ -x "$bindir/$b" ] && continue
  missing+=("$b")
  [ "$b" = etcd ] || k8s_cmds+=("k8s.io/kubernetes/cmd/$b")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "$bindir"
  exit 0
fi

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ver="k8s.io/component-base/version"
cgo="k8s.io/client-go/pkg/version"
ldflags="-s -w"
for p in "$ver" "$cgo"; do
  ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

tmp="$bindir.tmp.$$"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "build-k8s: building ${missing[*]} ($K8S_VERSION, etcd $ETCD_VERSION); the first time only, about 4 minutes on two cores (then cached in hack/bin)" >&2
(
  cd "$here/k8s"
  export CGO_ENABLED=0 GOFLAGS=-mod=mod
  if [ ${#k8s_cmds[@]} -gt 0 ]; then
    go build -trimpath -ldflags "$ldflags" -o "$tmp/" "${k8s_cmds[@]}"
  fi
  if [ ! -x "$bindir/etcd" ]; then
    go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
  fi
)
# One rename per binary: a running environment never sees a half-filled dir.
mkdir -p "$bindir"
for b in "${missing[@]}"; do
  mv "$tmp/$b" "$bindir/$b"
done
rm -rf "$tmp"
trap - EXIT
echo "build-k8s: built in $(( $(date +%s) - start ))s" >&2
echo "$bindir"
