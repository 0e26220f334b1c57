#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine as root: installs what is missing, builds
# everything (release preset), then shows the product at work:
#   1. a short working session through escouade-host with the three example plugins: facts,
#      permission requests with their decisions and who made them, a crash and its restart,
#      the journals' last lines;
#   2. plugins run inside Escouade, in its sandbox: the guard in JavaScript (run.js) and built
#      to WebAssembly (run.wasm), and a run.js plugin whose decide handler never ends, stopped
#      at its limit, with the journal's reason; a run.js plugin that notes what git says of an
#      agent's repository, under it (fs/* and proc/*);
#   3. the conformance bench (escouade-plugin test) on each example, and on a plugin that
#      answers too slowly;
#   4. what a call and a decision cost, beside a raw pipe round trip measured now.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
mkdir -p build
echo "== building everything (release preset; log in build/demo-build.log)"
echo "   8 minutes and more on a fresh 2-core machine (the sandbox's engine headers are heavy);"
echo "   a few seconds when nothing changed."
# The build's progress on one line (ninja's [N/M] steps), its whole output in the log.
build_step() {
  local line
  while IFS= read -r line; do
    printf '%s\n' "$line" >>build/demo-build.log
    if [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]]; then
      printf '\r   step %s of %s ' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
    fi
  done
}
: >build/demo-build.log
set +e
{ cmake --preset release && cmake --build --preset release; } 2>&1 | build_step
status=${PIPESTATUS[0]}
set -e
echo
if [[ $status != 0 ]]; then
  tail -n 40 build/demo-build.log
  exit 1
fi

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

== 2. Plugins inside Escouade. A plugin whose manifest says "run": { "js": ... } or
   { "wasm": ... } starts no process of its own: escouade-host runs its module on SpiderMonkey,
   in a locked-down helper process each, 64 MB and 2 s of CPU a turn (500 ms while it decides).
   Played here (scripts/demo/sandbox.jsonl):
   - dev.example.guard-js, the guard in plain JavaScript (examples/guard-js),
   - dev.example.guard, the same C++ guard built to WebAssembly (examples/guard, wasm32-wasi),
   - dev.demo.spinner, a run.js plugin whose decide handler never ends for `make forever`
     (scripts/demo/spinner): its turn is stopped at 500 ms, the decision goes on without it,
     a new instance takes its place, and its journal says why.
TEXT
"$cli" run "$examples/guard-js" "$examples/guard-wasm" scripts/demo/spinner \
  --project billing --data-dir "$work/sandbox-data" --scenario scripts/demo/sandbox.jsonl

cat <<'TEXT'

   escouade-plugin check compiles a sandboxed module as the host does at its load, running
   none of it:
TEXT
"$cli" check "$examples/guard-js"

cat <<'TEXT'

   A run.js plugin that reaches an agent's repository and runs git through Escouade:
   dev.escouade.repo-notes (examples/repo-notes) declares "files": {"agentRepo": "write"} and
   "commands": ["git status --porcelain", "git log *"], nothing else. The app tells the host
   where the agent works (host/agents/set); when the agent's turn ends the plugin runs both
   git commands (word for word, no shell) and writes its note under the repository.
TEXT
repo="$work/repo"
mkdir -p "$repo"
git_demo() {
  GIT_AUTHOR_NAME=Ana GIT_AUTHOR_EMAIL=ana@example.com GIT_COMMITTER_NAME=Ana \
    GIT_COMMITTER_EMAIL=ana@example.com git -C "$repo" "$@"
}
git_demo init -q
echo "total = sum(lines)" >"$repo/invoice.py"
git_demo add invoice.py
git_demo commit -q -m "Invoices: the total of the lines"
echo "tax = 0.2" >"$repo/tax.py"
cat >"$work/files.jsonl" <<JSON
{"comment": "The app says where agent a1 works (host/agents/set)"}
{"agent": {"key": "a1", "project": "billing", "roots": {"agent": "$repo", "agentRepo": "$repo"}, "env": {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}}}
{"comment": "a1's turn ends: repo-notes runs git status --porcelain and git log, then writes its note"}
{"fact": {"name": "turn.ended", "agent": {"id": "a1", "name": "Ana"}, "data": {"end": "done"}}}
{"wait": 1500}
{"journal": {"id": "dev.escouade.repo-notes", "lines": 6}}
JSON
"$cli" run "$examples/repo-notes" --project billing --data-dir "$work/files-data" \
  --scenario "$work/files.jsonl"
echo
echo "   The note it wrote, $repo/ESCOUADE-NOTES.md:"
sed 's/^/   | /' "$repo/ESCOUADE-NOTES.md"

cat <<'TEXT'

   A plugin written in TypeScript with @escouade-dev/plugin (examples/guard-ts): one bundle,
   dist/plugin.mjs, made by escouade-plugin-build. First inside Escouade ("run": {"js": ...}),
   then the very same file as a process under Node ("run": {"command": ["node", ...]}):
TEXT
for kind in guard-ts guard-ts-process; do
  echo
  if [ "$kind" = guard-ts ]; then echo "   -- inside Escouade, run.js"; else echo "   -- under Node, run.command node dist/plugin.mjs"; fi
  "$cli" run "$examples/$kind" --project billing --data-dir "$work/ts-data-$kind" \
    --scenario scripts/demo/typescript.jsonl
done

cat <<'TEXT'

== 3. The conformance bench: escouade-plugin test <folder> plays Escouade's side against a
   plugin and tells, check by check, whether it keeps to protocol 1. First the examples, the
   run.js and run.wasm guards in the sandbox as the host runs them:
TEXT
for example in guard fact-journal notifier guard-js guard-wasm slack repo-notes guard-ts \
  guard-ts-process notifier-ts notifier-ts-process; do
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

== 4. What it costs, measured now on this machine beside the floor (a raw pipe round trip
   that parses and writes the same JSON): a call through the host, then a decision asked of
   1, 5 and 20 plugins at once. docs/PERFORMANCE.md has the full numbers (bench/run.sh).
TEXT
"$build/bench/bench_pipe_floor" --iterations 20000 --json
"$build/bench/bench_host" call
"$build/bench/bench_host" decide
