#pragma once

// What bench_host's files share: the plugin folders it makes, the params of its calls, its
// percentiles, the host it drives (Rig), the app's side (host_bench_app.cpp: escouade-host driven
// over its pipes) and the sandbox's figures (host_bench_sandbox.cpp).

#include <boost/asio/io_context.hpp>
#include <boost/json/value.hpp>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "host/host.hpp"
#include "runtime/process_program.hpp"
#include "runtime/tree_ender.hpp"
#include "sandbox/sandbox_program.hpp"

namespace host_bench {

// The plugin of the figures that have a floor: $ESCOUADE_BENCH_PLUGIN when set (any plugin
// serving test/echo, test/facts and permissions/decide), else the lean plugin
// (bench/plugins/lean_plugin.cpp: per message, the work of the floors' children).
std::filesystem::path bench_plugin();

// The run's scratch folder (plugins, data dirs), made by main and removed at the end.
extern std::filesystem::path g_root;

// A plugin folder under g_root: `program` copied as ./plugin, its mode in ./mode, a manifest
// that activates on agent.status and decides.
std::filesystem::path make_plugin(const std::string& id,
                                  const std::filesystem::path& program = bench_plugin(),
                                  const std::string& mode = "good");

// About 400 bytes on the wire, like a typical fact: the params of every timed test/echo.
boost::json::value payload();

// The sample at rank p * (n - 1) of the sorted samples.
double pct(std::vector<double> v, double p);

// Makes what `inner` makes and remembers each program (the sandbox's figures read their memory;
// a pointer is good while its plugin runs). prepare() is not passed on: no bundle is compiled
// at load, so that the cold starts choose what is compiled before their clock starts.
struct Recording final : escouade::runtime::ProgramFactory {
  explicit Recording(escouade::runtime::ProgramFactory& f) : inner(f) {}
  bool runs(escouade::runtime::RunKind kind) const override { return inner.runs(kind); }
  std::unique_ptr<escouade::runtime::Program> make(
      const escouade::runtime::ProgramSpec& spec) override {
    auto p = inner.make(spec);
    made.push_back(p.get());
    return p;
  }
  // Loading compiles as in escouade-host, unless `compile_at_load` is off (a start then
  // compiles what it runs).
  void prepare(const escouade::runtime::ProgramSpec& spec, Tell tell = {}) override {
    if (compile_at_load) inner.prepare(spec, std::move(tell));
  }
  bool compile_at_load = true;
  escouade::runtime::ProgramFactory& inner;
  std::vector<escouade::runtime::Program*> made;
};

// The host as escouade-host makes it, with real plugin processes and the sandbox, on this
// thread's loop.
using namespace escouade;
struct Rig {
  boost::asio::io_context io;
  runtime::ProcessContext context;
  // As escouade-host: trees are killed off the host's thread.
  runtime::TreeEnder ender{io.get_executor()};
  runtime::ProcessProgramFactory processes{io.get_executor(), context};
  // As escouade-host: run.js and run.wasm plugins in the sandbox, `spares` helpers started
  // ahead (each program it made remembered).
  sandbox::SandboxProgramFactory sandboxed;
  Recording js{sandboxed};
  runtime::ProgramRouter programs;
  std::unique_ptr<host::Host> host;
  std::filesystem::path data = g_root / "data";

  static sandbox::SandboxOptions sandbox_options(std::size_t spares) {
    auto options = sandbox::SandboxOptions::installed();
    options.spares = spares;
    return options;
  }
  // One Rig at a time in a process: a host reaps the ended children it does not know as
  // orphans, another Rig's helpers among them.
  explicit Rig(std::size_t spares = 1)
      : sandboxed(io.get_executor(), context, sandbox_options(spares)) {
    host::HostConfig c;
    c.data_dir = data;
    c.base_env = {"PATH=/usr/bin:/bin"};
    c.check_environment.search_path = "/usr/bin:/bin";  // node, for the bundles run by Node
    context.ender = &ender;
    c.processes = &context;  // as escouade-host: the programs of proc/spawn share it
    programs.route(runtime::RunKind::command, &processes);
    programs.route(runtime::RunKind::js, &js);
    programs.route(runtime::RunKind::wasm, &js);
    host = std::make_unique<host::Host>(io.get_executor(), c, programs, nullptr);
  }
  ~Rig() {
    bool done = false;
    host->shutdown([&] { done = true; });
    run_until([&] { return done; });
  }
  // Runs the loop until `done()`. A completion that a worker (ending a process tree, reading a
  // file) will post is no work of the loop's while it is under way: run_one() then returns at
  // once and leaves the loop stopped, which the next turn undoes (docs/lifetimes.md).
  template <class Done>
  void run_until(Done done) {
    while (!done()) {
      if (io.run_one() == 0) {
        io.restart();
        std::this_thread::yield();  // pinned to one core, the worker needs it
      }
    }
  }
  std::string add(const std::string& id, const std::filesystem::path& program = bench_plugin(),
                  const std::string& mode = "good") {
    return add_folder(id, make_plugin(id, program, mode));
  }
  std::string add_folder(const std::string& id, const std::filesystem::path& folder) {
    auto l = host->load(folder);
    if (!l) throw std::runtime_error(l.error().message);
    (void)host->enable(id, host::Project{"p1", "billing", false, {}});
    return id;
  }
  boost::json::value call(const std::string& id, const std::string& method,
                          boost::json::value params) {
    auto request = rpc::Outgoing::request_value(method, params);
    if (!request) throw std::runtime_error(request.error().message);
    std::optional<Result<host::Answer>> out;
    host->call(id, std::move(*request), std::nullopt,
               [&](Result<host::Answer> r) { out = std::move(r); });
    run_until([&] { return out.has_value(); });
    if (!*out) throw std::runtime_error(out->error().message);
    return std::move((*out)->value);
  }
};

// A run.js plugin folder under g_root: bench/plugins/echo.mjs, which answers as the fixture
// plugin's good mode does (test/echo gives its params back, permissions/decide allows).
// `tail`, when given, is appended as a comment: another bundle, the same plugin; `functions`
// more functions (about 120 bytes each, none of which runs) make it a large bundle. `node`: the
// same bundle run as a process by Node (`node plugin.mjs`), the same plugin outside the sandbox.
std::filesystem::path make_js_plugin(const std::string& id, const std::string& tail = {},
                                     int functions = 0, bool node = false);

// The sandbox beside processes: calls, decisions, cold starts, idle memory
// (host_bench_sandbox.cpp). `part`: one of calls, cold, idle, large, wasm; empty for all.
void bench_sandbox(int iterations, const std::string& part = {});

// fs/read of a 256 KiB file and proc/spawn of `true` to its proc/exit, through the host (run.js
// and Node) and done directly (host_bench_services.cpp); `iterations` reads, a quarter as many
// spawns; `neighbours` idle process plugins running beside.
void bench_services(int iterations, int neighbours = 0);

// One host/call at a time from an app through escouade-host: p50/p99, calls/s.
void bench_app(int iterations);

// `calls` host/call requests through escouade-host, `in_flight` of them outstanding: calls/s.
void bench_app_pipelined(int calls, int in_flight);

}  // namespace host_bench
