#!/usr/bin/env bash
# The peers measured beside the host: the MCP TypeScript SDK and vscode-jsonrpc over stdio
# (bench.mjs). Installs what they need first, from package-lock.json, here and only here: the
# test suite never runs this. Prints only the harness's JSON lines on stdout; apt and npm
# write to stderr.
# Usage: bench/peers/run.sh [--pinned] [bench.mjs options...]
#   --pinned  runs the harness and its server children under `taskset -c 0` (one core)
set -euo pipefail
cd "$(dirname "$0")"

pinned=0
args=()
for a in "$@"; do
  if [[ "$a" == --pinned ]]; then pinned=1; else args+=("$a"); fi
done

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "bench/peers: installing nodejs and npm (Debian packages)" >&2
  { apt-get update && apt-get install -y nodejs npm; } >&2
fi

# node_modules is (re)made from the lockfile when it is missing or was made from another one.
stamp=node_modules/.escouade-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  echo "bench/peers: npm ci" >&2
  npm ci --no-audit --no-fund >&2
  echo "$want" >"$stamp"
fi

if ((pinned)); then
  exec taskset -c 0 node bench.mjs --pinned ${args[@]+"${args[@]}"}
fi
exec node bench.mjs ${args[@]+"${args[@]}"}
