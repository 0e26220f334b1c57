// bench_host's sandbox figures (issue 13, point 9), each beside the same work of the same plugin
// run as a process (the fixture plugin's good mode; bench/plugins/echo.mjs in the sandbox):
//   a call's round trip (test/echo, the ~400-byte payload), p50/p99
//   a decision's round trip (one plugin's permissions/decide through host.call), p50/p99
//   cold start: from the call that starts the plugin to its answer, p50/p99, its bundle's
//     stencil in the compile cache (the load's compile over before the call), and a bundle
//     changed before each start and not compiled at load (compiled by the start)
//   memory per idle instance: what each of 20 running, idle instances holds by its own account
//     (memory_bytes(): its GC heap and its malloc'd blocks), and the host's resident memory
//     that 20 more instances add
//   a large bundle (echo.mjs and ~1 MB of functions): cold start cached and compiled
//   run.wasm: the guard example as a process and as run.wasm (the same sources): a decision's
//     round trip, p50/p99; cold start with its module compiled before (in memory), and the
//     time compiling its plugin.wasm takes at load

#include <pthread.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <thread>

#include "host_bench.hpp"

namespace host_bench {

namespace json = boost::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

fs::path make_js_plugin(const std::string& id, const std::string& tail, int functions) {
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
  std::ofstream(dir / "escouade-plugin.json")
      << R"({"id":")" << id
      << R"(","version":"1.0.0","name":"bench","run":{"js":"plugin.mjs"},)"
         R"("activation":["event:agent.status"],"permissions":{"events":["agent.status"],)"
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

void print_pair(const char* what, const std::vector<double>& process,
                const std::vector<double>& sandbox) {
  std::printf(
      "{\"bench\":\"sandbox_%s\",\"iterations\":%zu,\"process_p50_us\":%.1f,"
      "\"process_p99_us\":%.1f,\"sandbox_p50_us\":%.1f,\"sandbox_p99_us\":%.1f}\n",
      what, sandbox.size(), pct(process, 0.5), pct(process, 0.99), pct(sandbox, 0.5),
      pct(sandbox, 0.99));
}

// `starts` cold starts, each timed from the call of `method` that starts the plugin to its
// answer; `between(i)` runs before each (a bundle changed: compiled again).
std::vector<double> cold_starts(Rig& rig, const std::string& id, const fs::path& folder, int starts,
                                const std::function<void(int)>& between = nullptr,
                                const std::string& method = "test/echo",
                                const json::value& params = json::object{}) {
  std::vector<double> ms;
  for (int i = 0; i < starts; ++i) {
    if (between) between(i);
    (void)rig.host->load(folder);  // a fresh supervisor: idle, nothing runs
    // As an app, which loads a plugin at its install and starts it later: the load's compile
    // is over before the activating call.
    rig.run_until([&] { return rig.sandboxed.compiling() == 0; });
    const auto a = Clock::now();
    rig.call(id, method, params);  // starts it: instance, initialize, one call
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    (void)rig.host->disable(id, "p1");
    (void)rig.host->enable(id, host::Project{"p1", "billing", false, {}});
  }
  return ms;
}

long resident_kb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

void idle_memory(int instances) {
  Rig rig;
  std::vector<std::string> ids;
  auto start_some = [&](int n) {
    for (int i = 0; i < n; ++i) {
      const std::string id = "dev.bench.idle.js" + std::to_string(ids.size());
      rig.add_folder(id, make_js_plugin(id));
      rig.call(id, "test/echo", json::object{});
      ids.push_back(id);
    }
  };
  start_some(instances);
  double held = 0;
  for (auto* p : rig.js.made)
    held += static_cast<double>(p->memory_bytes().value_or(0));
  held /= static_cast<double>(rig.js.made.size());
  const long before = resident_kb();
  start_some(instances);
  const long after = resident_kb();
  std::printf(
      "{\"bench\":\"sandbox_idle_instance\",\"instances\":%d,"
      "\"held_kb_per_instance\":%.0f,\"host_rss_kb_per_instance\":%.0f}\n",
      instances, held / 1024.0, static_cast<double>(after - before) / instances);
}

