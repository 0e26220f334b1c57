#!/usr/bin/env bash
# Builds and runs the whole test suite: the unit and integration tests built by clang-14 under
# AddressSanitizer + UBSan, the process tests again beside busy loops (scripts/stress.sh), the
# suite again built optimized by GCC 12, then the fuzzer for a bounded time.
# Installs what is missing first. Usage: scripts/test.sh
#   ESCOUADE_FUZZ_SECONDS=60 and ESCOUADE_STRESS_ROUNDS=1 by default
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

fuzz_seconds="${ESCOUADE_FUZZ_SECONDS:-60}"
log_dir="build/test-logs"
mkdir -p "$log_dir"
passed=0
failed=0
: >"$log_dir/failures.txt"  # the failures' own words, printed again last
failures=()  # what failed, a line each, said again after the total: a log's tail then names it

run_ctest() {  # preset: runs it, keeps its log, adds its counts to the totals
  local preset=$1 log="$log_dir/ctest-$1.log" rc=0 line total bad
  ctest --preset "$preset" >"$log" 2>&1 || rc=$?
  line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
  if [ -z "$line" ]; then
    tail -n 40 "$log"
    echo "ctest --preset $preset: no summary (exit $rc)"
    failures+=("ctest --preset $preset: no summary (exit $rc), log $log")
    failed=$((failed + 1))
    return
  fi
  total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  bad=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
  if [ "$bad" -ne 0 ] || [ "$rc" -ne 0 ]; then
    sed -n '/The following tests FAILED/,$p' "$log"
    grep -B2 -A20 -E 'Failure|ERROR: AddressSanitizer|runtime error' "$log" | head -n 120 |
      tee -a "$log_dir/failures.txt" || true
  fi
  echo "ctest --preset $preset: $line"
  while read -r name; do
    [ -n "$name" ] && failures+=("ctest --preset $preset: $name")
  done < <(sed -n '/The following tests FAILED/,$p' "$log" | sed -nE 's/^[[:space:]]*[0-9]+ - (.+)$/\1/p')
  if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then failures+=("ctest --preset $preset: exit $rc"); fi
  passed=$((passed + total - bad))
  failed=$((failed + bad))
  if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then failed=$((failed + 1)); fi
}

# Two builds cover what the suite needs at the least compile time (README): clang-14 with
# AddressSanitizer + UBSan (the whole suite under the sanitizers, clang's warnings as errors), and
# GCC 12 optimized (GCC's warnings as errors, -O2 ones included; the suite again on optimized
# code; what the demo and the benchmarks run). The fuzz build below compiles its two targets only.
stress_rounds="${ESCOUADE_STRESS_ROUNDS:-1}"
early_build=  # the GCC build begun beside the stress round, while it runs
stop_early_build() {
  if [ -n "$early_build" ]; then
    kill "$early_build" 2>/dev/null || true
    wait "$early_build" 2>/dev/null || true
  fi
}
trap stop_early_build EXIT
for preset in asan release; do
  echo "== build: $preset"
  if [ "$preset" = release ] && [ -n "$early_build" ]; then
    # Begun on the second core during the stress round: both cores until it ends. Whatever it
    # could not build (an error), the build below builds again and says.
    taskset -a -p -c "0-$(($(nproc) - 1))" "$early_build" >/dev/null 2>&1 || true
    wait "$early_build" >/dev/null 2>&1 || true
    early_build=
  fi
  cmake --preset "$preset" >"$log_dir/configure-$preset.log"
  cmake --build --preset "$preset"
  run_ctest "$preset"
  if [ "$preset" = asan ] && [ "$stress_rounds" -gt 0 ]; then
    # The stress round keeps the first core busy and leaves the others idle: the GCC build starts
    # on the second one meanwhile, and only there, so that the round's load stays what it is.
    # Fully cold, the whole command took 2651 s so (the round 814 s, the build's rest 6 minutes)
    # against 2728 s one step after the other (the round 613 s, the build 12 minutes; README).
    if [ "$(nproc)" -ge 2 ]; then
      cmake --preset release >"$log_dir/configure-release.log"
      taskset -c 1 ninja -C build/release -j 2 >"$log_dir/build-release-beside-stress.log" 2>&1 &
      early_build=$!
    fi
    # The tests that start processes again, beside busy loops on every core: the timing of a
    # loaded machine, which an idle CI runner never shows (docs/lifetimes.md).
    echo "== stress: the process tests under AddressSanitizer, $stress_rounds rounds on one busy core"
    stress_log="$log_dir/stress.log"
    if scripts/stress.sh --no-build --preset asan --one-core --busy 3 --runs "$stress_rounds" |
        tee "$stress_log"; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      failures+=("stress: $(grep -E '^stress: ' "$stress_log" | tail -n 1)")
      grep -A 12 -E 'ERROR: AddressSanitizer|runtime error|Failure$|Timeout' "$stress_log" |
        head -n 60 >>"$log_dir/failures.txt" || true
      while read -r line; do failures+=("stress: $line"); done < <(grep -E '^  [^ ]+: failed in' "$stress_log")
    fi
  fi
done

echo "== fuzz: libFuzzer on the codec and on the policies, side by side, ${fuzz_seconds} s each"
cmake --preset fuzz >"$log_dir/configure-fuzz.log"
cmake --build --preset fuzz --target fuzz_codec fuzz_policy
declare -A fuzzer work_corpora
for target in codec policy; do
  corpus_dir=tests/fuzz/corpus
  [ "$target" = policy ] && corpus_dir=tests/fuzz/corpus-policy
  work_corpus=$(mktemp -d)
  work_corpora[$target]=$work_corpus
  cp "$corpus_dir"/* "$work_corpus"/
  "build/fuzz/tests/fuzz/fuzz_$target" -max_total_time="$fuzz_seconds" -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$log_dir/fuzz-$target-" "$work_corpus" \
    >"$log_dir/fuzz-$target.log" 2>&1 &
  fuzzer[$target]=$!
done
for target in codec policy; do
  work_corpus=${work_corpora[$target]}
  if wait "${fuzzer[$target]}"; then
    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$log_dir/fuzz-$target.log" || true
    echo "fuzz_$target: no crash in ${fuzz_seconds} s"
    passed=$((passed + 1))
  else
    tail -n 60 "$log_dir/fuzz-$target.log"
    echo "fuzz_$target: FOUND A CRASH (reproducer in $log_dir/fuzz-$target-*)"
    failures+=("fuzz_$target: a crash, reproducer in $log_dir/fuzz-$target-*")
    failed=$((failed + 1))
  fi
  rm -rf "$work_corpus"
done

echo
echo "total: $passed passed, $failed failed"
if [ "$failed" -ne 0 ]; then
  echo "== what failed (the first lines of its output are above and in $log_dir/failures.txt)"
  head -n 60 "$log_dir/failures.txt"
fi
for line in "${failures[@]}"; do echo "failed: $line"; done
[ "$failed" -eq 0 ]
