// The host with real plugin processes (bench/plugins/lean_plugin.cpp, a C++ plugin doing per
// message what the floors' children do; the sandbox's figures use tests/fixtures/fixture_plugin):
//   call    a call host -> plugin -> host through the C++ API, round trip p50/p99, calls/s
//   app     the same call from an app through escouade-host (app -> host -> plugin and back)
//   pipelined  calls with 256 in flight, through the C++ API and through escouade-host: calls/s
//   facts   facts/s from publish to the plugin having read them all, to 1 and to 10 plugins,
//           paced by a call every 4096 facts (the floor is paced by its blocking writes)
//   cold    cold start: from the call that starts the plugin to its answer (spawn, initialize
//           and its answer, the call and its answer): the span of bench_floors spawn
//   idle    the host's memory per loaded, idle plugin
//   neighbours  an innocent plugin's call p50/p99 on a quiet host, while another plugin floods
//           its stderr without pause, and while another (a tree of 101 processes, 100 of them
//           in groups of their own) is restarted, so killed, again and again
//   stop    the host's shutdown with 10 and 100 running plugins, from the call to its end
//   decide  a permission decision with 1, 5, 20 and 100 deciding plugins (p50/p99), timed back
//           to back as the floor's rounds are, beside one plugin's permissions/decide round trip
//           through host.call (the floor of a decision), right after a decision and alone (one
//           call after another)
//   decide-mixed  the same with a quarter of the deciding plugins run.js plugins in the sandbox
//           (5, 20 and 100 plugins: 1, 5 and 25 sandboxed)
//   sandbox a call, a decision, a cold start and an idle instance of a run.js plugin in the
//           sandbox beside the same plugin as a process, a large bundle's cold start, the
//           guard example as run.wasm beside its process build, and the TypeScript guard in the
//           sandbox beside the same bundle under Node (host_bench_sandbox.cpp)
// Prints one JSON object a measure. Compare with bench_pipe_floor --json and bench_floors, run
// beside it (bench/run.sh prints the ratios). The app's side is in host_bench_app.cpp.

#include "host_bench.hpp"

#include <malloc.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/host.hpp"
#include "platform/process.hpp"
#include "platform/reaper.hpp"
#include "protocol/message.hpp"
#include "runtime/process_program.hpp"
#include "sandbox/sandbox_program.hpp"

namespace host_bench {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace escouade;

fs::path g_root;

fs::path bench_plugin() {
  const char* chosen = std::getenv("ESCOUADE_BENCH_PLUGIN");
  return chosen && *chosen ? fs::path(chosen) : fs::path(ESCOUADE_LEAN_PLUGIN);
}

fs::path make_plugin(const std::string& id, const fs::path& program, const std::string& mode) {
  fs::path dir = g_root / id;
  fs::create_directories(dir);
  fs::copy_file(program, dir / "plugin", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "mode") << mode << "\n";
  std::ofstream(dir / "escouade-plugin.json")
      << R"({"id":")" << id
      << R"(","version":"1.0.0","name":"bench","run":{"command":["./plugin"]},)"
         R"("activation":["event:agent.status"],"permissions":{"events":["agent.status"],)"
         R"("decide":true}})";
  return dir;
}

json::value payload() {
  return json::object{
      {"ticket",
       json::object{
           {"id", "t-19"}, {"key", "ESC-12"}, {"title", "Retry failed invoices after a timeout"}}},
      {"agent", json::object{{"id", "a-2"}, {"name", "Ada"}}},
      {"data",
       json::object{
           {"from", "todo"}, {"to", "doing"}, {"by", "user"}, {"note", std::string(180, 'n')}}}};
}

json::value fact(std::int64_t seq) {
  return json::object{
      {"name", "agent.status"},
      {"version", 1},
      {"seq", seq},
      {"at", "2026-11-29T09:12:05Z"},
      {"project", json::object{{"id", "p1"}, {"name", "billing"}, {"private", false}}},
      {"data",
       json::object{{"status", "working"}, {"was", "idle"}, {"note", std::string(200, 'x')}}}};
}

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

