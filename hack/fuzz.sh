#!/usr/bin/env bash
# Runs every fuzz target's fuzzing engine for a bounded time each (FUZZTIME,
# default 10s): `make fuzz`, which .ci/run runs after `make test`. A failing
# input fails the run and is saved under the package's testdata/fuzz/, where
# every later `make test` runs it (go test runs each target's seed corpus and
# saved inputs as plain tests, deterministically).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10s}

# Each line: <package dir> <target>
targets=$(grep -rl --include='*_test.go' '^func Fuzz' pkg plugin cmd 2>/dev/null |
  xargs grep -H '^func Fuzz' | sed -E 's#^(.*)/[^/]+_test.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#' | sort -u)
[ -n "$targets" ] || { echo "fuzz: no fuzz targets found" >&2; exit 1; }

n=0
while read -r dir target; do
  echo "fuzz: $target in ./$dir for $fuzztime"
  # A short minimisation budget: minimising each new input for the default
  # 60 s stalls a short run.
  out=$(mktemp)
  corpus="$dir/testdata/fuzz/$target"
  inputs() { if [ -d "$corpus" ]; then find "$corpus" -type f | wc -l; else echo 0; fi; }
  before=$(inputs)
  fuzz() { go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -fuzzminimizetime=200x "./$dir" >"$out" 2>&1; }
  # Go's fuzzing coordinator can itself fail as its time runs out, saying
  # only "context deadline exceeded", with no input to blame (nothing new
  # under testdata/fuzz): that is the engine's deadline, not a finding.
  status=0
  fuzz || status=$?
  if [ "$status" -ne 0 ] && grep -qx '    context deadline exceeded' "$out" && [ "$(inputs)" -eq "$before" ]; then
    echo "fuzz: $target: the fuzzing engine hit its own deadline with no failing input (not a failure)"
    status=0
  fi
  if [ "$status" -ne 0 ]; then
    # The whole story, progress lines aside: which input, or which hang.
    grep -v '^fuzz: elapsed' "$out" >&2
    rm -f "$out"
    exit 1
  fi
  tail -n 3 "$out"
  rm -f "$out"
  n=$((n + 1))
done <<< "$targets"
echo "fuzz: $n targets ran without failures"
