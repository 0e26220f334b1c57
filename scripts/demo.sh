#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine as root: installs what is missing, builds
# everything (release preset), then shows the product at work:
#   1. a short working session through escouade-host with the three example plugins: facts,
#      permission requests with their decisions and who made them, a crash and its restart,
#      the journals' last lines;
#   2. the conformance bench (escouade-plugin test) on each example, and on a plugin that
#      answers too slowly;
#   3. what a call and a decision cost, beside a raw pipe round trip measured now.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
mkdir -p build
echo "== building everything (release preset; log in build/demo-build.log)"
{ cmake --preset release && cmake --build --preset release; } >build/demo-build.log 2>&1 \
  || { tail -n 40 build/demo-build.log; exit 1; }

build=build/release
cli="$build/apps/escouade-plugin/escouade-plugin"
examples="$build/examples"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat <<'TEXT'

== 1. A working session. escouade-plugin run starts escouade-host (the host as a program an
   app drives) and plays scripts/demo/session.jsonl to it, as Escouade would:
   - dev.example.guard decides permissions from its rules.json (examples/guard),
   - dev.example.fact-journal keeps a summary of the facts per project (examples/fact-journal),
   - dev.example.notifier prepares a message when a ticket is done, with a secret token and a
     channel setting (examples/notifier).
   Lines starting with a plugin's id are its journal, as the host writes it.
TEXT
"$cli" run "$examples/guard" "$examples/fact-journal" "$examples/notifier" \
  --project billing --data-dir "$work/data" \
  --secret dev.example.notifier:token=xoxb-demo-4f9a2c71 \
  --setting 'dev.example.notifier:channel=#billing' \
  --scenario scripts/demo/session.jsonl

cat <<'TEXT'

== 2. The conformance bench: escouade-plugin test <folder> plays Escouade's side against a
   plugin and tells, check by check, whether it keeps to protocol 1. First the examples:
TEXT
for example in guard fact-journal notifier; do
  echo
  "$cli" test "$examples/$example"
done

cat <<'TEXT'

   Then a plugin that takes 800 ms to decide (past the 500 ms a decision may take): the bench
   names the check, the reason and the message, and exits 1.
TEXT
slow="$work/slow-guard"
mkdir -p "$slow"
cp "$build/apps/escouade-plugin/conformance_fixture" "$slow/plugin"
cat >"$slow/escouade-plugin.json" <<'JSON'
{"id":"dev.demo.slow-guard","version":"0.1.0","name":"Slow guard",
 "run":{"command":["./plugin","slow-decide"]},"activation":["event:agent.status"],
 "permissions":{"events":["agent.status"],"decide":true,"secrets":["token"]}}
JSON
echo '{"deny":["rm -rf"]}' >"$slow/rules.json"
rc=0
"$cli" test "$slow" || rc=$?
echo "(exit code $rc)"

cat <<'TEXT'

== 3. What it costs, measured now on this machine beside the floor (a raw pipe round trip
   that parses and writes the same JSON): a call through the host, then a decision asked of
   1, 5 and 20 plugins at once. docs/PERFORMANCE.md has the full numbers (bench/run.sh).
TEXT
"$build/bench/bench_pipe_floor" --iterations 20000 --json
"$build/bench/bench_host" call
"$build/bench/bench_host" decide
