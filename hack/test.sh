#!/usr/bin/env bash
# Runs every test of the repository against a real local environment:
# starts kube-apiserver + etcd (with Crossplane's CRDs) and a docker-registry
# with htpasswd auth on loopback, runs `go test ./...` with $XPKG_TESTENV
# pointing at it, and stops it again, whatever the outcome.
#
#   hack/test.sh BINARY     BINARY is the built kubectl-xpkg the black-box tests run
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
binary=$(realpath "${1:?usage: hack/test.sh path/to/kubectl-xpkg}")
dir=_output/testenv
bindir=$(hack/build-k8s.sh)

go build -o _output/bin/devenv ./hack/devenv
devenv=_output/bin/devenv
"$devenv" down -dir "$dir" >/dev/null
trap '"$devenv" down -dir "$dir" >/dev/null' EXIT
"$devenv" up -dir "$dir" -bin "$bindir" >/dev/null

# Only the state file is exported: tests pick credentials from it explicitly,
# so nothing else of the environment leaks into what the tests observe.
export XPKG_TESTENV="$root/$dir/env.json"
export XPKG_BINARY="$binary"
log=_output/test.log
status=0
# shellcheck disable=SC2086 # GOTESTFLAGS is a list of flags
go test -count=1 -v ${GOTESTFLAGS:-} ./... 2>&1 | tee "$log" || status=$?

# Every parser's fuzz target, for a bounded time each (FUZZTIME).
if [ "$status" -eq 0 ]; then
  hack/fuzz.sh || status=$?
fi

# Stop the environment now, so that the summary below is the last line.
"$devenv" down -dir "$dir" >/dev/null 2>&1 || true
trap - EXIT

passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$log" || true)
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit "$status"