namespace {

void bench_call(int iterations) {
  Rig rig;
  auto id = rig.add("dev.bench.call");
  // Each call's answer is the next call's params, as the floor re-sends what it parsed: what
  // is timed is the host's work, not copies of the payload made by the benchmark (adopt: an
  // assignment would copy the answer out of its line's arena).
  json::value p = payload();
  for (int i = 0; i < 1000; ++i)
    proto::adopt(p, rig.call(id, "test/echo", std::move(p)));
  std::vector<double> us;
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    const auto a = Clock::now();
    proto::adopt(p, rig.call(id, "test/echo", std::move(p)));
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "{\"bench\":\"host_call_api\",\"iterations\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,"
      "\"calls_per_s\":%.0f}\n",
      iterations, pct(us, 0.5), pct(us, 0.99), iterations / s);
}

// `calls` test/echo calls through Host::call, `in_flight` of them outstanding at any time: the
// loop tops them up after each turn of the event loop.
void bench_pipelined_api(int calls, int in_flight) {
  Rig rig;
  auto id = rig.add("dev.bench.pipelined");
  rig.call(id, "test/echo", json::object{});  // running
  const json::value p = payload();
  auto run = [&](int count) {
    int sent = 0, done = 0;
    std::string failure;
    while (done < count) {
      for (; sent < count && sent - done < in_flight; ++sent) {
        rig.host->call(id, *rpc::Outgoing::request_value("test/echo", p), std::nullopt,
                       [&](Result<host::Answer> r) {
                         if (!r && failure.empty()) failure = r.error().message;
                         ++done;
                       });
      }
      rig.io.run_one();
    }
    if (!failure.empty()) throw std::runtime_error("a pipelined call failed: " + failure);
  };
  run(5000);
  const auto t0 = Clock::now();
  run(calls);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "{\"bench\":\"host_pipelined_api\",\"in_flight\":%d,\"calls\":%d,\"seconds\":%.4f,"
      "\"calls_per_s\":%.0f}\n",
      in_flight, calls, s, calls / s);
}

// `iterations` calls of the innocent plugin, each timed; `between` runs before each.
std::vector<double> timed_calls(Rig& rig, const std::string& id, int iterations,
                                const std::function<void(int)>& between = nullptr) {
  const json::value p = payload();
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    if (between) between(i);
    const auto a = Clock::now();
    rig.call(id, "test/echo", p);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  return us;
}

void print_neighbour(const char* beside, const std::vector<double>& us) {
  std::printf(
      "{\"bench\":\"innocent_call\",\"beside\":\"%s\",\"iterations\":%zu,"
      "\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f}\n",
      beside, us.size(), pct(us, 0.5), pct(us, 0.99), pct(us, 1.0));
}

void bench_neighbours(int iterations) {
  Rig rig;
  const auto innocent = rig.add("dev.bench.call");
  timed_calls(rig, innocent, 1000);  // warm
  print_neighbour("a quiet host", timed_calls(rig, innocent, iterations));

  const auto noisy = rig.add("dev.bench.noisy", ESCOUADE_HOSTILE_PLUGIN, "stderr-forever");
  rig.call(noisy, "test/echo", json::object{});  // started; its child floods from now on
  print_neighbour("a plugin flooding its stderr", timed_calls(rig, innocent, iterations));
  (void)rig.host->disable(noisy, "p1");

  const auto victim = rig.add("dev.bench.victim", ESCOUADE_HOSTILE_PLUGIN, "many-children");
  rig.call(victim, "test/echo", json::object{});
  int restarts = 0;
  const auto killing = timed_calls(rig, innocent, iterations, [&](int i) {
    // Every 50 calls: restarted, so its tree of 101 processes is killed and started again.
    if (i % 50 == 0 && rig.host->restart(victim)) ++restarts;
  });
  print_neighbour("a plugin whose tree of 101 processes is killed", killing);
  std::printf("{\"bench\":\"innocent_call\",\"restarts_of_the_victim\":%d}\n", restarts);
}