// A bundle of ~1 MB: what the compile cache saves shows on it.
void large_bundle(int starts) {
  constexpr int kFunctions = 8000;
  Rig rig;
  const std::string id = "dev.bench.large.js";
  const fs::path folder = make_js_plugin(id, {}, kFunctions);
  const auto bytes = fs::file_size(folder / "plugin.mjs");
  rig.add_folder(id, folder);
  rig.call(id, "test/echo", json::object{});  // compiled once, then from the cache
  const auto cached_ms = cold_starts(rig, id, folder, starts);
  rig.js.compile_at_load = false;
  const auto compiled_ms = cold_starts(rig, id, folder, starts, [&](int i) {
    make_js_plugin(id, "changed " + std::to_string(i), kFunctions);
  });
  std::printf(
      "{\"bench\":\"sandbox_large_bundle\",\"bundle_kb\":%.0f,\"starts\":%d,"
      "\"cached_p50_ms\":%.2f,\"cached_p99_ms\":%.2f,\"compiled_p50_ms\":%.2f,"
      "\"compiled_p99_ms\":%.2f}\n",
      static_cast<double>(bytes) / 1024.0, starts, pct(cached_ms, 0.5), pct(cached_ms, 0.99),
      pct(compiled_ms, 0.5), pct(compiled_ms, 0.99));
}

// The guard example's folder (the process, or the run.wasm build of the same sources) copied
// under g_root, so that its journal and data stay the bench's.
fs::path guard_folder(const fs::path& built, const std::string& name) {
  const fs::path dir = g_root / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(built))
    if (entry.is_regular_file()) fs::copy_file(entry.path(), dir / entry.path().filename());
  return dir;
}

void wasm_guard(int iterations, int starts) {
  const std::string id = "dev.example.guard";
  const json::value d = decide_params();
  std::vector<double> proc_decide, wasm_decide, proc_ms, wasm_ms;
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
    wasm_decide = round_trips(rig, id, "permissions/decide", d, iterations);
    // Its module was compiled at load (or by its first instance): each start takes it from
    // memory.
    wasm_ms = cold_starts(rig, id, folder, starts, nullptr, "permissions/decide", d);
  }
  print_pair("wasm_decide", proc_decide, wasm_decide);
  std::printf(
      "{\"bench\":\"sandbox_wasm_cold_start\",\"starts\":%d,\"process_p50_ms\":%.2f,"
      "\"process_p99_ms\":%.2f,\"wasm_p50_ms\":%.2f,\"wasm_p99_ms\":%.2f,"
      "\"wasm_kb\":%.0f}\n",
      starts, pct(proc_ms, 0.5), pct(proc_ms, 0.99), pct(wasm_ms, 0.5), pct(wasm_ms, 0.99),
      static_cast<double>(fs::file_size(fs::path(ESCOUADE_BENCH_GUARD_WASM) / "plugin.wasm")) /
          1024.0);
}

}  // namespace

void bench_sandbox(int iterations) {
  {
    Rig rig;
    const auto proc = rig.add("dev.bench.proc", ESCOUADE_FIXTURE_PLUGIN);
    const auto js = rig.add_folder("dev.bench.js", make_js_plugin("dev.bench.js"));
    const json::value p = payload();
    const auto proc_calls = round_trips(rig, proc, "test/echo", p, iterations);
    const auto js_calls = round_trips(rig, js, "test/echo", p, iterations);
    print_pair("call", proc_calls, js_calls);
    const json::value d = decide_params();
    const auto proc_decide = round_trips(rig, proc, "permissions/decide", d, iterations);
    const auto js_decide = round_trips(rig, js, "permissions/decide", d, iterations);
    print_pair("decide", proc_decide, js_decide);
  }
  {
    Rig rig;
    const auto proc = rig.add("dev.bench.cold.proc", ESCOUADE_FIXTURE_PLUGIN);
    const auto js = rig.add_folder("dev.bench.cold.js", make_js_plugin("dev.bench.cold.js"));
    const auto proc_ms = cold_starts(rig, proc, g_root / proc, 20);
    // The same bundle each time: its stencil is the cache's from the second start on (the first
    // is left out). Then a bundle changed before each start, not compiled at load: compiled by
    // each start.
    auto cached_ms = cold_starts(rig, js, g_root / js, 21);
    cached_ms.erase(cached_ms.begin());
    rig.js.compile_at_load = false;
    const auto compiled_ms = cold_starts(rig, js, g_root / js, 20, [&](int i) {
      make_js_plugin("dev.bench.cold.js", "changed " + std::to_string(i));
    });
    std::printf(
        "{\"bench\":\"sandbox_cold_start\",\"starts\":20,\"process_p50_ms\":%.2f,"
        "\"process_p99_ms\":%.2f,\"cached_p50_ms\":%.2f,\"cached_p99_ms\":%.2f,"
        "\"compiled_p50_ms\":%.2f,\"compiled_p99_ms\":%.2f}\n",
        pct(proc_ms, 0.5), pct(proc_ms, 0.99), pct(cached_ms, 0.5), pct(cached_ms, 0.99),
        pct(compiled_ms, 0.5), pct(compiled_ms, 0.99));
  }
  idle_memory(20);
  large_bundle(20);
  wasm_guard(iterations, 20);
}

}  // namespace host_bench
