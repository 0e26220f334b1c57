#pragma once

// The host: the composition root an app drives. It loads plugins from their folders, switches
// them on and off per project, routes facts and calls to each plugin's Supervisor, and closes
// them all. It holds no policy of its own beyond routing.
//
// Thread: the host's thread (the executor given); no method may be called from another.

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/lifeline.hpp"
#include "base/result.hpp"
#include "journal/journal.hpp"
#include "journal/journal_writer.hpp"
#include "journal/masker.hpp"
#include "manifest/manifest.hpp"
#include "net/client.hpp"
#include "policy/decisions.hpp"
#include "protocol/gen/types.hpp"
#include "rpc/outgoing.hpp"
#include "runtime/process_program.hpp"
#include "runtime/program.hpp"
#include "services/context.hpp"
#include "services/settings.hpp"
#include "services/timer_pacer.hpp"
#include "supervisor/handshake.hpp"
#include "supervisor/supervisor.hpp"

namespace escouade::platform {
class Keychain;
}

namespace escouade::host {

struct HostConfig {
  std::filesystem::path data_dir;  // journals in <data dir>/plugin-logs
  std::string escouade_version{supervisor::kEscouadeVersion};
  std::string lang = "en";
  std::uint64_t memory_limit_mb = 1024;
  std::chrono::milliseconds memory_period{2000};
  // The environment plugins start with ("K=V"); the host adds ESCOUADE_PLUGIN_ID,
  // ESCOUADE_PLUGIN_API and ESCOUADE_VERSION and removes any other ESCOUADE_ variable.
  std::vector<std::string> base_env;
  // Where a bare program name of run.command is looked up (the app's PATH).
  manifest::CheckEnvironment check_environment;
  // Where plugins' secrets are kept; not owned, outlives the host. None: secrets/get answers
  // -32002 (the keychain cannot be reached).
  platform::Keychain* keychain = nullptr;
  // Threads for blocking work (the keychain, files, settings).
  std::size_t worker_threads = 2;
  // Each journal line written to its file before the host goes on, instead of by the journals'
  // writer thread about 10 ms later: slower, but a line is on disk before any answer or status
  // that follows it, for one who follows the files (the author's harness, escouade-plugin run).
  bool journal_at_once = false;
  // Every line between the host and each plugin, both ways, with its time, masked
  // (journal/trace_file.hpp): escouade-host --trace FILE. Shared by the plugins.
  std::shared_ptr<TraceFile> trace;
  // Settings › Network: the proxy and the extra certificates net/* of sandboxed plugins use
  // (escouade-host --proxy, --ca-file). Settings that cannot be used leave the plugins no
  // network: net/* answer failed with the reason (escouade-host refuses them at its start).
  net::Settings network;
  // What the programs proc/spawn starts share with the plugins' own processes: the pids the host
  // started (which the reaping of orphans leaves alone), the watchdog and the tree ender. Not
  // owned, outlives the host. None: the program factory's (ProgramFactory::process_context), and
  // when it has none, one of the host's own, without a watchdog.
  runtime::ProcessContext* processes = nullptr;
};

struct Project {
  std::string id;
  std::string name;
  // Kept for the fence of fs/* and proc/spawn's dir ("Projet privé"); a private project's facts
  // and requests already reach only the plugins on for it, as every project's do
  // (policy/audience.hpp).
  bool is_private = false;
  std::filesystem::path folder;  // may be empty
};

// What host/load answers.
struct Loaded {
  std::string id;
  std::string version;
  std::optional<std::string> run;  // "command", "js", "wasm"; nullopt: declarative
  std::vector<std::string> activation;
  std::string runs_as;            // what the install window says (manifest/install_words.hpp)
  std::vector<std::string> asks;  // each capability asked, a sentence each
};

// A plugin's result to a call, in the form its request asked: `value` (ResultForm::value), or
// `text` (ResultForm::text: the plugin's JSON as it came, or written again when it had to be
// built on the way: masked, or a default answer).
struct Answer {
  boost::json::value value;
  std::string text;
};

class Host {
 public:
  using StatusListener = std::function<void(const supervisor::Status&)>;
  using CallDone = std::function<void(Result<Answer>)>;
  using DecideDone = std::function<void(Result<policy::Verdict>)>;
  using Done = std::function<void(Result<void>)>;

