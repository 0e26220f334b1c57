#!/usr/bin/env bash
# Runs the tests that start real processes (ctest label `processes`: the integration tests
# through escouade-host and the C++ API, the conformance bench, the harness, the SDK's examples,
# the process layer) again and again under a sanitizer build, beside busy loops that take every
# core. A loaded machine changes the order in which completions, exits and timers arrive; the
# lifetime faults of docs/lifetimes.md show there and hardly ever on an idle machine.
#
# Usage: scripts/stress.sh [--runs N] [--busy K] [--one-core] [--preset P] [--label L]
#                          [--regex R] [--no-build]
#   --runs N    rounds of the whole label (default 5)
#   --busy K    busy loops beside them (default: one per core)
#   --one-core  the tests and the busy loops all on the first core (taskset): every thread of
#               a test is preempted by the loops, which opens the widest windows
#   --preset P  the build (default asan: AddressSanitizer + UBSan)
#   --label L   the ctest label (default processes)
#   --regex R   only the tests whose name matches R (ctest -R)
#   --no-build  use the build as it is
# It prints, for every test that failed at least once, in how many rounds and the first round
# it failed in; logs go to build/test-logs/stress-<round>.log. Exit 0 only when no round failed.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5
busy=$(nproc)
preset=asan
label=processes
regex=
build=1
pin=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --busy) busy=$2; shift 2 ;;
    --preset) preset=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --regex) regex=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --one-core) pin=(taskset -c 0); shift ;;
    *) echo "stress: unknown option $1 (see the head of $0)" >&2; exit 2 ;;
  esac
done

log_dir=build/test-logs
mkdir -p "$log_dir"
if [ "$build" -eq 1 ]; then
  cmake --preset "$preset" >"$log_dir/configure-$preset.log"
  cmake --build --preset "$preset"
fi

loops=()
stop_loops() {
  for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${loops[@]}"; do wait "$pid" 2>/dev/null || true; done
  loops=()
}
trap stop_loops EXIT
for _ in $(seq 1 "$busy"); do
  "${pin[@]}" yes >/dev/null &
  loops+=($!)
done

filter=(-L "$label")
[ -n "$regex" ] && filter+=(-R "$regex")
declare -A failures first
failed_rounds=0
start=$(date +%s)
for round in $(seq 1 "$runs"); do
  log="$log_dir/stress-$round.log"
  rc=0
  "${pin[@]}" ctest --preset "$preset" "${filter[@]}" >"$log" 2>&1 || rc=$?
  summary=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
  echo "stress round $round/$runs ($busy busy loops${pin:+, one core}): ${summary:-no summary, exit $rc}"
  if [ "$rc" -ne 0 ]; then
    failed_rounds=$((failed_rounds + 1))
    while read -r name; do
      [ -n "$name" ] || continue
      failures[$name]=$((${failures[$name]:-0} + 1))
      [ -n "${first[$name]:-}" ] || first[$name]=$round
    done < <(sed -n '/The following tests FAILED/,$p' "$log" |
               sed -nE 's/^[[:space:]]*[0-9]+ - ([^ ]+) .*/\1/p')
    grep -m 3 -A 12 -E 'ERROR: AddressSanitizer|runtime error|Failure$|Timeout' "$log" || true
  fi
done
stop_loops

echo "stress: $runs rounds in $(( $(date +%s) - start )) s, $failed_rounds failed"
for name in "${!failures[@]}"; do
  echo "  $name: failed in ${failures[$name]} of $runs rounds, first in round ${first[$name]}"
done
[ "$failed_rounds" -eq 0 ]
