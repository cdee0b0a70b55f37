#!/usr/bin/env bash
# Runs every test of the repository against real local servers.
#
# Every test binary that needs a cluster starts its own (testenv.Main):
# etcd and kube-apiserver with Crossplane's CRDs, and an OCI registry with
# htpasswd auth (hack/build-registry.sh), on reserved loopback ports, stopped
# when the binary ends. Packages that run at the same time therefore share no
# state: not the Lock, not a package, not a CRD, not a registry's tags.
#
# Packages whose tests run the real Crossplane package manager (they import
# pkg/testing/crossplane) run once per Crossplane release in
# CROSSPLANE_VERSIONS (each built by hack/build-crossplane.sh), each binary
# against an environment serving that release's CRDs, beside the others.
# A package that must also run under other arguments of `crossplane core
# start` is listed in extra_runs below, as PACKAGE:ARGS: it runs once more per
# release with XPKG_CROSSPLANE_ARGS=ARGS, beside the rest, with a log of its
# own.
#
# Fuzz targets run their seed corpus and saved inputs here, as plain tests;
# `make fuzz` (hack/fuzz.sh) runs the fuzzing engines.
#
#   hack/test.sh BINARY     BINARY is the built kubectl-xpkg the black-box tests run
#   E2E_ONLY=1              only the end-to-end packages (make e2e)
#   CROSSPLANE_VERSIONS     the releases they run against (default: v2.3.4 v2.4.2)
#   TEST_TIMEOUT            go test's -timeout for each run (default 30m): a
#                           hang fails with the test's name and its goroutines
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
binary=$(realpath "${1:?usage: hack/test.sh path/to/kubectl-xpkg}")
XPKG_K8S_BIN=$(hack/build-k8s.sh)
read -r -a releases <<<"${CROSSPLANE_VERSIONS:-v2.3.4 v2.4.2}"
# The package manager's tests find each release's crossplane binary here.
declare -A crossplane_bin
for v in "${releases[@]}"; do
  crossplane_bin[$v]=$(CROSSPLANE_VERSION=$v hack/build-crossplane.sh)
done
XPKG_REGISTRY_BIN=$(hack/build-registry.sh)
timeout=${TEST_TIMEOUT:-30m}
# No environment is shared: a test binary finds none and starts its own.
unset XPKG_TESTENV
export XPKG_K8S_BIN XPKG_REGISTRY_BIN XPKG_BINARY="$binary"

harness=github.com/kubectl-xpkg/kubectl-xpkg/pkg/testing/crossplane
# The packages that run once more per release, under these arguments of
# `crossplane core start` (PACKAGE:ARGS): the plans' predictions are checked
# with and without Crossplane's automatic dependency upgrades too.
extra_runs=(
  "./cmd/kubectl-xpkg/e2e/predict:--enable-dependency-version-upgrades --enable-dependency-version-downgrades"
)
list='{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}'
mapfile -t with_crossplane < <(go list -f "$list" ./... |
  awk -v h="$harness" '{ for (i = 1; i <= NF; i++) if ($i == h) { print $1; next } }')
mapfile -t others < <(go list ./... | grep -vxF -f <(printf '%s\n' "${with_crossplane[@]}"))
[ ${#others[@]} -gt 0 ] || { echo "test: go list found no packages" >&2; exit 1; }

mkdir -p _output
log=_output/test.log
: >"$log"
status=0

# run GO_TEST_ARGS...: one go test run, its output to the terminal and the log.
run() {
  # shellcheck disable=SC2086 # GOTESTFLAGS is a list of flags
  go test -count=1 -v -timeout="$timeout" ${GOTESTFLAGS:-} "$@"
}
# The end-to-end runs, one per release and one more per release and extra
# run, go on beside the other packages: they share nothing, and they spend
# most of their time waiting for the package manager, not on the CPU. Each
# writes a log of its own, shown when it ends.
e2e_pids=() e2e_logs=() e2e_names=()
# background NAME LOG GO_TEST_ARGS...: one end-to-end run, in the background.
background() {
  local name=$1 l=$2
  shift 2
  echo "=== end-to-end tests against $name (in the background, logged to $l)"
  run "$@" >"$l" 2>&1 &
  e2e_pids+=($!) e2e_logs+=("$l") e2e_names+=("$name")
}
# Whatever ends this script ends the runs it started too.
trap 'kill "${e2e_pids[@]}" 2>/dev/null || true' EXIT
if [ ${#with_crossplane[@]} -gt 0 ]; then
  for v in "${releases[@]}"; do
    export XPKG_CROSSPLANE_VERSION=$v XPKG_CROSSPLANE_BIN=${crossplane_bin[$v]}
    XPKG_CROSSPLANE_ARGS='' background "Crossplane $v" "_output/test-e2e-$v.log" "${with_crossplane[@]}"
    for i in "${!extra_runs[@]}"; do
      pkg=${extra_runs[$i]%%:*} args=${extra_runs[$i]#*:}
      XPKG_CROSSPLANE_ARGS=$args background "Crossplane $v $args ($pkg)" "_output/test-e2e-$v-extra$i.log" "$pkg"
    done
  done
  unset XPKG_CROSSPLANE_VERSION XPKG_CROSSPLANE_BIN
fi
# E2E_ONLY=1 (make e2e) runs only the packages that drive the real Crossplane.
if [ "${E2E_ONLY:-}" != 1 ]; then
  run "${others[@]}" 2>&1 | tee -a "$log" || status=$?
fi
for i in "${!e2e_pids[@]}"; do
  wait "${e2e_pids[$i]}" || status=$?
  echo "=== end-to-end tests against ${e2e_names[$i]}" | tee -a "$log"
  tee -a "$log" <"${e2e_logs[$i]}"
done
trap - EXIT

passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$log" || true)
# A failure is named last, with the lines its test printed just before it,
# so that the end of a long run's output says what failed and why.
if [ "$failed" -gt 0 ]; then
  echo "=== failed tests, each with the last lines printed before it (whole output: $log)"
  grep -B12 -E '^\s*--- FAIL' "$log" | cut -c1-300 || true
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit "$status"
