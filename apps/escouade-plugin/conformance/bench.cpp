#include "conformance/bench.hpp"

#include <stdlib.h>

#include <boost/json/object.hpp>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <utility>

#include "base/event_loop.hpp"
#include "conformance/bench_run.hpp"
#include "conformance/leftovers.hpp"
#include "journal/journal.hpp"
#include "journal/masker.hpp"
#include "journal/trace_file.hpp"
#include "manifest/module_age.hpp"
#include "platform/keychain.hpp"
#include "platform/reaper.hpp"
#include "protocol/gen/methods.hpp"
#include "runtime/process_program.hpp"
#include "sandbox/sandbox_program.hpp"
#include "services/secrets.hpp"
#include "services/setting_value.hpp"
#include "services/settings.hpp"
#include "supervisor/handshake.hpp"

extern char** environ;

namespace escouade::conformance {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr auto kUsage = proto::ErrorCode::invalid_params;

// A folder of its own under the system's temporary folder, removed with its owner.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "escouade-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data())) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string describe_manifest(const manifest::Manifest& m) {
  std::string run;
  switch (m.run.kind) {
    case manifest::RunKind::none:
      run = "nothing runs";
      break;
    case manifest::RunKind::command:
      for (const auto& a : m.run.command)
        run += (run.empty() ? "" : " ") + a;
      break;
    case manifest::RunKind::js:
      run = "js " + m.run.path;
      break;
    case manifest::RunKind::wasm:
      run = "wasm " + m.run.path;
      break;
  }
  const auto& p = m.permissions;
  const std::size_t granted = p.events.size() + (p.decide ? 1 : 0) + p.secrets.size() +
                              p.network.hosts.size() + (p.network.account ? 1 : 0) +
                              (p.network.local_shared ? 1 : 0) + p.files.size() + p.commands.size();
  return "run: " + run + "; " + std::to_string(granted) + " permission" +
         (granted == 1 ? "" : "s") + ", " + std::to_string(m.settings.size()) + " setting" +
         (m.settings.size() == 1 ? "" : "s");
}

// The settings given on the command line, typed by the manifest, kept by `store`.
Result<void> seed_settings(const BenchOptions& options, const manifest::Manifest& m,
                           services::SettingsStore& store) {
  if (options.settings.empty()) return {};
  json::object values;
  for (const auto& [name, text] : options.settings) {
    auto it = m.settings.find(name);
    if (it == m.settings.end()) {
      values[name] = text;  // the store refuses it, naming the settings there are
      continue;
    }
    switch (it->second.type) {
      case manifest::SettingType::string:
        values[name] = text;
        break;
      case manifest::SettingType::number: {
        char* end = nullptr;
        errno = 0;
        const double d = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || errno == ERANGE) {
          return make_error(kUsage,
                            "--setting " + name + "=" + text + ": " + name + " is a number");
        }
        values[name] = services::setting_number(d);
        break;
      }
      case manifest::SettingType::boolean:
        if (text != "true" && text != "false") {
          return make_error(kUsage, "--setting " + name + "=" + text + ": " + name +
                                        " is a boolean: true or false");
        }
        values[name] = text == "true";
        break;
    }
  }
  if (auto set = store.set(m, values); !set) {
    return make_error(kUsage, "--setting: " + set.error().message);
  }
  return {};
}

std::vector<std::string> plugin_env(const manifest::Manifest& m, const std::string& token) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    if (kv.rfind("ESCOUADE_", 0) != 0) env.push_back(std::move(kv));
  }
  env.push_back("ESCOUADE_PLUGIN_ID=" + m.id);
  env.push_back("ESCOUADE_PLUGIN_API=" + std::to_string(proto::kProtocolVersion));
  env.push_back("ESCOUADE_VERSION=" + std::string(supervisor::kEscouadeVersion));
  env.push_back(std::string(kRunMarkVariable) + "=" + token);
  return env;
}

}  // namespace

