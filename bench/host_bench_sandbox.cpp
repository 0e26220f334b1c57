// bench_host's sandbox figures (issue 26, point 8), each beside the same work of the same plugin
// run as a process: bench/plugins/echo.mjs in the sandbox (a helper process per plugin), the same
// bundle run by Node as a process (`node plugin.mjs`), and the fixture plugin's good mode (C++);
// the guard example built as a process and as run.wasm from the same sources.
//   a call's round trip (test/echo, the ~400-byte payload), p50/p99
//   a decision's round trip (one plugin's permissions/decide through host.call), p50/p99
//   cold start: from the call that starts the plugin to its answer, p50/p99: its bundle's
//     stencil kept (the load's compile over before the call) with a spare helper ready (a pause
//     outside the clock lets the next one start), without spares (each start starts its helper),
//     and a bundle changed before each start and not compiled at load (compiled by the start)
//   memory per idle sandboxed plugin: what each of 20 running, idle instances holds by its own
//     account, each helper's private and proportional memory (/proc/<pid>/smaps_rollup), and
//     the host's resident memory that 20 more add
//   a large bundle (echo.mjs and ~1 MB of functions): cold start, kept and compiled
//   run.wasm: the guard example as a process and as run.wasm: a decision's round trip, p50/p99,
//     right after the start (Ion's compile still running beside it) and once Ion's code runs;
//     cold start (each instance compiles its module: the engine cannot keep compiled wasm); and
//     the same plugin.wasm run as a process by Node's WASI (bench/plugins/wasi-node.mjs): what
//     the module costs on another engine, with no sandbox around it
//   ts: the guard written with the TypeScript SDK (examples/guard-ts), and its twin whose
//     handler is async (bench/plugins/guard-ts-async), each bundle in the sandbox and under Node
//     as a process: a decision's round trip, p50/p99

#include <pthread.h>

#include <array>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "host_bench.hpp"

