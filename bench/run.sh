#!/usr/bin/env bash
# Runs every benchmark in one go, so that each of the host's figures sits beside its floor,
# measured on the same machine in the same minutes (docs/PERFORMANCE.md).
#
# Usage: bench/run.sh [--rounds R] [--no-build] [--table-only | --retable] [output dir]
#   --rounds R    rounds of the floors and the host's figures (default 5); each round runs every
#                 floor and every figure once pinned (taskset -c 0: host, plugins and children on
#                 one core) and once unpinned, interleaved, and the table gives their medians
#   --no-build    use build/release as it is
#   --table-only  the rounds and their table only (no codec, masking, callgrind, neighbours)
#   --retable     no run: the table again from the output dir's rounds.jsonl (after a change
#                 of how it is computed)
#   output dir    default build/bench-results: rounds.jsonl (every line, with its round and
#                 pinning), table.md (the table printed), and the other sections' files
#
# Needs bash, awk, coreutils, taskset (util-linux): all on a fresh Debian 12. valgrind for the
# instruction counts (optional); node and the peers are installed by bench/peers/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '5,15s/^# \{0,1\}//p' "$0"; }
rounds=5
build=1
table_only=0
retable=0
out=build/bench-results
while (($#)); do
  case $1 in
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --rounds=*) rounds=${1#--rounds=}; shift ;;
    --no-build) build=0; shift ;;
    --table-only) table_only=1; shift ;;
    --retable) retable=1; build=0; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --rounds wants a positive number" >&2; exit 2; }
mkdir -p "$out"

if ((build)); then
  cmake --preset release >/dev/null
  cmake --build --preset release --target bench_pipe_floor bench_floors bench_lean_plugin bench_host bench_codec \
    bench_mask bench_decode_loop bench_malloc bench_net >"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
fi
bin=build/release/bench
plugin=build/release/bench/bench_lean_plugin  # the plugin of bench_host's cold start, its floor's too

if ((!table_only && !retable)); then
  echo "== the floor: one 400-byte line over two pipes, parent <-> child"
  : >"$out/floor.jsonl"
  for mode in "" "--json"; do
    "$bin/bench_pipe_floor" --iterations 50000 $mode | tee -a "$out/floor.jsonl"
    "$bin/bench_pipe_floor" --stream 500000 $mode | tee -a "$out/floor.jsonl"
  done
fi

# ---- the floors and the host's figures, interleaved, pinned and unpinned ----

all_cpus="0-$(($(getconf _NPROCESSORS_ONLN) - 1))"
# Runs a command, and everything it starts, on core 0 ("pinned") or on every core ("unpinned",
# which also undoes a mask this script may have inherited).
run_as() {
  local pin=$1
  shift
  if [[ $pin == pinned ]]; then taskset -c 0 "$@"; else taskset -c "$all_cpus" "$@"; fi
}

# A round: each floor, then the host's figures it is the floor of.
jobs=(
  "$bin/bench_pipe_floor --json --iterations 20000"
  "$bin/bench_host call"
  "$bin/bench_host app"
  "$bin/bench_floors relay"
  "$bin/bench_floors relay --blocking"
  "$bin/bench_floors fanout"
  "$bin/bench_floors fanout --raw"
  "$bin/bench_floors fanout --js bench/plugins/echo.mjs"
  "$bin/bench_host decide"
  "$bin/bench_host decide-mixed"
  "$bin/bench_floors notify"
  "$bin/bench_host facts"
  "$bin/bench_floors pipelined"
  "$bin/bench_host pipelined"
  "$bin/bench_floors spawn $plugin"
  "$bin/bench_host cold"
  "$bin/bench_host sandbox"
  "$bin/bench_host services 400"
  "$bin/bench_net --rounds 1 --iterations 100"
  "$bin/bench_malloc"
)

if ((retable)); then
  [[ -s $out/rounds.jsonl ]] || { echo "run.sh: no $out/rounds.jsonl to take the table from" >&2; exit 2; }
  rounds=$(grep -o '"round":[0-9]*' "$out/rounds.jsonl" | cut -d: -f2 | sort -n | tail -n 1)
  load_before="(not recorded)"
  load_after="(not recorded)"