  // `programs` makes each plugin's program by its kind (runtime::ProgramRouter); it and `clock`,
  // which keeps every delay, outlive the host.
  Host(boost::asio::any_io_executor executor, HostConfig config, runtime::ProgramFactory& programs,
       StatusListener on_status, Clock& clock = steady_clock());
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  // Checks the manifest of the plugin in `folder`; the plugin is then known, not started.
  // Loading an id again replaces it: its process is stopped and the next one gets the
  // manifest and permissions of now. `module_sha256`: the fingerprint of a store plugin's module
  // (plugin.wasm, or a run.js plugin's bundle) from its version.json; a module whose SHA-256
  // differs is refused (-32602, both digests named, journaled), nothing of the plugin changed
  // and nothing compiled, and every later compile and start checks the bytes it reads against
  // it again. Without one, the module is trusted as a folder's is.
  Result<Loaded> load(const std::filesystem::path& folder,
                      std::optional<std::string> module_sha256 = std::nullopt);
  // Switches the plugin on or off for a project. Switched off: its process is stopped; when it
  // is on for no project any more, its state is disabled.
  Result<void> enable(std::string_view id, const Project& project);
  Result<void> disable(std::string_view id, std::string_view project_id);

  // A fact from the app: to each plugin that is on for its project (any plugin that is on
  // somewhere when the fact names no project) and whose activation or permissions.events names
  // it; a plugin whose activation names it is started. Returns the ids it went or is queued to.
  // Its line is written once, whatever the number of plugins it goes to.
  Result<std::vector<std::string>> publish(const proto::Fact& fact);

  // A call to a plugin (agent/attach included: remembered and given again after a restart):
  // `request` is one message, made by name with its params as text or values, or from the
  // generated types. `done` gets the plugin's result, in the form the request asks
  // (rpc::ResultForm), or its error. No answer within the delay (`timeout`, else the request's
  // default one), or a plugin that crashed or does not run: the method's default answer when it
  // has one (permissions/decide: {"decision":"ask"}), else failed (-32004) with the reason.
  // An answer the plugin gave before the host went on (read as soon as the request is written,
  // rpc::Session::call) gets to `done` before call() returns.
  void call(std::string_view id, rpc::Outgoing request,
            std::optional<std::chrono::milliseconds> timeout, CallDone done);

  // A permission request (DecideParams) asked of each plugin that declares permissions.decide
  // and is on for its project, all at once, each within the delay of permissions/decide
  // (500 ms): `done` gets their combined verdict (policy/decisions.hpp) within the delay,
  // however many take part.
  void decide(const proto::DecideParams& request, DecideDone done);

  // The app keeps or forgets a plugin's secret (`key`, one its permissions.secrets grant) in the
  // keychain, as plugin:<id>:<key>. `done` on the host's thread: -32602 for an unknown plugin or
  // a key it does not declare, -32002 when the keychain cannot be reached.
  void set_secret(std::string_view id, const std::string& key, std::string value, Done done);
  void delete_secret(std::string_view id, const std::string& key, Done done);

  // The user's values of the plugin's settings (contributes.settings), kept in
  // <data dir>/plugin-settings: merged into those set before; a null value forgets one.
  Result<void> set_settings(std::string_view id, const boost::json::object& values);

  // What {account} in the plugin's permissions.network means now: the hosts the user typed for
  // its accounts, each "host:port" (an IPv6 address in brackets); they replace those set
  // before. -32602 for a plugin that does not declare {account}, or an entry that is no
  // host:port.
  Result<void> set_account_hosts(std::string_view id, const std::vector<std::string>& hosts);
  // The port of the local server of the plugin's harness (local:shared), or nullopt once it
  // ended. -32602 for a plugin that does not declare local:shared, or a port outside 1-65535.
  Result<void> set_shared_port(std::string_view id, std::optional<std::int64_t> port);
  // An agent as fs/* and proc/spawn see it (host/agents/set): set again, it replaces what was
  // set before. -32602 for an empty key or project, or a root that is not an absolute path, or
  // an env variable whose name is empty or holds '='. Its roots are kept as their real paths.
  Result<void> set_agent(policy::Agent agent);
  // Forgets it; -32602 when no agent has that key.
  Result<void> remove_agent(std::string_view key);
  Result<void> restart(std::string_view id);
  // One plugin's status, or every plugin's in the order they were loaded.
  Result<std::vector<supervisor::Status>> status(std::optional<std::string_view> id) const;
  Result<std::vector<std::string>> journal(std::string_view id, std::size_t lines) const;