void bench_facts(int plugins, int facts) {
  Rig rig;
  std::vector<std::string> ids;
  for (int i = 0; i < plugins; ++i)
    ids.push_back(rig.add("dev.bench.facts" + std::to_string(i)));
  for (auto& id : ids)
    rig.call(id, "test/echo", json::object{});  // all running
  // One fact, its seq changed in place: what is timed is the host's work, not the making of a
  // JSON value (the floor changes its seq in place too).
  proto::Fact f = json::value_to<proto::Fact>(fact(0));
  // Paced as the floor's blocking writes are by its pipe: after each window of facts (1.6 MB,
  // under the 4 MiB a plugin's input holds), a call that each plugin answers once it has read
  // them all. Unpaced, on one core, the plugin reads only when the host's thread is preempted
  // and its input bound drops the oldest facts, as it should for an app that floods.
  constexpr int kWindow = 4096;
  const auto t0 = Clock::now();
  for (int seq = 1; seq <= facts; ++seq) {
    f.seq = seq;
    (void)rig.host->publish(f);
    if (seq % 256 == 0) rig.io.poll();  // let the writes go out as the app would
    if (seq % kWindow == 0) {
      for (auto& id : ids)
        rig.call(id, "test/echo", json::object{});
    }
  }
  // Each plugin has read them all when its test/facts answer (queued behind them) comes: the
  // lean plugin's is a count, as the floor's child answers; the fixture plugin's the list.
  std::size_t heard = 0;
  for (auto& id : ids) {
    const json::value got = rig.call(id, "test/facts", json::object{});
    heard += got.is_array() ? got.as_array().size()
                            : static_cast<std::size_t>(got.to_number<std::int64_t>());
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "{\"bench\":\"host_facts\",\"plugins\":%d,\"facts\":%d,\"delivered\":%zu,"
      "\"facts_per_s\":%.0f,\"deliveries_per_s\":%.0f}\n",
      plugins, facts, heard, facts / s, static_cast<double>(heard) / s);
}

void bench_cold(int starts) {
  Rig rig;
  auto id = rig.add("dev.bench.cold");
  std::vector<double> ms;
  for (int i = 0; i < starts; ++i) {
    (void)rig.host->load(g_root / id);  // a fresh supervisor: idle, nothing runs
    const auto a = Clock::now();
    rig.call(id, "test/echo", json::object{});  // starts it: spawn, initialize, one call
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    bool done = false;
    rig.host->shutdown([&] { done = true; });
    rig.run_until([&] { return done; });
  }
  std::printf("{\"bench\":\"cold_start\",\"starts\":%d,\"p50_ms\":%.2f,\"p99_ms\":%.2f}\n", starts,
              pct(ms, 0.5), pct(ms, 0.99));
}

proto::DecideParams decide_request(int i) {
  return json::value_to<proto::DecideParams>(json::value(json::object{
      {"request", json::object{{"id", "r-" + std::to_string(i)},
                               {"kind", "command"},
                               {"tool", "Bash"},
                               {"input", json::object{{"command", "npm test -- --watch=false"}}}}},
      {"project", json::object{{"id", "p1"}, {"name", "billing"}, {"private", false}}},
      {"agent", json::object{{"id", "a-2"}, {"name", "Ada"}}}}));
}