else
  echo "== the floors and the host, $rounds rounds, each pinned and unpinned"
  : >"$out/rounds.jsonl"
  : >"$out/rounds.stderr"
  trap 'echo "run.sh: a benchmark failed; the end of $out/rounds.stderr:" >&2
        tail -n 20 "$out/rounds.stderr" >&2' ERR
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  for ((r = 1; r <= rounds; r++)); do
    for pin in pinned unpinned; do
      echo "   round $r of $rounds, $pin"
      for job in "${jobs[@]}"; do
        # shellcheck disable=SC2086  # a job is a command line of words without spaces
        run_as "$pin" $job 2>>"$out/rounds.stderr" |
          sed "s/^{/{\"round\":$r,\"pin\":\"$pin\",/" >>"$out/rounds.jsonl"
      done
    done
  done
  trap - ERR
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
fi

# The table's rows: measure | floor's line (a literal part of it) | its field | the host's line |
# its field | how they compare | target.
#   time  ours / floor (latencies: below 1.50x is within 1.5 times the floor's time)
#   rate  ours / floor (rates: above 0.60x is at least 0.6 times the floor's rate)
#   diff  ours - floor, in ms
#   limit N  ours / N, N a bound of the same unit (not measured: the floor's line is "-")
# Targets: the ratios issue 32 asks for (docs/PERFORMANCE.md).
rows() {
  cat <<'EOF'
decision asked of 100 plugins, p50|"bench":"floor_fanout","mode":"json","children":100,|p50_us|"bench":"host_decide","plugins":100,|p50_us|time|≤ 1.30×
decision asked of 100 plugins, p99|"bench":"floor_fanout","mode":"json","children":100,|p99_us|"bench":"host_decide","plugins":100,|p99_us|time|—
decision asked of 20 plugins, p50|"bench":"floor_fanout","mode":"json","children":20,|p50_us|"bench":"host_decide","plugins":20,|p50_us|time|≤ 1.30×
decision asked of 20 plugins, p99|"bench":"floor_fanout","mode":"json","children":20,|p99_us|"bench":"host_decide","plugins":20,|p99_us|time|—
decision asked of 5 plugins, p50|"bench":"floor_fanout","mode":"json","children":5,|p50_us|"bench":"host_decide","plugins":5,|p50_us|time|≤ 1.30×
decision asked of 5 plugins, p99|"bench":"floor_fanout","mode":"json","children":5,|p99_us|"bench":"host_decide","plugins":5,|p99_us|time|—
decision asked of 1 plugin, p50|"bench":"floor_fanout","mode":"json","children":1,|p50_us|"bench":"host_decide","plugins":1,|p50_us|time|—
decision asked of 100 plugins, a quarter sandboxed, p50 (floor: fan-out to 100)|"bench":"floor_fanout","mode":"json","children":100,|p50_us|"bench":"host_decide_mixed","plugins":100,|p50_us|time|≤ 1.30×
decision asked of 100 plugins, a quarter sandboxed, p99|"bench":"floor_fanout","mode":"json","children":100,|p99_us|"bench":"host_decide_mixed","plugins":100,|p99_us|time|—
decision asked of 20 plugins, a quarter sandboxed, p50 (floor: fan-out to 20)|"bench":"floor_fanout","mode":"json","children":20,|p50_us|"bench":"host_decide_mixed","plugins":20,|p50_us|time|≤ 1.30×
decision asked of 20 plugins, a quarter sandboxed, p99|"bench":"floor_fanout","mode":"json","children":20,|p99_us|"bench":"host_decide_mixed","plugins":20,|p99_us|time|—
decision asked of 5 plugins, one sandboxed, p50 (floor: fan-out to 5)|"bench":"floor_fanout","mode":"json","children":5,|p50_us|"bench":"host_decide_mixed","plugins":5,|p50_us|time|≤ 1.30×
decision asked of 5 plugins, one sandboxed, p99|"bench":"floor_fanout","mode":"json","children":5,|p99_us|"bench":"host_decide_mixed","plugins":5,|p99_us|time|—
the fan-out to 100, a quarter of the children the same bundle run by Node, p50 (floor: fan-out to 100)|"bench":"floor_fanout","mode":"json","children":100,|p50_us|"bench":"floor_fanout","mode":"json-quarter-node","children":100,|p50_us|time|—
the fan-out to 20, a quarter of the children by Node, p50 (floor: fan-out to 20)|"bench":"floor_fanout","mode":"json","children":20,|p50_us|"bench":"floor_fanout","mode":"json-quarter-node","children":20,|p50_us|time|—
the fan-out to 5, one of the children by Node, p50 (floor: fan-out to 5)|"bench":"floor_fanout","mode":"json","children":5,|p50_us|"bench":"floor_fanout","mode":"json-quarter-node","children":5,|p50_us|time|—
decision asked of 100 plugins, a quarter sandboxed, p50 (floor: fan-out to 100, a quarter of it by Node)|"bench":"floor_fanout","mode":"json-quarter-node","children":100,|p50_us|"bench":"host_decide_mixed","plugins":100,|p50_us|time|—
decision asked of 20 plugins, a quarter sandboxed, p50 (floor: fan-out to 20, a quarter of it by Node)|"bench":"floor_fanout","mode":"json-quarter-node","children":20,|p50_us|"bench":"host_decide_mixed","plugins":20,|p50_us|time|—
decision asked of 5 plugins, one sandboxed, p50 (floor: fan-out to 5, one of it by Node)|"bench":"floor_fanout","mode":"json-quarter-node","children":5,|p50_us|"bench":"host_decide_mixed","plugins":5,|p50_us|time|—
facts to one plugin (facts it read /s; floor: batched)|"bench":"floor_notify","writes":"batched",|lines_per_s|"bench":"host_facts","plugins":1,|deliveries_per_s|rate|≥ 0.60×
facts to 10 plugins (deliveries/s; same floor)|"bench":"floor_notify","writes":"batched",|lines_per_s|"bench":"host_facts","plugins":10,|deliveries_per_s|rate|≥ 0.60×
a call through the C++ API, p50 (floor: JSON ping-pong)|"bench":"pipe_floor","mode":"json",|p50_us|"bench":"host_call_api",|p50_us|time|≤ 1.20×
a call through the C++ API, p99|"bench":"pipe_floor","mode":"json",|p99_us|"bench":"host_call_api",|p99_us|time|—
a call through escouade-host, p50 (floor: the relay in epoll)|"bench":"floor_relay","middle":"epoll",|p50_us|"bench":"host_call_app",|p50_us|time|≤ 1.30×
a call through escouade-host, p99 (floor: the relay in epoll)|"bench":"floor_relay","middle":"epoll",|p99_us|"bench":"host_call_app",|p99_us|time|—
a call through escouade-host, p50 (floor: JSON ping-pong)|"bench":"pipe_floor","mode":"json",|p50_us|"bench":"host_call_app",|p50_us|time|—
a relay in epoll that does nothing, p50 (floor: JSON ping-pong)|"bench":"pipe_floor","mode":"json",|p50_us|"bench":"floor_relay","middle":"epoll",|p50_us|time|—
a relay that blocks and does nothing, p50 (floor: JSON ping-pong)|"bench":"pipe_floor","mode":"json",|p50_us|"bench":"floor_relay","middle":"blocking",|p50_us|time|—
256 calls in flight, C++ API (calls/s)|"bench":"floor_pipelined","answers":"one_write_each",|calls_per_s|"bench":"host_pipelined_api",|calls_per_s|rate|≥ 0.50×
256 calls in flight, escouade-host (calls/s)|"bench":"floor_pipelined","answers":"one_write_each",|calls_per_s|"bench":"host_pipelined_app",|calls_per_s|rate|≥ 0.30×
cold start: spawn to the first call's answer, p50|"bench":"floor_spawn",|p50_ms|"bench":"cold_start",|p50_ms|diff|≤ +0.30 ms
a call to a run.js plugin in the sandbox, p50 (floor: the same bundle run by Node as a process)|"bench":"sandbox_call",|node_p50_us|"bench":"sandbox_call",|sandbox_p50_us|time|≤ 1.00×
the same call, p99 (floor: by Node)|"bench":"sandbox_call",|node_p99_us|"bench":"sandbox_call",|sandbox_p99_us|time|—
the same call, p50 (floor: a C++ plugin as a process)|"bench":"sandbox_call",|process_p50_us|"bench":"sandbox_call",|sandbox_p50_us|time|—
the same call, p50 (floor: JSON ping-pong)|"bench":"pipe_floor","mode":"json",|p50_us|"bench":"sandbox_call",|sandbox_p50_us|time|—
a decision of one run.js plugin, p50 (floor: by Node)|"bench":"sandbox_decide",|node_p50_us|"bench":"sandbox_decide",|sandbox_p50_us|time|≤ 1.00×
a decision of one run.js plugin, p99 (floor: by Node)|"bench":"sandbox_decide",|node_p99_us|"bench":"sandbox_decide",|sandbox_p99_us|time|—
a decision of the TypeScript guard (the SDK's bundle) in the sandbox, p50 (floor: the same bundle by Node)|"bench":"sandbox_ts_decide",|node_p50_us|"bench":"sandbox_ts_decide",|sandbox_p50_us|time|≤ 1.00×
the same decision, p99 (floor: by Node)|"bench":"sandbox_ts_decide",|node_p99_us|"bench":"sandbox_ts_decide",|sandbox_p99_us|time|—
a decision of the TypeScript guard with an async handler in the sandbox, p50 (floor: the same bundle by Node)|"bench":"sandbox_ts_decide",|async_node_p50_us|"bench":"sandbox_ts_decide",|async_sandbox_p50_us|time|≤ 1.00×
the same decision, p99 (floor: by Node)|"bench":"sandbox_ts_decide",|async_node_p99_us|"bench":"sandbox_ts_decide",|async_sandbox_p99_us|time|—
a decision of the guard as run.wasm, p50 (floor: the guard as a process)|"bench":"sandbox_wasm_decide",|process_p50_us|"bench":"sandbox_wasm_decide",|sandbox_p50_us|time|≤ 1.00×
a decision of the guard as run.wasm, p99 (floor: as a process)|"bench":"sandbox_wasm_decide",|process_p99_us|"bench":"sandbox_wasm_decide",|sandbox_p99_us|time|—
a decision of the guard as run.wasm while Ion compiles it after its start, p99 (floor: as a process)|"bench":"sandbox_wasm_decide",|process_p99_us|"bench":"sandbox_wasm_decide",|tiering_p99_us|time|—
the guard's plugin.wasm run by Node's WASI as a process, p50 (floor: the guard as a process)|"bench":"sandbox_wasm_decide",|process_p50_us|"bench":"sandbox_wasm_decide",|node_wasi_p50_us|time|—
a decision of the guard as run.wasm, p50 (floor: its plugin.wasm by Node's WASI as a process)|"bench":"sandbox_wasm_decide",|node_wasi_p50_us|"bench":"sandbox_wasm_decide",|sandbox_p50_us|time|—
cold start of a run.js instance, cached, a spare helper ready, p50 (floor: by Node)|"bench":"sandbox_cold_start",|node_p50_ms|"bench":"sandbox_cold_start",|cached_p50_ms|diff|≤ +0.00 ms
cold start of a run.js instance, cached, no spare helper, p50 (floor: by Node)|"bench":"sandbox_cold_start",|node_p50_ms|"bench":"sandbox_cold_start",|no_spare_p50_ms|diff|—
cold start of a run.js instance, its bundle compiled, p50 (floor: by Node)|"bench":"sandbox_cold_start",|node_p50_ms|"bench":"sandbox_cold_start",|compiled_p50_ms|diff|—
cold start of a run.js instance, cached, p50 (floor: a C++ plugin as a process)|"bench":"sandbox_cold_start",|process_p50_ms|"bench":"sandbox_cold_start",|cached_p50_ms|diff|—
cold start of a run.js instance of a ~1 MB bundle, cached (floor: by Node)|"bench":"sandbox_large_bundle",|node_p50_ms|"bench":"sandbox_large_bundle",|cached_p50_ms|diff|≤ +0.00 ms
cold start of a run.js instance of a ~1 MB bundle, cached (floor: compiled by the start)|"bench":"sandbox_large_bundle",|compiled_p50_ms|"bench":"sandbox_large_bundle",|cached_p50_ms|diff|—
cold start of a run.js instance of a ~1 MB bundle, called right after its load, from the load (floor: compiled by the start alone)|"bench":"sandbox_large_bundle",|compiled_p50_ms|"bench":"sandbox_large_bundle",|loaded_p50_ms|diff|—
cold start of the guard as run.wasm, p50 (floor: as a process)|"bench":"sandbox_wasm_cold_start",|process_p50_ms|"bench":"sandbox_wasm_cold_start",|wasm_p50_ms|diff|—
an idle run.js plugin: private memory of its helper and of the host, in all|"bench":"sandbox_idle_instance",|-|"bench":"sandbox_idle_instance",|private_in_all_kb|limit 8192|≤ 8 MB
net/fetch of a run.js plugin through the host, p50 (floor: the same GET, direct, on a kept-alive connection)|"figure":"fetch",|direct_kept_p50_us|"figure":"fetch",|host_p50_us|time|≤ 1.20×
net/fetch of a run.js plugin through the host, p99 (floor: direct, kept alive)|"figure":"fetch",|direct_kept_p99_us|"figure":"fetch",|host_p99_us|time|—
the host's HTTP client alone, p50 (floor: direct, kept alive)|"figure":"fetch",|direct_kept_p50_us|"figure":"fetch",|client_p50_us|time|—
the same GET asked of this program by a child process over pipes, p50 (floor: direct, kept alive)|"figure":"fetch",|direct_kept_p50_us|"figure":"fetch",|asked_p50_us|time|—
net/fetch of a run.js plugin through the host, p50 (floor: the same GET asked by a child process)|"figure":"fetch",|asked_p50_us|"figure":"fetch",|host_p50_us|time|—
net/fetch of a run.js plugin through the host, p50 (floor: the same bundle run by Node as a process, its fetch Node's)|"figure":"fetch",|node_p50_us|"figure":"fetch",|host_p50_us|time|—
the same bundle by Node as a process, its fetch Node's, p50 (floor: direct, kept alive)|"figure":"fetch",|direct_kept_p50_us|"figure":"fetch",|node_p50_us|time|—
net/fetch of a run.js plugin through the host, p50 (floor: direct, a new TLS connection)|"figure":"fetch",|direct_p50_us|"figure":"fetch",|host_p50_us|time|—
net/stream of 32 MiB drained by a run.js plugin, 256 KiB of credit (MB/s; floor: read directly)|"figure":"stream",|direct_mb_s|"figure":"stream",|host_mb_s|rate|≥ 0.50×
fs/read of a 256 KiB file by a run.js plugin, p50 (floor: read directly, C++)|"bench":"services_fs_read",|direct_p50_us|"bench":"services_fs_read",|sandbox_p50_us|time|—
the same, p50 (floor: the same plugin under Node, reading it itself)|"bench":"services_fs_read",|node_direct_p50_us|"bench":"services_fs_read",|sandbox_p50_us|time|—
the same, p99 (floor: by Node, itself)|"bench":"services_fs_read",|node_direct_p99_us|"bench":"services_fs_read",|sandbox_p99_us|time|—
fs/read by the plugin under Node, through the host, p50 (floor: by Node, itself)|"bench":"services_fs_read",|node_direct_p50_us|"bench":"services_fs_read",|node_host_p50_us|time|—
proc/spawn of true to its proc/exit by a run.js plugin, p50 (floor: posix_spawn and waitpid, C++)|"bench":"services_spawn",|direct_p50_us|"bench":"services_spawn",|sandbox_p50_us|time|—
the same, p50 (floor: the same plugin under Node, spawning it itself)|"bench":"services_spawn",|node_direct_p50_us|"bench":"services_spawn",|sandbox_p50_us|time|—
the same, p99 (floor: by Node, itself)|"bench":"services_spawn",|node_direct_p99_us|"bench":"services_spawn",|sandbox_p99_us|time|—
proc/spawn by the plugin under Node, through the host, p50 (floor: by Node, itself)|"bench":"services_spawn",|node_direct_p50_us|"bench":"services_spawn",|node_host_p50_us|time|—
malloc/free of 64 B charged to an account (floor: glibc's own)|"bench":"malloc_account",|glibc_ns|"bench":"malloc_account",|replaced_charged_ns|time|—
malloc/free of 64 B on a thread without an account (floor: glibc's own)|"bench":"malloc_account",|glibc_ns|"bench":"malloc_account",|replaced_no_account_ns|time|—
EOF
}

table() {
  awk -F'|' -v rounds="$rounds" -v load_before="$load_before" -v load_after="$load_after" '
    # The number after "key": in a JSON line, or "" when the line has no such field.
    function field(line, key,   m) {
      if (!match(line, "\"" key "\":-?[0-9.]+([eE][-+]?[0-9]+)?")) return ""
      m = substr(line, RSTART, RLENGTH)
      sub(/^"[^"]*":/, "", m)
      return m
    }
    function median(list,   n, a, i, j, t) {
      n = split(list, a, " ")
      if (n == 0) return ""
      for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function shown(v, key) {
      if (v == "") return "?"
      if (key ~ /_us$/) return sprintf("%.1f µs", v)
      if (key ~ /_ms$/) return sprintf("%.2f ms", v)
      if (key ~ /_ns$/) return sprintf("%.1f ns", v)
      if (key ~ /_kb$/) return sprintf("%.2f MB", v / 1024)
      if (key ~ /_mb_s$/) return sprintf("%.1f MB/s", v)
      if (v >= 1e6) return sprintf("%.2f M/s", v / 1e6)
      return sprintf("%.1f k/s", v / 1e3)
    }
    function compared(kind, floor, ours) {
      if (floor == "" || ours == "" || floor + 0 == 0 || ours + 0 == 0) return "?"
      if (kind == "time") return sprintf("%.2f×", ours / floor)
      if (kind == "rate" || kind ~ /^limit/) return sprintf("%.2f×", ours / floor)
      return sprintf("%+.2f ms", ours - floor)
    }
    # The ratio of each round (ours / floor, or ours - floor for a "diff"), space-separated: each
    # round measures its floor and ours minutes apart, in one state of the machine.
    function round_ratios(i, pin, kind,   r, list, fl, ou) {
      list = ""
      for (r = 1; r <= rounds; r++) {
        fl = floor_r[i, pin, r]; ou = ours_r[i, pin, r]
        if (fl == "" || ou == "" || fl + 0 == 0 || ou + 0 == 0) continue
        list = list " " (kind == "diff" ? ou - fl : ou / fl)
      }
      return list
    }
    # Their lowest and highest, as "lowest-highest": how far one run may stray from the medians
    # on a shared machine.
    function spread(i, pin, kind,   n, x, k, lo, hi) {
      n = split(round_ratios(i, pin, kind), x, " ")
      if (n == 0) return "?"
      lo = x[1]; hi = x[1]
      for (k = 2; k <= n; k++) {
        if (x[k] + 0 < lo + 0) lo = x[k]
        if (x[k] + 0 > hi + 0) hi = x[k]
      }
      if (kind == "diff") return sprintf("%+.2f to %+.2f ms", lo, hi)
      return sprintf("%.2f-%.2f×", lo, hi)
    }
    # Their median: the medians of all rounds may take the floor from a fast round and ours from
    # a slow one (this VM moves between the two for minutes at a time), a round cannot.
    function paired(i, pin, kind,   list) {
      list = round_ratios(i, pin, kind)
      if (list == "") return "?"
      if (kind == "diff") return sprintf("%+.2f ms", median(list))
      return sprintf("%.2f×", median(list))
    }
    FNR == NR { row[++rows] = $0; next }  # the rows, then the lines of the rounds
    {
      pin = index($0, "\"pin\":\"pinned\"") ? "pinned" : "unpinned"
      r = field($0, "round")
      for (i = 1; i <= rows; i++) {
        split(row[i], f, "|")
        if (index($0, f[2]) && (v = field($0, f[3])) != "") {
          floor[i, pin] = floor[i, pin] " " v
          floor_r[i, pin, r] = v
        }
        if (index($0, f[4]) && (v = field($0, f[5])) != "") {
          ours[i, pin] = ours[i, pin] " " v
          ours_r[i, pin, r] = v
          if (f[6] ~ /^limit /) {  # the bound stands for the floor, in each round
            floor[i, pin] = floor[i, pin] " " substr(f[6], 7)
            floor_r[i, pin, r] = substr(f[6], 7)
          }
        }
      }
    }
    END {
      printf "Medians of %d rounds; load average %s before, %s after.\n", rounds, load_before, load_after
      printf "ratio: ours / floor, of times (lower is better) and of rates (higher is better);\n"
      printf "paired: the median of the rounds'"'"' own ratios (each round pairs its floor and ours);\n"
      printf "ratio by round: the lowest and the highest of the rounds taken one by one.\n"
      for (p = 1; p <= 2; p++) {
        pin = p == 1 ? "pinned" : "unpinned"
        printf "\n%s\n\n", pin == "pinned" ? "Pinned (taskset -c 0: the whole tree on one core)" : "Unpinned"
        print "| measure | floor | ours | ratio | paired | ratio by round | target |"
        print "|---|---|---|---|---|---|---|"
        for (i = 1; i <= rows; i++) {
          split(row[i], f, "|")
          fl = median(floor[i, pin]); ou = median(ours[i, pin])
          printf "| %s | %s | %s | %s | %s | %s | %s |\n", f[1], shown(fl, f[6] ~ /^limit / ? f[5] : f[3]), shown(ou, f[5]),
                 compared(f[6], fl, ou), paired(i, pin, f[6]), spread(i, pin, f[6]), f[7]
        }
      }
    }' <(rows) "$out/rounds.jsonl"
}

table | tee "$out/table.md"
if ((retable)); then exit 0; fi

# ---- peers: the same measures of other stacks (MCP SDK ...), added by bench/peers/run.sh ----
# It prints JSON lines like {"bench":"peer","peer":"mcp-sdk","measure":"call","p50_us":..}.
# Its lines go beside the table above (docs/PERFORMANCE.md puts them in one).
if [[ -f bench/peers/run.sh ]]; then  # it installs node and the peers (npm ci) when missing
  echo "== peers (bench/peers/run.sh), pinned then unpinned"
  : >"$out/peers.jsonl"
  for pin in pinned unpinned; do
    flag=()
    [[ $pin == pinned ]] && flag=(--pinned)
    bash bench/peers/run.sh "${flag[@]}" | sed "s/^{/{\"pin\":\"$pin\",/" | tee -a "$out/peers.jsonl"
  done
fi
# ---- end of peers ----

if ((table_only)); then
  echo "results in $out"
  exit 0
fi

echo "== the host's memory per loaded, idle plugin (bench_host idle)"
"$bin/bench_host" idle | tee "$out/host.jsonl"

echo "== an innocent plugin beside a hostile one, all on one core, beside the JSON floor there"
: >"$out/neighbours.jsonl"
taskset -c 0 "$bin/bench_pipe_floor" --iterations 50000 --json | tee -a "$out/neighbours.jsonl"
taskset -c 0 "$bin/bench_host" neighbours | tee -a "$out/neighbours.jsonl"

echo "== the network of a sandboxed plugin, beside the same requests made directly (bench_net)"
"$bin/bench_net" --rounds "$rounds" | tee "$out/net.jsonl"

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