  // shutdown to each running plugin, one second at most for all of them together, then each
  // process tree ends; `done` once none runs.
  void shutdown(std::function<void()> done);

 private:
  struct Plugin {
    manifest::Manifest manifest;
    std::shared_ptr<Journal> journal;
    std::shared_ptr<Masker> masker;  // the secrets given to it, masked in its journal
    // What the services know of it; a new one with each manifest.
    std::shared_ptr<services::ServedPlugin> served;
    std::unique_ptr<supervisor::Supervisor> supervisor;
    std::map<std::string, Project> projects;   // where it is on, by project id
    std::optional<std::string> module_sha256;  // its store's fingerprint of its module
    std::vector<std::string> account_hosts;    // host/accounts/set
    std::optional<std::uint16_t> shared_port;  // host/shared/set
    std::filesystem::path temp_folder;         // the root temp of its fs/*
  };
  JournalOptions journal_options(const std::string& id) const;
  // The fingerprint given to load() checked against the module as it is now; the error says
  // why it is refused.
  Result<void> check_fingerprint(const manifest::Manifest& m, const std::string& sha256);

  // What the end of one call needs to know, kept by its completion.
  struct CallEnd {
    std::string plugin;
    std::string method;
    std::chrono::milliseconds delay;
    std::shared_ptr<Journal> journal;
    std::shared_ptr<Masker> masker;
  };
  static std::optional<Error> settle(const CallEnd& end, rpc::CallOutcome& o, const Host* host);
  // A permissions/decide sent through call() (host/call) is journaled as Host::decide journals
  // each vote: decision_asked() names the request from its params as sent (`permissions/decide
  // "r-1" (command)`), and journal_vote() writes the plugin's vote, first thing in the call's
  // completion, before settle().
  static std::string decision_asked(std::string_view params);
  void journal_vote(const Plugin& p, const std::string& what, rpc::CallOutcome& o,
                    bool host_alive) const;
  Plugin* find(std::string_view id);
  const Plugin* find(std::string_view id) const;
  void serve(Plugin& p);
  // host_network.cpp: the client of net/*, and what a plugin's net/* may reach.
  void start_network();
  static policy::EgressGrant egress_of(const Plugin& p);
  void update_project_folders(Plugin& p);
  // host_agents.cpp: the temporary folder of a plugin (the root temp), made empty; none when
  // the host has no data folder or cannot make it.
  std::filesystem::path make_temp_folder(std::string_view id);
  supervisor::SupervisorConfig supervisor_config(const manifest::Manifest& m) const;
  // Why a call to the plugin got no answer (its state and reason now), after its id: "is
  // stopped: stopped after 4 crashes within 5 minutes".
  std::string unanswered_because(std::string_view id) const;

  boost::asio::any_io_executor executor_;
  HostConfig config_;
  runtime::ProgramFactory& programs_;
  Clock& clock_;
  StatusListener on_status_;
  // Writes every plugin's journal off this thread; shared with each journal, so it ends with
  // the last of them, after writing what is still queued.
  std::shared_ptr<JournalWriter> journal_writer_;
  Workers workers_;
  services::SettingsStore settings_;
  // The sandboxed plugins' timers fire within their share of this thread; before the plugins,
  // whose runs' timers use it until they end.
  services::TimerPacer timer_pacer_;
  // The programs of proc/spawn end with their runs, which end before this does.
  std::unique_ptr<runtime::TreeEnder> own_ender_;
  std::unique_ptr<runtime::ProcessContext> own_processes_;
  services::AgentBook agents_;
  services::ServiceContext services_;
  std::shared_ptr<net::Client> net_client_;  // null when the network settings cannot be used
  std::map<std::string, std::unique_ptr<Plugin>, std::less<>> plugins_;
  std::vector<Plugin*> load_order_;  // the plugins_ in the order they were loaded
  // Guards the completions given to the supervisors: they may run while a supervisor or the
  // host itself is being destroyed (docs/lifetimes.md).
  Lifeline lifeline_;
};

// The error for an id no plugin loaded has: invalidParams.
Error no_such_plugin(std::string_view id);

}  // namespace escouade::host
