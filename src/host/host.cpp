#include "host/host.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <memory>
#include <utility>

#include "base/private_dirs.hpp"
#include "host/after_its_end.hpp"
#include "manifest/install_words.hpp"
#include "policy/audience.hpp"
#include "protocol/attachment.hpp"
#include "protocol/default_answers.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "protocol/json_strings.hpp"
#include "protocol/message.hpp"
#include "protocol/wire_error.hpp"
#include "rpc/session.hpp"
#include "runtime/module_fingerprint.hpp"
#include "runtime/own_folder.hpp"
#include "runtime/tree_ender.hpp"
#include "services/bind.hpp"

namespace escouade::host {

namespace asio = boost::asio;
namespace json = boost::json;
using proto::ErrorCode;

namespace {

constexpr auto kInvalidParams = ErrorCode::invalid_params;
constexpr auto kFailed = ErrorCode::failed;
constexpr auto kShutdownWindow = std::chrono::seconds(1);  // for all plugins together

std::optional<std::string> run_name(manifest::RunKind k) {
  switch (k) {
    case manifest::RunKind::command:
      return "command";
    case manifest::RunKind::js:
      return "js";
    case manifest::RunKind::wasm:
      return "wasm";
    case manifest::RunKind::none:
      break;
  }
  return std::nullopt;
}

}  // namespace

Error no_such_plugin(std::string_view id) {
  return Error{ErrorCode::invalid_params, "no plugin " + std::string(id) + " is loaded"};
}

Host::Host(asio::any_io_executor executor, HostConfig config, runtime::ProgramFactory& programs,
           StatusListener on_status, Clock& clock)
    : executor_(std::move(executor)),
      config_(std::move(config)),
      programs_(programs),
      clock_(clock),
      on_status_(std::move(on_status)),
      journal_writer_(config_.journal_at_once ? nullptr : std::make_shared<JournalWriter>()),
      workers_(executor_, config_.worker_threads),
      settings_(config_.data_dir / "plugin-settings"),
      timer_pacer_(executor_, clock_) {
  // The data folder is its user's alone (journals, settings, compiled bundles): made 0700 when
  // it is not there yet. One that cannot be made shows in each part that writes beneath it.
  if (!config_.data_dir.empty()) (void)create_private_directories(config_.data_dir);
  services_.secrets = {executor_, &workers_, config_.keychain};
  services_.settings = {&workers_, &settings_};
  services_.files = {&workers_};
  services_.timers = {executor_, &clock_, &timer_pacer_};
  // One context for every process the host starts: two would each end the other's children as
  // orphans when a program of theirs ends.
  runtime::ProcessContext* processes = config_.processes;
  if (!processes) processes = programs_.process_context();
  if (!processes) {
    own_ender_ = std::make_unique<runtime::TreeEnder>(executor_);
    own_processes_ = std::make_unique<runtime::ProcessContext>();
    own_processes_->ender = own_ender_.get();
    processes = own_processes_.get();
  }
  services_.fs = {&workers_, &agents_};
  services_.proc = {executor_, &workers_, processes, &agents_, config_.base_env};
  start_network();
}

Host::~Host() {
  // The completions of calls ended below still run (the callers get their answers), but they
  // no longer read the plugins' states.
  lifeline_.end();
  // Supervisors first: they end their programs, close their sessions (calls under way get their
  // default answers) and write to their journals. Then the blocking work: what has not started
  // is dropped, what runs is waited for within a bound (its answers go nowhere: the sessions are
  // closed), and a stuck one is left behind rather than waited for (services/workers.hpp).
  for (auto& [id, p] : plugins_)
    p->supervisor.reset();
  workers_.close(Workers::kCloseBound);
}

Host::Plugin* Host::find(std::string_view id) {
  auto it = plugins_.find(id);
  return it == plugins_.end() ? nullptr : it->second.get();
}

const Host::Plugin* Host::find(std::string_view id) const {
  auto it = plugins_.find(id);
  return it == plugins_.end() ? nullptr : it->second.get();
}

supervisor::SupervisorConfig Host::supervisor_config(const manifest::Manifest& m) const {
  supervisor::SupervisorConfig c;
  c.id = m.id;
  c.version = m.version;
  auto [spec, runs] = runtime::program_of(m);
  c.program = std::move(spec);
  // Declarative plugins, plugins with no activation and kinds no factory runs here never start:
  // calls to them get their default answers.
  c.runnable = runs && !m.activation.empty() && programs_.runs(c.program.kind);
  for (const auto& kv : config_.base_env) {
    if (kv.rfind("ESCOUADE_", 0) != 0) c.program.env.push_back(kv);
  }
  c.program.env.push_back("ESCOUADE_PLUGIN_ID=" + m.id);
  c.program.env.push_back("ESCOUADE_PLUGIN_API=" + std::to_string(proto::kProtocolVersion));
  c.program.env.push_back("ESCOUADE_VERSION=" + config_.escouade_version);
  c.escouade_version = config_.escouade_version;
  c.program.escouade_version = config_.escouade_version;
  c.trace = config_.trace;
  c.lang = config_.lang;
  c.memory_limit_bytes = config_.memory_limit_mb * 1024 * 1024;
  c.memory_period = config_.memory_period;
  return c;
}

JournalOptions Host::journal_options(const std::string& id) const {
  JournalOptions jo;
  jo.dir = config_.data_dir / "plugin-logs";
  jo.plugin_id = id;
  jo.writer = journal_writer_;
  return jo;
}

Result<void> Host::check_fingerprint(const manifest::Manifest& m, const std::string& sha256) {
  if (!runtime::is_sha256_hex(sha256))
    return Error{proto::ErrorCode::invalid_params,
                 "sha256: \"" + sha256.substr(0, 80) +
                     "\" is not a SHA-256: expected 64 hexadecimal digits"};
  const auto [spec, runs] = runtime::program_of(m);
  if (!runs || (spec.kind != runtime::RunKind::js && spec.kind != runtime::RunKind::wasm))
    return Error{
        proto::ErrorCode::invalid_params,
        "sha256: only a run.js or run.wasm plugin has a module to check; " + m.id + " has none"};
  std::error_code ec;
  const auto relative = std::filesystem::relative(spec.module, spec.folder, ec);
  const std::string name =
      ec || relative.empty() ? spec.module.filename().string() : relative.generic_string();
  // Read as the sandbox reads it: beneath its folder, no link out, its size while it is read.
  auto bytes = runtime::OwnFolder::open(spec.folder)->read_bytes(name, manifest::kMaxModuleBytes);
  if (!bytes) {
    return Error{proto::ErrorCode::invalid_params,
                 "its module " + name + " cannot be read: " + bytes.error().message};
  }
  auto wrong = runtime::fingerprint_mismatch(name, *bytes, sha256);
  if (!wrong) return {};
  // Its journal says so, loaded before or not: the app shows it by its id.
  if (Plugin* known = find(m.id)) {
    known->journal->error("refused: " + *wrong);
  } else {
    Journal(journal_options(m.id)).error("refused: " + *wrong);
  }
  return Error{proto::ErrorCode::invalid_params, *wrong};
}

Result<Loaded> Host::load(const std::filesystem::path& folder,
                          std::optional<std::string> module_sha256) {
  auto m = manifest::load_manifest(folder, config_.check_environment);
  if (!m) return m.error();
  // Before anything of the plugin changes: a refused update leaves the version that runs.
  if (module_sha256) {
    if (auto checked = check_fingerprint(*m, *module_sha256); !checked) return checked.error();
  }
  const std::string id = m->id;
  Plugin* p = find(id);
  if (!p) {
    auto fresh = std::make_unique<Plugin>();
    fresh->journal = std::make_shared<Journal>(journal_options(id));
    fresh->masker = std::make_shared<Masker>();
    fresh->journal->set_masker([m = fresh->masker](std::string& text) { m->mask(text); });
    fresh->temp_folder = make_temp_folder(id);
    p = fresh.get();
    plugins_.emplace(id, std::move(fresh));
    load_order_.push_back(p);
  } else {
    p->supervisor.reset();  // an update: its process ends, the next one starts from now's manifest
  }
  p->manifest = std::move(*m);
  p->module_sha256 = std::move(module_sha256);
  p->journal->info("loaded: version " + p->manifest.version + " from " +
                   p->manifest.folder.string() +
                   (p->module_sha256 ? ", its module's fingerprint checked" : ""));
  auto config = supervisor_config(p->manifest);
  config.program.module_sha256 = p->module_sha256;
  // A sandboxed module compiles now; its journal says when it is compiled, and why again.
  if (config.runnable)
    programs_.prepare(config.program, [journal = p->journal](std::string_view sentence) {
      journal->info(sentence);
    });
  p->supervisor = std::make_unique<supervisor::Supervisor>(executor_, std::move(config), programs_,
                                                           *p->journal, on_status_, clock_);
  serve(*p);

  Loaded out;
  out.id = id;
  out.version = p->manifest.version;
  out.run = run_name(p->manifest.run.kind);
  for (const auto& a : p->manifest.activation)
    out.activation.push_back("event:" + a.text);
  out.runs_as = manifest::runs_as(p->manifest);
  out.asks = manifest::capabilities_asked(p->manifest);
  return out;
}

void Host::serve(Plugin& p) {
  p.served = std::make_shared<services::ServedPlugin>();
  p.served->manifest = p.manifest;
  p.served->grants = policy::Grants(p.manifest);
  p.served->egress = egress_of(p);
  p.served->folder = services::OwnFolder::open(p.manifest.folder);
  p.served->journal = p.journal;
  p.served->masker = p.masker;
  p.served->fs_roots = policy::FsRoots(p.manifest.permissions.files);
  p.served->commands = policy::Commands(p.manifest.permissions.commands);
  p.served->temp_folder = p.temp_folder;
  update_project_folders(p);
  p.supervisor->set_binder(
      [this, served = p.served](rpc::Session& session, services::RunScope& run) {
        services::bind_services(session, run, services_, served);
      });
}

void Host::update_project_folders(Plugin& p) {
  p.served->project_folders.clear();
  for (const auto& [pid, project] : p.projects)
    p.served->project_folders.emplace(pid, project.folder);
}

Result<void> Host::enable(std::string_view id, const Project& project) {
  Plugin* p = find(id);
  if (!p) return no_such_plugin(id);
  const bool was_on = !p->projects.empty();
  p->projects[project.id] = project;
  agents_.projects.insert_or_assign(project.id,
                                    services::ProjectPlace{project.is_private, project.folder});
  update_project_folders(*p);
  if (!was_on) {
    p->journal->info("switched on for " + project.name + " (" + project.id + ")");
    p->supervisor->set_enabled(true);
  }
  return {};
}

Result<void> Host::disable(std::string_view id, std::string_view project_id) {
  Plugin* p = find(id);
  if (!p) return no_such_plugin(id);
  auto it = p->projects.find(std::string(project_id));
  if (it == p->projects.end()) return {};
  p->journal->info("switched off for " + it->second.name + " (" + it->second.id + ")");
  const std::string name = it->second.name;
  p->projects.erase(it);
  update_project_folders(*p);
  // Switched off: its process is stopped; it starts again by activation where it is still on.
  if (p->projects.empty()) {
    p->supervisor->set_enabled(false);
  } else {
    p->supervisor->recycle("switched off for " + name);
  }
  return {};
}

Result<std::vector<std::string>> Host::publish(const proto::Fact& fact) {
  const std::string_view fact_name = proto::to_string(fact.name);
  std::optional<std::string> project;
  if (fact.project) project = fact.project->id;
  // Written once, whatever the number of plugins it goes to.
  std::optional<rpc::Outgoing> message;
  std::vector<std::string> delivered;
  delivered.reserve(load_order_.size());
  // Each plugin that hears it is handed the message once the next one is found: the last one
  // is given the message itself, whose line it takes without a copy (callgrind, bench_host
  // facts 1: an allocation and a copy of the line a fact fewer).
  Plugin* hearing = nullptr;
  bool hearing_activates = false;
  const auto hand = [&](Plugin& p, rpc::Outgoing m, bool activates) {
    if (p.supervisor->notify(std::move(m), activates)) delivered.push_back(p.manifest.id);
  };
  for (Plugin* plugin : load_order_) {
    Plugin& p = *plugin;
    const policy::OnFor on{!p.projects.empty(), project && p.projects.count(*project) > 0};
    const auto [hears, activates] =
        p.served->grants.fact_audience(on, fact_name, project.has_value());
    if (!hears) {
      if (activates) p.supervisor->activate();
      continue;
    }
    if (!message) {
      auto made = rpc::Outgoing::notification<proto::method::EventsFact>(fact);
      if (!made) return Error{kInvalidParams, "fact: " + made.error().message};
      message = std::move(*made);
    }
    if (hearing) hand(*hearing, *message, hearing_activates);
    hearing = &p;
    hearing_activates = activates;
  }
  if (hearing) hand(*hearing, std::move(*message), hearing_activates);
  return delivered;
}

// What a call's outcome gives its caller: nullopt when `o` holds a result to give (the plugin's,
// masked when it was given secrets, or the method's default answer in o.result), else the error
// that says why there is none. `host`: null once the host is gone.
std::optional<Error> Host::settle(const CallEnd& end, rpc::CallOutcome& o, const Host* host) {
  if (!o.ok() && o.kind != rpc::CallOutcome::Kind::error) {
    if (auto fallback = proto::default_result(end.method)) {
      o.result = std::move(*fallback);
      o.result_text.clear();
      return std::nullopt;
    }
  }
  switch (o.kind) {
    case rpc::CallOutcome::Kind::result:
      // Every text a plugin gives the app passes through its masker: a secret it was given
      // and sends back in a result reaches the app's screens as ••••, like its journal.
      // A plugin given no secret has nothing to mask: its result is not walked, nor built
      // when it came as text (a call's hot path).
      if (end.masker && end.masker->size() > 0) {
        if (!o.result_text.empty()) {
          o.result = json::parse(o.result_text);  // checked JSON: it parses
          o.result_text.clear();
        }
        proto::rewrite_strings(o.result, [&](std::string& s) { end.journal->mask(s); });
      }
      return std::nullopt;
    case rpc::CallOutcome::Kind::error: {
      // The plugin's words reach the app through its masker, as its journal's do.
      std::string message = o.error.message;
      end.journal->mask(message);
      return Error{proto::peer_error(o.error.code), std::move(message)};
    }
    case rpc::CallOutcome::Kind::timeout:
      return Error{kFailed,
                   end.method + ": no answer within " + std::to_string(end.delay.count()) + " ms"};
    case rpc::CallOutcome::Kind::closed:
      break;
  }
  const std::string why = host ? end.plugin + " " + host->unanswered_because(end.plugin)
                               : end.plugin + " is closing with the host";
  return Error{kFailed, end.method + ": not answered: " + why};
}

void Host::call(std::string_view id, rpc::Outgoing request,
                std::optional<std::chrono::milliseconds> timeout, CallDone done) {
  Plugin* p = find(id);
  if (!p) {
    asio::post(executor_, [done = std::move(done), e = no_such_plugin(id)] { done(e); });
    return;
  }
  const auto delay = timeout.value_or(request.default_delay());
  const auto form = request.form();
  // A decision asked this way is journaled as host/decide journals it (its name made now).
  std::optional<std::string> decision;
  if (request.method() == proto::method::PermissionsDecide::kName)
    decision = decision_asked(request.params_text());
  // Moved into the completion, not copied: its journal and masker are shared pointers.
  auto finish =
      [done = std::move(done),
       end = CallEnd{std::string(id), std::string(request.method()), delay, p->journal, p->masker},
       form, host = lifeline_.token(), this, decision = std::move(decision)](rpc::CallOutcome o) {
        if (decision && host) {
          if (const Plugin* asked = find(end.plugin)) journal_vote(*asked, *decision, o, true);
        }
        if (auto e = settle(end, o, host ? this : nullptr)) return done(std::move(*e));
        Answer a;
        if (form == rpc::ResultForm::value) {
          // Taken with the storage it was read into: an assignment would copy it out of it.
          proto::adopt(a.value, std::move(o.result));
        } else if (o.result_text.empty()) {
          a.text = json::serialize(o.result);  // built on the way (masked, or a default answer)
        } else {
          a.text = std::move(o.result_text);
        }
        done(std::move(a));
      };
  if (request.method() == supervisor::kAttachMethod && !request.params_text().empty()) {
    const std::string agent = proto::attached_agent(request.params_text());
    p->supervisor->attach(agent, std::move(request), after_its_end(std::move(finish), executor_));
  } else {
    p->supervisor->call(std::move(request), delay, after_its_end(std::move(finish), executor_));
  }
}

std::string Host::unanswered_because(std::string_view id) const {
  const Plugin* p = find(id);
  if (!p || !p->supervisor) return "is being replaced or removed";
  if (!p->supervisor->config().runnable) {
    return "does not run: its manifest gives no program it can start, or no activation";
  }
  const auto st = p->supervisor->status();
  std::string why = "is " + std::string(supervisor::to_string(st.state));
  if (!st.reason.empty()) why += ": " + st.reason;
  return why;
}

Result<void> Host::restart(std::string_view id) {
  Plugin* p = find(id);
  if (!p) return no_such_plugin(id);
  p->supervisor->restart();
  return {};
}

Result<std::vector<supervisor::Status>> Host::status(std::optional<std::string_view> id) const {
  std::vector<supervisor::Status> out;
  if (id) {
    const Plugin* p = find(*id);
    if (!p) return no_such_plugin(*id);
    out.push_back(p->supervisor->status());
    return out;
  }
  for (const Plugin* p : load_order_)
    out.push_back(p->supervisor->status());
  return out;
}

Result<std::vector<std::string>> Host::journal(std::string_view id, std::size_t lines) const {
  const Plugin* p = find(id);
  if (!p) return no_such_plugin(id);
  return p->journal->tail(lines);
}

void Host::shutdown(std::function<void()> done) {
  const auto deadline = clock_.now() + kShutdownWindow;
  auto left = std::make_shared<std::size_t>(plugins_.size() + 1);
  auto one_done = [left, done = std::move(done)]() {
    if (--*left == 0 && done) done();
  };
  for (Plugin* p : load_order_)
    p->supervisor->shutdown(deadline, one_done);
  one_done();
}

}  // namespace escouade::host
