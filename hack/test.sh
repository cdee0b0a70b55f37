#!/usr/bin/env bash
# Runs every test of the repository against a real local environment:
# starts kube-apiserver + etcd (with Crossplane's CRDs) and an OCI registry
# (hack/build-registry.sh) with htpasswd auth on loopback, runs `go test`
# with $XPKG_TESTENV pointing at it, and stops it again, whatever the outcome.
#
# Packages whose tests run the real Crossplane package manager (they import
# pkg/testing/crossplane) get an environment of their own, after the others
# and one package at a time: Crossplane reconciles every package in its
# cluster, and would fight tests that create packages and fake their status.
# They run once per Crossplane release in CROSSPLANE_VERSIONS (each built by
# hack/build-crossplane.sh), each against a fresh environment serving that
# release's CRDs.
#
#   hack/test.sh BINARY     BINARY is the built kubectl-xpkg the black-box tests run
#   E2E_ONLY=1              only the end-to-end packages (make e2e)
#   CROSSPLANE_VERSIONS     the releases they run against (default: v2.3.4 v2.4.2)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
binary=$(realpath "${1:?usage: hack/test.sh path/to/kubectl-xpkg}")
bindir=$(hack/build-k8s.sh)
read -r -a releases <<<"${CROSSPLANE_VERSIONS:-v2.3.4 v2.4.2}"
# The package manager's tests find each release's crossplane binary here.
declare -A crossplane_bin
for v in "${releases[@]}"; do
  crossplane_bin[$v]=$(CROSSPLANE_VERSION=$v hack/build-crossplane.sh)
done
XPKG_REGISTRY_BIN=$(hack/build-registry.sh)
export XPKG_REGISTRY_BIN

go build -o _output/bin/devenv ./hack/devenv
devenv=_output/bin/devenv
dirs=(_output/testenv _output/testenv-crossplane)
down() { for d in "${dirs[@]}"; do "$devenv" down -dir "$d" >/dev/null 2>&1 || true; done; }
down
trap down EXIT

harness=github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane
list='{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}'
mapfile -t with_crossplane < <(go list -f "$list" ./... |
  awk -v h="$harness" '{ for (i = 1; i <= NF; i++) if ($i == h) { print $1; next } }')
mapfile -t others < <(go list ./... | grep -vxF -f <(printf '%s\n' "${with_crossplane[@]}"))
[ ${#others[@]} -gt 0 ] || { echo "test: go list found no packages" >&2; exit 1; }

export XPKG_BINARY="$binary"
log=_output/test.log
: >"$log"
status=0

# phase DIR GO_TEST_ARGS...: a fresh environment in DIR for one go test run.
phase() {
  local dir=$1; shift
  "$devenv" up -dir "$dir" -bin "$bindir" >/dev/null
  # Only the state file is exported: tests pick credentials from it
  # explicitly, so nothing else of the environment leaks into what they see.
  # shellcheck disable=SC2086 # GOTESTFLAGS is a list of flags
  XPKG_TESTENV="$root/$dir/env.json" go test -count=1 -v ${GOTESTFLAGS:-} "$@" 2>&1 | tee -a "$log" || status=$?
  "$devenv" down -dir "$dir" >/dev/null 2>&1 || true
}
# E2E_ONLY=1 (make e2e) runs only the packages that drive the real Crossplane.
if [ "${E2E_ONLY:-}" != 1 ]; then
  phase "${dirs[0]}" "${others[@]}"
fi
if [ ${#with_crossplane[@]} -gt 0 ]; then
  for v in "${releases[@]}"; do
    echo "=== end-to-end tests against Crossplane $v" | tee -a "$log"
    XPKG_CROSSPLANE_VERSION=$v XPKG_CROSSPLANE_BIN=${crossplane_bin[$v]} \
      phase "${dirs[1]}" -p 1 "${with_crossplane[@]}"
  done
fi

# Every parser's fuzz target, for a bounded time each (FUZZTIME).
if [ "$status" -eq 0 ] && [ "${E2E_ONLY:-}" != 1 ]; then
  hack/fuzz.sh || status=$?
fi

# The environments are down already, so the summary below is the last line.
trap - EXIT

passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$log" || true)
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit "$status"