// `plugins` deciding plugins, the first `sandboxed` of them run.js plugins in the sandbox
// (bench/plugins/echo.mjs, which allows as the lean plugin does), the others processes.
void bench_decide(int plugins, int iterations, int sandboxed = 0) {
  Rig rig;
  std::vector<std::string> ids;
  for (int i = 0; i < plugins; ++i) {
    const std::string id = "dev.bench.decide" + std::to_string(i);
    ids.push_back(i < sandboxed ? rig.add_folder(id, make_js_plugin(id)) : rig.add(id));
  }
  rig.run_until([&] { return rig.sandboxed.compiling() == 0; });
  for (auto& id : ids)
    rig.call(id, "test/echo", json::object{});  // all running
  // The request is made before the clock starts: the app hands the host one already read, and
  // the floor serializes one it holds.
  auto decide = [&](const proto::DecideParams& request) {
    std::optional<Result<policy::Verdict>> out;
    rig.host->decide(request, [&](Result<policy::Verdict> v) { out = std::move(v); });
    rig.run_until([&] { return out.has_value(); });
    if (!*out || (*out)->decision != proto::DecisionDecision::allow) {
      throw std::runtime_error("a decision that is not an allowance");
    }
  };
  for (int i = 0; i < 200; ++i)
    decide(decide_request(i));
  // The decisions timed back to back, as the floor times its rounds: nothing else runs between
  // two of them to leave the caches to the next one colder than the floor's.
  std::vector<double> us, single, alone;
  for (int i = 0; i < iterations; ++i) {
    const proto::DecideParams request = decide_request(i);
    const auto a = Clock::now();
    decide(request);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  // The process plugin asked alone right after each decision (untimed): the last one (the first
  // ones may be sandboxed).
  const std::string& single_id = ids.back();
  for (int i = 0; i < iterations; ++i) {
    const proto::DecideParams request = decide_request(i);
    decide(request);
    json::value params = json::value_from(request);
    const auto a = Clock::now();
    rig.call(single_id, "permissions/decide", std::move(params));
    single.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  // The same call again and again, no decision between: what one call costs when the others'
  // work has not just gone through the caches.
  for (int i = 0; i < iterations; ++i) {
    json::value params = json::value_from(decide_request(i));
    const auto a = Clock::now();
    rig.call(single_id, "permissions/decide", std::move(params));
    alone.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  const std::string sandbox_fields =
      sandboxed > 0 ? ",\"sandboxed\":" + std::to_string(sandboxed) : std::string();
  std::printf(
      "{\"bench\":\"%s\",\"plugins\":%d%s,\"iterations\":%d,\"p50_us\":%.1f,"
      "\"p99_us\":%.1f,\"one_plugin_call_p50_us\":%.1f,\"one_plugin_call_p99_us\":%.1f,"
      "\"one_plugin_call_alone_p50_us\":%.1f}\n",
      sandboxed > 0 ? "host_decide_mixed" : "host_decide", plugins, sandbox_fields.c_str(),
      iterations, pct(us, 0.5), pct(us, 0.99), pct(single, 0.5), pct(single, 0.99),
      pct(alone, 0.5));
}

// Bytes the allocator has handed out and not taken back: resident memory moves by pages and
// keeps what earlier benchmarks freed, so it cannot see a few kilobytes a plugin.
long heap_bytes() {
  return static_cast<long>(mallinfo2().uordblks);
}

void bench_idle(int plugins) {
  Rig rig;
  rig.add("dev.bench.idle.warm");
  const long before = heap_bytes();
  for (int i = 0; i < plugins; ++i)
    rig.add("dev.bench.idle" + std::to_string(i));
  const long after = heap_bytes();
  std::printf("{\"bench\":\"idle_plugin_memory\",\"plugins\":%d,\"kb_per_plugin\":%.1f}\n", plugins,
              static_cast<double>(after - before) / 1024.0 / plugins);
}

// The host's shutdown with `plugins` running plugins, `rounds` times: from the call to the
// last plugin ended and reaped (each one's tree ended, the host's adopted orphans looked for).
void bench_stop(int plugins, int rounds) {
  std::vector<double> ms;
  for (int r = 0; r < rounds; ++r) {
    auto rig = std::make_unique<Rig>();
    for (int i = 0; i < plugins; ++i)
      rig->call(rig->add("dev.bench.stop" + std::to_string(i)), "test/echo", json::object{});
    const auto a = Clock::now();
    rig.reset();  // its shutdown
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    fs::remove_all(g_root);
    fs::create_directories(g_root);
  }
  std::printf(
      "{\"bench\":\"host_stop\",\"plugins\":%d,\"rounds\":%d,\"p50_ms\":%.2f,"
      "\"max_ms\":%.2f}\n",
      plugins, rounds, pct(ms, 0.5), pct(ms, 1.0));
}

}  // namespace
}  // namespace host_bench

int main(int argc, char** argv) {
  using namespace host_bench;
  const std::string which = argc > 1 ? argv[1] : "all";
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as it comes, through a pipe too
  char templ[] = "/tmp/escouade-bench-XXXXXX";
  g_root = mkdtemp(templ);
  (void)platform::become_subreaper();
  try {
    // bench_host call|app [times]: callgrind's marginal count a call takes two sizes.
    const int times = argc > 2 && (which == "call" || which == "app") ? std::atoi(argv[2]) : 20000;
    if (which == "all" || which == "call") bench_call(times);
    if (which == "all" || which == "app") bench_app(times);
    // bench_host pipelined [<calls>]: a longer run for a profile.
    if (which == "all" || which == "pipelined") {
      const int calls = argc > 2 && which == "pipelined" ? std::atoi(argv[2]) : 100000;
      bench_pipelined_api(calls, 256);
      bench_app_pipelined(calls, 256);
    }
    if (which == "facts" && argc > 3) {  // one size only: bench_host facts <plugins> <facts>
      bench_facts(std::atoi(argv[2]), std::atoi(argv[3]));
    } else if (which == "all" || which == "facts") {
      bench_facts(1, 200000);
      bench_facts(10, 50000);
    }
    if (which == "decide" && argc > 3) {  // one size only: bench_host decide <plugins> <times>
      bench_decide(std::atoi(argv[2]), std::atoi(argv[3]));
    } else if (which == "all" || which == "decide") {
      bench_decide(1, 5000);
      bench_decide(5, 5000);
      bench_decide(20, 2000);
      bench_decide(100, 500);
    }
    // A quarter of the deciding plugins sandboxed (run.js), the others processes:
    // bench_host decide-mixed [<plugins> <times>].
    if (which == "decide-mixed" && argc > 3) {
      const int n = std::atoi(argv[2]);
      bench_decide(n, std::atoi(argv[3]), n / 4);
    } else if (which == "all" || which == "decide-mixed") {
      bench_decide(5, 5000, 1);
      bench_decide(20, 2000, 5);
      bench_decide(100, 500, 25);
    }
    if (which == "all" || which == "neighbours") bench_neighbours(5000);
    // bench_host stop [<plugins> <rounds>]: the host's shutdown with that many plugins running.
    if (which == "stop" && argc > 3) {
      bench_stop(std::atoi(argv[2]), std::atoi(argv[3]));
    } else if (which == "all" || which == "stop") {
      bench_stop(10, 10);
      bench_stop(100, 5);
    }
    // As many starts as its floor (bench_floors spawn).
    if (which == "all" || which == "cold") bench_cold(50);
    if (which == "all" || which == "idle") bench_idle(200);
    // bench_host sandbox [calls|cold|idle|large|wasm|ts]: one part, or all of them.
    if (which == "all" || which == "sandbox") bench_sandbox(5000, argc > 2 ? argv[2] : "");
    // fs/read and proc/spawn through the host, beside the same done directly.
    // bench_host services [<reads> [<plugins running beside>]].
    if (which == "all" || which == "services")
      bench_services(argc > 2 && which == "services" ? std::atoi(argv[2]) : 1000,
                     argc > 3 && which == "services" ? std::atoi(argv[3]) : 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_host: %s\n", e.what());
    fs::remove_all(g_root);
    return 1;
  }
  fs::remove_all(g_root);
  return 0;
}
