#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine as root: installs what is missing, builds the
# release preset, and shows what the project does so far, with the example transcripts.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
mkdir -p build
echo "== building (release preset; log in build/demo-build.log)"
{ cmake --preset release && cmake --build --preset release; } >build/demo-build.log 2>&1 \
  || { tail -n 40 build/demo-build.log; exit 1; }

cli=build/release/apps/escouade-plugin/escouade-plugin
bench=build/release/bench

cat <<'TEXT'

== 1. A working session between Escouade (-->) and a guard plugin (<--), checked line by line
   Each line is framed, decoded as JSON-RPC 2.0, checked against protocol 1's schema
   (params of each call, the result of each answer, paired with its request by id).
TEXT
"$cli" lint tests/transcripts/session.jsonl

cat <<'TEXT'

== 2. A faulty plugin: garbage on stdout, a bad initialize answer, wrong params and results,
   an answer to nothing, broken JSON-RPC. Each fault is named; the codec goes on after each.
TEXT
rc=0
"$cli" lint tests/transcripts/faults.jsonl || rc=$?
echo "(exit code $rc: lint fails when it finds a problem, as a CI step would want)"

cat <<'TEXT'

== 3. escouade-host, driven as an app drives it: a guard that decides, a plugin that crashes
   at each start (3 restarts, then stopped), one that speaks protocol 2, then closing.
TEXT
scripts/demo-host.sh

cat <<'TEXT'

== 4. What a call costs, beside a pipe round trip that parses and writes the same JSON (the
   floor), all measured now on this machine: through the C++ API, then from an app through
   escouade-host; then the codec alone
TEXT
"$bench/bench_pipe_floor" --iterations 20000 --json
"$bench/bench_host" call
"$bench/bench_host" app
"$bench/bench_codec" --benchmark_min_time=0.2 \
  --benchmark_filter='frame_and_decode/(fact|decide)|frame_decode_check/(fact|decide)' 2>/dev/null \
  | grep -E '^(frame|Benchmark)'
echo
echo "Full numbers and how they were taken: docs/PERFORMANCE.md (bench/run.sh)."
