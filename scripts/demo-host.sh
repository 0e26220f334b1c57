#!/usr/bin/env bash
# A short session of escouade-host driven as an app drives it, with three plugins made from
# the test fixture (tests/fixtures/fixture_plugin.cpp): a guard that decides, a plugin that
# crashes at each start, and one that speaks protocol 2. Every line sent (-->) and received
# (<--) is shown. Called by scripts/demo.sh after the release build.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build/release
host_bin="$build/apps/escouade-host/escouade-host"
fixture="$build/tests/fixture_plugin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_plugin() {  # id mode activation-fact
  mkdir -p "$work/$1"
  cp "$fixture" "$work/$1/plugin"
  echo "$2" >"$work/$1/mode"
  cat >"$work/$1/escouade-plugin.json" <<JSON
{"id":"$1","version":"1.0.0","name":"$1","run":{"command":["./plugin"]},
 "activation":["event:$3"],"permissions":{"events":["agent.status","ticket.*"],"decide":true}}
JSON
}
make_plugin dev.demo.guard good agent.status
make_plugin dev.demo.crashy crash ticket.column
make_plugin dev.demo.future wrong-version ticket.column

coproc HOST { "$host_bin" --data-dir "$work/data" --escouade-version 2.1.1 2>"$work/host-stderr.log"; }
next_id=1

# Sends a request and prints every line until its answer (notifications included).
ask() {  # method params-json [comment]
  local id=$next_id
  next_id=$((next_id + 1))
  [ -n "${3:-}" ] && printf '\n# %s\n' "$3"
  local line="{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"$1\",\"params\":$2}"
  printf -- '--> %s\n' "$line"
  printf '%s\n' "$line" >&"${HOST[1]}"
  while IFS= read -r -t 30 reply <&"${HOST[0]}"; do
    printf '<-- %s\n' "$reply"
    case "$reply" in *"\"id\":$id,"*) return 0 ;; esac
  done
  echo "(no answer from escouade-host)"
  return 1
}

# Prints the notifications that came meanwhile, for a moment.
drain() {
  while IFS= read -r -t "${1:-0.3}" reply <&"${HOST[0]}"; do printf '<-- %s\n' "$reply"; done || true
}

project='{"id":"p-7","name":"billing","private":false}'
fact() {  # name seq
  printf '{"fact":{"name":"%s","version":1,"seq":%s,"at":"2026-11-29T09:12:0%sZ","project":%s,"ticket":{"id":"t-19","key":"ESC-12","title":"Retry failed invoices"},"data":{"from":"todo","to":"doing"}}}' \
    "$1" "$2" "$2" "$project"
}
decide() {  # command
  printf '{"id":"dev.demo.guard","method":"permissions/decide","params":{"request":{"id":"r-%s","kind":"command","tool":"Bash","input":{"command":"%s"}},"project":%s}}' \
    "$RANDOM" "$1" "$project"
}

for p in dev.demo.guard dev.demo.crashy dev.demo.future; do
  ask host/load "{\"folder\":\"$work/$p\"}" "Load $p: its manifest is checked; nothing runs yet"
  ask host/enable "{\"id\":\"$p\",\"project\":$project}"
done

ask host/publish "$(fact agent.status 1)" \
  "An agent starts working: the guard's activation names agent.status, so it starts now"
drain 0.5
ask host/call "$(decide 'npm test')" "The agent asks to run npm test: the guard allows it"
ask host/call "$(decide 'rm -rf /')" "The agent asks to run rm -rf /: the guard refuses, and says why"

ask host/publish "$(fact ticket.column 2)" \
  "A ticket moves: it starts the two others. One crashes at each start, one speaks protocol 2"
drain 2

ask host/status '{}' "Their states: the crashing one was restarted 3 times, then stopped at the 4th crash"
ask host/journal '{"id":"dev.demo.crashy","lines":6}' "The end of its journal"
ask host/journal '{"id":"dev.demo.future","lines":3}' "The one that speaks another version"
ask host/restart '{"id":"dev.demo.crashy"}' "The app's Restart button: its crashes forgotten, it starts again (and crashes again)"
drain 1
ask host/shutdown '{}' "Escouade closes: shutdown to each plugin, one second for all, then their processes end"
wait "$HOST_PID" 2>/dev/null || true
printf '\nescouade-host exited. The guard journal, as kept on disk:\n'
sed 's/^/    /' "$work/data/plugin-logs/dev.demo.guard.log"