Result<BenchReport> run_bench(const BenchOptions& options) {
  BenchReport report;
  std::error_code ec;
  const fs::path folder = fs::absolute(options.folder, ec);
  report.folder = (ec ? options.folder : folder).string();

  auto m = manifest::load_manifest(options.folder);
  const std::string token = make_run_token();
  // The verdicts before the run; BenchRun keeps them.
  std::vector<CheckResult> early;
  if (!m) {
    early.push_back({"manifest", Verdict::fail, m.error().message, {}});
    for (const char* name : kCheckNames) {
      if (std::string_view(name) != "manifest")
        early.push_back({name, Verdict::skip, "because the manifest does not hold", {}});
    }
    report.checks = std::move(early);
    return report;
  }
  report.plugin_id = m->id;
  report.plugin_version = m->version;

  ScratchDir scratch;
  if (scratch.path().empty()) {
    return make_error(proto::ErrorCode::internal,
                      "cannot make a temporary folder: " + std::string(std::strerror(errno)));
  }
  auto keychain = platform::make_file_keychain(scratch.path() / "keychain");
  for (const auto& [key, value] : options.secrets) {
    if (auto kept = keychain->set(services::keychain_name(m->id, key), value); !kept) {
      return make_error(kUsage, "--secret " + key + ": " + kept.error().message);
    }
  }
  std::shared_ptr<TraceFile> trace;
  if (!options.trace.empty()) {
    auto opened = TraceFile::open(options.trace);
    if (!opened) return make_error(kUsage, "--trace: " + opened.error().message);
    trace = *opened;
  }
  services::SettingsStore settings(scratch.path() / "settings");
  if (auto seeded = seed_settings(options, *m, settings); !seeded) return seeded.error();

  JournalOptions jo;
  jo.dir = scratch.path() / "plugin-logs";
  jo.plugin_id = m->id;
  auto journal = std::make_shared<Journal>(std::move(jo));
  auto masker = std::make_shared<Masker>();
  journal->set_masker([masker](std::string& text) { masker->mask(text); });
  journal->info("escouade-plugin test: " + describe_manifest(*m));

  // Forked before the workers' thread exists (reaper.hpp).
  auto reaper = platform::start_reaper();
  if (!reaper) journal->warn("no watchdog for the plugin's processes: " + reaper.error().message);

  // In the order of base/event_loop.hpp: the loop first (destroyed last), the workers and the
  // link after it; the link outlives every completion the loop still runs.
  EventLoop loop;
  Workers workers(loop.executor(), 1);
  runtime::ProcessContext processes;
  if (reaper) {
    processes.reaper = &*reaper;
    processes.known_children.insert(reaper->pid());
  }
  // The agent of the bench's facts (bench-agent-1, in bench-project, where the plugin is on)
  // has empty folders of the bench's own for its roots and the bench's environment: a plugin's
  // fs/* and proc/spawn for it run for real, beneath them. Its temporary folder is the bench's
  // too.
  std::vector<std::string> base_env;
  for (char** e = environ; e && *e; ++e)
    base_env.emplace_back(*e);
  services::AgentBook agents;
  {
    const fs::path a = scratch.path() / "agent";
    for (const char* d : {"worktree", "repo", "home", "project"})
      fs::create_directories(a / d, ec);
    agents.projects["bench-project"] = services::ProjectPlace{false, a / "project"};
    agents.agents["bench-agent-1"] = policy::Agent{"bench-agent-1", "bench-project", a / "worktree",
                                                   a / "repo",      a / "home",      base_env};
  }
  services::ServiceContext services{{loop.executor(), &workers, keychain.get()},
                                    {&workers, &settings},
                                    {&workers},
                                    {loop.executor(), &steady_clock()},
                                    // The bench sends nothing off the machine: a plugin's
                                    // net/* is answered failed, which it must bear.
                                    {nullptr, "the conformance bench gives no network"},
                                    {&workers, &agents},
                                    {loop.executor(), &workers, &processes, &agents, base_env}};
  auto served = std::make_shared<services::ServedPlugin>();
  served->manifest = *m;
  served->grants = policy::Grants(*m);
  served->egress = policy::EgressGrant::of(*m);
  served->folder = services::OwnFolder::open(m->folder);
  served->journal = journal;
  served->masker = masker;
  served->fs_roots = policy::FsRoots(m->permissions.files);
  served->commands = policy::Commands(m->permissions.commands);
  served->temp_folder = scratch.path() / "temp";
  served->project_folders["bench-project"] = scratch.path() / "agent" / "project";
  fs::create_directories(served->temp_folder, ec);

  // The host's own routing factory: processes for run.command, the sandbox for run.js and run.wasm.
  runtime::ProcessProgramFactory process_programs(loop.executor(), processes);
  // No spare helper: the bench starts its one plugin once, and a spare made after that start
  // would only run beside the checks (under AddressSanitizer, on one core, its engine's start
  // took the burst check from 112-142 to 157-213 ms).
  sandbox::SandboxOptions sandbox_options = sandbox::SandboxOptions::installed();
  sandbox_options.spares = 0;
  sandbox::SandboxProgramFactory sandbox_programs(loop.executor(), processes,
                                                  std::move(sandbox_options));
  runtime::ProgramRouter programs;
  programs.route(runtime::RunKind::command, &process_programs);
  programs.route(runtime::RunKind::js, &sandbox_programs);
  programs.route(runtime::RunKind::wasm, &sandbox_programs);
  auto [spec, declares_run] = runtime::program_of(*m);
  spec.env = plugin_env(*m, token);
  const bool runs = declares_run && programs.runs(spec.kind);
  std::exception_ptr failure;
  {
    PluginLink link(loop.executor(), programs, services, served, std::move(spec));
    link.trace_to(trace);
    BenchRun run(link, *m, options, token);
    const auto stale = manifest::module_older_than_build(*m);
    run.set("manifest", Verdict::pass,
            m->id + " " + m->version + ", " + describe_manifest(*m) +
                (stale ? "; warning: " + *stale : ""));
    if (m->run.kind == manifest::RunKind::none) {
      run.skip_rest("it is declarative (no run): nothing runs");
    } else if (!runs) {
      run.skip_rest(
          "a run.js or run.wasm plugin runs in Escouade's sandbox, whose helper "
          "(escouade-sandbox) is not installed beside this program");
    } else {
      failure = loop.run(run.run());
    }
    // A secrets/get answered on a worker may still be on its way back when the run ends (a
    // plugin that asks and exits at once): the link is closed, the workers closed, and what
    // they queued runs against the closed link, before the link goes.
    link.close();
    workers.close(Workers::kCloseBound);
    loop.drain();
    report.checks = run.results();
    report.calls = link.calls();
  }
  kill_leftovers(token);
  if (reaper) reaper->close();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      return make_error(proto::ErrorCode::internal, std::string("the bench failed: ") + e.what());
    }
  }
  report.journal = journal->tail(500);
  return report;
}

}  // namespace escouade::conformance