namespace host_bench {

namespace json = boost::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

fs::path make_js_plugin(const std::string& id, const std::string& tail, int functions, bool node) {
  fs::path dir = g_root / id;
  fs::create_directories(dir);
  fs::copy_file(ESCOUADE_BENCH_JS_PLUGIN, dir / "plugin.mjs", fs::copy_options::overwrite_existing);
  {
    std::ofstream bundle(dir / "plugin.mjs", std::ios::app);
    if (!tail.empty()) bundle << "// " << tail << "\n";
    // The size of a bundled app: functions the engine parses, none of which runs.
    if (functions > 0) bundle << "const table = [];\n";
    for (int i = 0; i < functions; ++i)
      bundle << "table.push(function f" << i << "(a, b) { const s = { i: " << i
             << ", a, b }; if (a > b) { return [s.i, a - b, String(a)]; } return s; });\n";
  }
  const std::string run = node ? R"({"command":["node","plugin.mjs"]})" : R"({"js":"plugin.mjs"})";
  std::ofstream(dir / "escouade-plugin.json")
      << R"({"id":")" << id << R"(","version":"1.0.0","name":"bench","run":)" << run
      << R"(,"activation":["event:agent.status"],"permissions":{"events":["agent.status"],)"
         R"("decide":true}})";
  return dir;
}

namespace {

json::value decide_params() {
  return json::object{
      {"request", json::object{{"id", "r-1"},
                               {"kind", "command"},
                               {"tool", "Bash"},
                               {"input", json::object{{"command", "npm test -- --watch=false"}}}}},
      {"project", json::object{{"id", "p1"}, {"name", "billing"}, {"private", false}}},
      {"agent", json::object{{"id", "a-2"}, {"name", "Ada"}}}};
}

// `iterations` calls of `method`, one at a time, each timed (after 500 untimed).
std::vector<double> round_trips(Rig& rig, const std::string& id, const std::string& method,
                                const json::value& params, int iterations) {
  for (int i = 0; i < 500; ++i)
    rig.call(id, method, params);
  std::vector<double> us;
  for (int i = 0; i < iterations; ++i) {
    const auto a = Clock::now();
    rig.call(id, method, params);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  return us;
}

void print_three(const char* what, const std::vector<double>& process,
                 const std::vector<double>& node, const std::vector<double>& sandbox) {
  std::printf(
      "{\"bench\":\"sandbox_%s\",\"iterations\":%zu,\"process_p50_us\":%.1f,"
      "\"process_p99_us\":%.1f,\"node_p50_us\":%.1f,\"node_p99_us\":%.1f,"
      "\"sandbox_p50_us\":%.1f,\"sandbox_p99_us\":%.1f}\n",
      what, sandbox.size(), pct(process, 0.5), pct(process, 0.99), pct(node, 0.5), pct(node, 0.99),
      pct(sandbox, 0.5), pct(sandbox, 0.99));
}

// Lets the loop run for `pause` outside any clock: the host's work of the previous start ends,
// a spare helper starts.
// The loop runs for `pause`, by a timer: with a spare helper's pipe watched, a turn of the loop
// without one would wait for that pipe for good.
void settle(Rig& rig, std::chrono::milliseconds pause) {
  boost::asio::steady_timer timer(rig.io, pause);
  bool done = false;
  timer.async_wait([&](const boost::system::error_code&) { done = true; });
  rig.run_until([&] { return done; });
}

// `starts` cold starts, each timed from the call of `method` that starts the plugin to its
// answer; `between(i)` runs before each (a bundle changed: compiled again). `at_load`: the call
// comes right after the load, each timed from the load, while the load's compile runs.
std::vector<double> cold_starts(Rig& rig, const std::string& id, const fs::path& folder, int starts,
                                const std::function<void(int)>& between = nullptr,
                                const std::string& method = "test/echo",
                                const json::value& params = json::object{}, bool at_load = false) {
  std::vector<double> ms;
  for (int i = 0; i < starts; ++i) {
    if (between) between(i);
    if (at_load) settle(rig, std::chrono::milliseconds(100));  // the last start's work done
    auto a = Clock::now();
    (void)rig.host->load(folder);  // a fresh supervisor: idle, nothing runs
    if (!at_load) {
      // As an app, which loads a plugin at its install and starts it later: the load's compile
      // is over, and the last start's work done, before the activating call.
      rig.run_until([&] { return rig.sandboxed.compiling() == 0; });
      settle(rig, std::chrono::milliseconds(100));
      a = Clock::now();
    }
    rig.call(id, method, params);  // starts it: instance, initialize, one call
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    // A start that did not wait leaves the load's compile running: it ends outside the clock.
    if (at_load) rig.run_until([&] { return rig.sandboxed.compiling() == 0; });
    (void)rig.host->disable(id, "p1");
    (void)rig.host->enable(id, host::Project{"p1", "billing", false, {}});
  }
  return ms;
}

long resident_kb(int pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// The fields of /proc/<pid>/smaps_rollup, in kB ("Private_Dirty" -> 1720).
std::map<std::string, long> smaps_kb(int pid) {
  std::map<std::string, long> out;
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || line.find(" kB") == std::string::npos) continue;
    out[line.substr(0, colon)] = std::atol(line.c_str() + colon + 1);
  }
  return out;
}

void idle_memory(int instances) {
  Rig rig;
  std::vector<std::string> ids;
  auto start_some = [&](int n) {
    for (int i = 0; i < n; ++i) {
      const std::string id = "dev.bench.idle.js" + std::to_string(ids.size());
      rig.add_folder(id, make_js_plugin(id));
      rig.run_until([&] { return rig.sandboxed.compiling() == 0; });
      rig.call(id, "test/echo", json::object{});
      ids.push_back(id);
    }
  };
  start_some(instances);
  settle(rig, std::chrono::milliseconds(500));
  double held = 0, private_kb = 0, dirty_kb = 0, pss_kb = 0, rss_kb = 0;
  for (auto* p : rig.js.made) {
    held += static_cast<double>(p->memory_bytes().value_or(0));
    const auto m = smaps_kb(p->pid().value_or(0));
    private_kb += static_cast<double>(m.count("Private_Clean") ? m.at("Private_Clean") : 0) +
                  static_cast<double>(m.count("Private_Dirty") ? m.at("Private_Dirty") : 0);
    dirty_kb += static_cast<double>(m.count("Private_Dirty") ? m.at("Private_Dirty") : 0);
    pss_kb += static_cast<double>(m.count("Pss") ? m.at("Pss") : 0);
    rss_kb += static_cast<double>(m.count("Rss") ? m.at("Rss") : 0);
  }
  const double n = static_cast<double>(rig.js.made.size());
  const long before = resident_kb(::getpid());
  start_some(instances);
  settle(rig, std::chrono::milliseconds(500));
  const long after = resident_kb(::getpid());
  std::printf(
      "{\"bench\":\"sandbox_idle_instance\",\"instances\":%d,\"held_kb_per_instance\":%.0f,"
      "\"helper_private_kb\":%.0f,\"helper_private_dirty_kb\":%.0f,\"helper_pss_kb\":%.0f,"
      "\"helper_rss_kb\":%.0f,\"host_rss_kb_per_instance\":%.0f,\"private_in_all_kb\":%.0f}\n",
      instances, held / n / 1024.0, private_kb / n, dirty_kb / n, pss_kb / n, rss_kb / n,
      static_cast<double>(after - before) / instances,
      private_kb / n + static_cast<double>(after - before) / instances);
}

// A bundle of ~1 MB: what the compile cache saves shows on it.
void large_bundle(int starts) {
  constexpr int kFunctions = 8000;
  Rig rig;
  const std::string id = "dev.bench.large.js";
  const fs::path folder = make_js_plugin(id, {}, kFunctions);
  const auto bytes = fs::file_size(folder / "plugin.mjs");
  rig.add_folder(id, folder);
  rig.run_until([&] { return rig.sandboxed.compiling() == 0; });
  rig.call(id, "test/echo", json::object{});
  const auto cached_ms = cold_starts(rig, id, folder, starts);
  // The same bundle run by Node as a process: its floor.
  const std::string node_id = "dev.bench.large.node";
  const fs::path node_folder = make_js_plugin(node_id, {}, kFunctions, true);
  rig.add_folder(node_id, node_folder);
  const auto node_ms = cold_starts(rig, node_id, node_folder, starts);
  // Called right after the load of a changed bundle: the start finds no stencil yet and compiles
  // the bundle in its instance, beside the load's compile.
  const auto loaded_ms = cold_starts(
      rig, id, folder, starts,
      [&](int i) { make_js_plugin(id, "loaded " + std::to_string(i), kFunctions); }, "test/echo",
      json::object{}, /*at_load=*/true);
  rig.js.compile_at_load = false;
  const auto compiled_ms = cold_starts(rig, id, folder, starts, [&](int i) {
    make_js_plugin(id, "changed " + std::to_string(i), kFunctions);
  });
  std::printf(
      "{\"bench\":\"sandbox_large_bundle\",\"bundle_kb\":%.0f,\"starts\":%d,"
      "\"node_p50_ms\":%.2f,\"node_p99_ms\":%.2f,"
      "\"cached_p50_ms\":%.2f,\"cached_p99_ms\":%.2f,\"compiled_p50_ms\":%.2f,"
      "\"compiled_p99_ms\":%.2f,\"loaded_p50_ms\":%.2f,\"loaded_p99_ms\":%.2f}\n",
      static_cast<double>(bytes) / 1024.0, starts, pct(node_ms, 0.5), pct(node_ms, 0.99),
      pct(cached_ms, 0.5), pct(cached_ms, 0.99), pct(compiled_ms, 0.5), pct(compiled_ms, 0.99),
      pct(loaded_ms, 0.5), pct(loaded_ms, 0.99));
}

// A guard example's folder (the process, the run.wasm build of the same sources, the TypeScript
// bundle) copied under g_root, so that its journal and data stay the bench's: its files, and of
// its folders only `folders` (a build folder holds the build system's too).
fs::path guard_folder(const fs::path& built, const std::string& name,
                      const std::vector<std::string>& folders = {}) {
  const fs::path dir = g_root / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(built))
    if (entry.is_regular_file()) fs::copy_file(entry.path(), dir / entry.path().filename());
  for (const auto& folder : folders)
    fs::copy(built / folder, dir / folder, fs::copy_options::recursive);
  return dir;
}

void wasm_guard(int iterations, int starts) {
  const std::string id = "dev.example.guard";
  const json::value d = decide_params();
  std::vector<double> proc_decide, tiering_decide, wasm_decide, node_decide, proc_ms, wasm_ms;
  {
    Rig rig;
    const fs::path folder = guard_folder(ESCOUADE_BENCH_GUARD, "guard-process");
    rig.add_folder(id, folder);
    proc_decide = round_trips(rig, id, "permissions/decide", d, iterations);
    proc_ms = cold_starts(rig, id, folder, starts, nullptr, "permissions/decide", d);
  }
  {
    Rig rig;
    const fs::path folder = guard_folder(ESCOUADE_BENCH_GUARD_WASM, "guard-wasm");
    rig.add_folder(id, folder);
    // Right after its start, while Ion compiles the module again on the helper's threads (its
    // baseline code runs meanwhile), then once that is over: an instance's lasting pace.
    tiering_decide = round_trips(rig, id, "permissions/decide", d, iterations);
    settle(rig, std::chrono::milliseconds(1500));
    wasm_decide = round_trips(rig, id, "permissions/decide", d, iterations);
    wasm_ms = cold_starts(rig, id, folder, starts, nullptr, "permissions/decide", d);
  }
  {
    Rig rig;
    const fs::path folder = guard_folder(ESCOUADE_BENCH_GUARD_WASM, "guard-wasi-node");
    fs::copy_file(ESCOUADE_BENCH_WASI_NODE, folder / "wasi-node.mjs");
    // The manifest's run made a process's: Node and the runner, beside the same module.
    std::ofstream(folder / "escouade-plugin.json")
        << R"({"id":")" << id << R"(","version":"1.0.0","name":"Guard",)"
        << R"("run":{"command":["node","--no-warnings","wasi-node.mjs"]},)"
        << R"("activation":["event:agent.status"],"permissions":{"decide":true}})";
    rig.add_folder(id, folder);
    round_trips(rig, id, "permissions/decide", d, iterations);  // V8's tiers settle first
    node_decide = round_trips(rig, id, "permissions/decide", d, iterations);
  }
  std::printf(
      "{\"bench\":\"sandbox_wasm_decide\",\"iterations\":%zu,\"process_p50_us\":%.1f,"
      "\"process_p99_us\":%.1f,\"sandbox_p50_us\":%.1f,\"sandbox_p99_us\":%.1f,"
      "\"tiering_p50_us\":%.1f,\"tiering_p99_us\":%.1f,\"node_wasi_p50_us\":%.1f,"
      "\"node_wasi_p99_us\":%.1f}\n",
      wasm_decide.size(), pct(proc_decide, 0.5), pct(proc_decide, 0.99), pct(wasm_decide, 0.5),
      pct(wasm_decide, 0.99), pct(tiering_decide, 0.5), pct(tiering_decide, 0.99),
      pct(node_decide, 0.5), pct(node_decide, 0.99));
  std::printf(
      "{\"bench\":\"sandbox_wasm_cold_start\",\"starts\":%d,\"process_p50_ms\":%.2f,"
      "\"process_p99_ms\":%.2f,\"wasm_p50_ms\":%.2f,\"wasm_p99_ms\":%.2f,\"wasm_kb\":%.0f}\n",
      starts, pct(proc_ms, 0.5), pct(proc_ms, 0.99), pct(wasm_ms, 0.5), pct(wasm_ms, 0.99),
      static_cast<double>(fs::file_size(fs::path(ESCOUADE_BENCH_GUARD_WASM) / "plugin.wasm")) /
          1024.0);
}

#ifdef ESCOUADE_BENCH_GUARD_TS
// A TypeScript plugin's decisions, one at a time: in the sandbox (run.js) and under Node as a
// process (its -process twin, the same bundle), each in a rig of its own.
struct SandboxAndNode {
  std::vector<double> sandbox, node;
};

SandboxAndNode ts_decisions(const std::string& built, const std::string& id,
                            const std::string& name, int iterations) {
  const json::value d = decide_params();
  SandboxAndNode times;
  {
    Rig rig;
    rig.add_folder(id, guard_folder(built, name, {"dist"}));
    rig.run_until([&] { return rig.sandboxed.compiling() == 0; });
    times.sandbox = round_trips(rig, id, "permissions/decide", d, iterations);
  }
  {
    Rig rig;
    rig.add_folder(id, guard_folder(built + "-process", name + "-process", {"dist"}));
    times.node = round_trips(rig, id, "permissions/decide", d, iterations);
  }
  return times;
}

// The guard written with the TypeScript SDK (examples/guard-ts), a plugin as its author writes
// it, through the SDK's session and checks, where echo.mjs above answers from a readline
// handler; and its twin whose decision handler is async (bench/plugins/guard-ts-async), as most
// authors write handlers: one promise more a request.
void ts_guard(int iterations) {
  const SandboxAndNode plain =
      ts_decisions(ESCOUADE_BENCH_GUARD_TS, "dev.example.guard-ts", "guard-ts", iterations);
  const SandboxAndNode async = ts_decisions(
      ESCOUADE_BENCH_GUARD_TS_ASYNC, "dev.bench.guard-ts-async", "guard-ts-async", iterations);
  std::printf(
      "{\"bench\":\"sandbox_ts_decide\",\"iterations\":%zu,\"node_p50_us\":%.1f,"
      "\"node_p99_us\":%.1f,\"sandbox_p50_us\":%.1f,\"sandbox_p99_us\":%.1f,"
      "\"async_node_p50_us\":%.1f,\"async_node_p99_us\":%.1f,\"async_sandbox_p50_us\":%.1f,"
      "\"async_sandbox_p99_us\":%.1f}\n",
      plain.sandbox.size(), pct(plain.node, 0.5), pct(plain.node, 0.99), pct(plain.sandbox, 0.5),
      pct(plain.sandbox, 0.99), pct(async.node, 0.5), pct(async.node, 0.99),
      pct(async.sandbox, 0.5), pct(async.sandbox, 0.99));
}
#endif

}  // namespace

