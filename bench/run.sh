#!/usr/bin/env bash
# Runs every benchmark in one go, the raw pipe floor first, so the numbers in
# docs/PERFORMANCE.md sit beside a floor measured on the same machine in the same minute.
# Usage: bench/run.sh [output dir]   (default build/bench-results)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build/bench-results}"
mkdir -p "$out"

cmake --preset release >/dev/null
cmake --build --preset release >"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
bin=build/release/bench

echo "== the floor: one 400-byte line over two pipes, parent <-> child"
for mode in "" "--json"; do
  "$bin/bench_pipe_floor" --iterations 50000 $mode | tee -a "$out/floor.jsonl"
  "$bin/bench_pipe_floor" --stream 500000 $mode | tee -a "$out/floor.jsonl"
done

echo "== the host with real plugin processes (bench_host: calls, facts, decisions, cold start)"
"$bin/bench_host" | tee "$out/host.jsonl"

echo "== an innocent plugin beside a hostile one, all on one core, beside the JSON floor there"
taskset -c 0 "$bin/bench_pipe_floor" --iterations 50000 --json | tee -a "$out/neighbours.jsonl"
taskset -c 0 "$bin/bench_host" neighbours | tee -a "$out/neighbours.jsonl"

echo "== masking secrets in journal lines (bench_mask)"
"$bin/bench_mask" --benchmark_min_time=0.2 --benchmark_out="$out/mask.json" \
  --benchmark_out_format=json | grep -E '^(BM_|Benchmark|---)'

echo "== the codec (median of 5 runs)"
"$bin/bench_codec" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_min_time=0.3 --benchmark_out="$out/codec.json" --benchmark_out_format=json \
  | grep -E 'median|^Benchmark|^---' | sed 's/_median//'
if command -v valgrind >/dev/null; then
  echo "== instructions per message (callgrind; repeatable, unlike wall time on a shared machine)"
  count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin/bench_decode_loop" "$@" 2>&1 \
              | sed -nE 's/.*refs: +([0-9,]+).*/\1/p' | tr -d ,; }
  base=$(count 0)
  decode=$(count 10000)
  checked=$(count 10000 --check)
  echo "frame + decode of a 400-byte fact: $(( (decode - base) / 10000 )) instructions"
  echo "frame + decode + params check:     $(( (checked - base) / 10000 )) instructions"
fi
echo "results in $out"