void bench_sandbox(int iterations, const std::string& part) {
  const auto runs = [&](const char* name) { return part.empty() || part == name; };
  if (runs("calls")) {
    Rig rig;
    const auto proc = rig.add("dev.bench.proc", ESCOUADE_FIXTURE_PLUGIN);
    const auto node =
        rig.add_folder("dev.bench.node", make_js_plugin("dev.bench.node", {}, 0, true));
    const auto js = rig.add_folder("dev.bench.js", make_js_plugin("dev.bench.js"));
    const json::value p = payload();
    const auto proc_calls = round_trips(rig, proc, "test/echo", p, iterations);
    const auto node_calls = round_trips(rig, node, "test/echo", p, iterations);
    const auto js_calls = round_trips(rig, js, "test/echo", p, iterations);
    print_three("call", proc_calls, node_calls, js_calls);
    const json::value d = decide_params();
    const auto proc_decide = round_trips(rig, proc, "permissions/decide", d, iterations);
    const auto node_decide = round_trips(rig, node, "permissions/decide", d, iterations);
    const auto js_decide = round_trips(rig, js, "permissions/decide", d, iterations);
    print_three("decide", proc_decide, node_decide, js_decide);
  }
  std::array<std::vector<double>, 4> rig_ms;
  if (runs("cold")) {
    Rig rig;
    const auto proc = rig.add("dev.bench.cold.proc", ESCOUADE_FIXTURE_PLUGIN);
    const auto node =
        rig.add_folder("dev.bench.cold.node", make_js_plugin("dev.bench.cold.node", {}, 0, true));
    const auto js = rig.add_folder("dev.bench.cold.js", make_js_plugin("dev.bench.cold.js"));
    const auto proc_ms = cold_starts(rig, proc, g_root / proc, 20);
    const auto node_ms = cold_starts(rig, node, g_root / node, 20);
    // The same bundle each time: its stencil is the cache's, a spare helper ready. Then a
    // bundle changed before each start, not compiled at load: compiled by each start.
    const auto cached_ms = cold_starts(rig, js, g_root / js, 20);
    rig.js.compile_at_load = false;
    const auto compiled_ms = cold_starts(rig, js, g_root / js, 20, [&](int i) {
      make_js_plugin("dev.bench.cold.js", "changed " + std::to_string(i));
    });
    rig_ms = {proc_ms, node_ms, cached_ms, compiled_ms};
  }
  if (runs("cold")) {
    // Without spares: each start starts its helper, and the engine in it. A rig of its own,
    // once the other is gone: a host reaps the children it does not know as orphans, so two in
    // one process would reap each other's.
    Rig bare(0);
    const auto js = bare.add_folder("dev.bench.cold.bare", make_js_plugin("dev.bench.cold.bare"));
    const auto bare_ms = cold_starts(bare, js, g_root / js, 20);
    const auto& [proc_ms, node_ms, cached_ms, compiled_ms] = rig_ms;
    std::printf(
        "{\"bench\":\"sandbox_cold_start\",\"starts\":20,\"process_p50_ms\":%.2f,"
        "\"process_p99_ms\":%.2f,\"node_p50_ms\":%.2f,\"node_p99_ms\":%.2f,"
        "\"cached_p50_ms\":%.2f,\"cached_p99_ms\":%.2f,\"no_spare_p50_ms\":%.2f,"
        "\"no_spare_p99_ms\":%.2f,\"compiled_p50_ms\":%.2f,\"compiled_p99_ms\":%.2f}\n",
        pct(proc_ms, 0.5), pct(proc_ms, 0.99), pct(node_ms, 0.5), pct(node_ms, 0.99),
        pct(cached_ms, 0.5), pct(cached_ms, 0.99), pct(bare_ms, 0.5), pct(bare_ms, 0.99),
        pct(compiled_ms, 0.5), pct(compiled_ms, 0.99));
  }
  if (runs("idle")) idle_memory(20);
  if (runs("large")) large_bundle(20);
  if (runs("wasm")) wasm_guard(iterations, 20);
#ifdef ESCOUADE_BENCH_GUARD_TS
  if (runs("ts")) ts_guard(iterations);
#endif
}

}  // namespace host_bench
