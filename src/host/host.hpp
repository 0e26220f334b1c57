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

#include "base/result.hpp"
#include "journal/journal.hpp"
#include "manifest/manifest.hpp"
#include "runtime/program.hpp"
#include "supervisor/supervisor.hpp"

namespace escouade::host {

struct HostConfig {
  std::filesystem::path data_dir;  // journals in <data dir>/plugin-logs
  std::string escouade_version = "2.1.1";
  std::string lang = "en";
  std::uint64_t memory_limit_mb = 1024;
  std::chrono::milliseconds memory_period{2000};
  // The environment plugins start with ("K=V"); the host adds ESCOUADE_PLUGIN_ID,
  // ESCOUADE_PLUGIN_API and ESCOUADE_VERSION and removes any other ESCOUADE_ variable.
  std::vector<std::string> base_env;
  // Where a bare program name of run.command is looked up (the app's PATH).
  manifest::CheckEnvironment check_environment;
};

struct Project {
  std::string id;
  std::string name;
  bool is_private = false;
  std::filesystem::path folder;  // may be empty
};

// What host/load answers.
struct Loaded {
  std::string id;
  std::string version;
  std::optional<std::string> run;  // "command", "js", "wasm"; nullopt: declarative
  std::vector<std::string> activation;
};

class Host {
 public:
  using StatusListener = std::function<void(const supervisor::Status&)>;
  using CallDone = std::function<void(Result<boost::json::value>)>;

  Host(boost::asio::any_io_executor executor, HostConfig config, runtime::ProgramFactory& programs,
       StatusListener on_status);
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  // Checks the manifest of the plugin in `folder`; the plugin is then known, not started.
  // Loading an id again replaces it: its process is stopped and the next one gets the
  // manifest and permissions of now.
  Result<Loaded> load(const std::filesystem::path& folder);
  // Switches the plugin on or off for a project. Switched off: its process is stopped; when it
  // is on for no project any more, its state is disabled.
  Result<void> enable(std::string_view id, const Project& project);
  Result<void> disable(std::string_view id, std::string_view project_id);

  // A fact from the app: to each plugin that is on for its project (any plugin that is on
  // somewhere when the fact names no project) and whose activation or permissions.events names
  // it; a plugin whose activation names it is started. Returns the ids it went or is queued to.
  Result<std::vector<std::string>> publish(const boost::json::value& fact);

  // A call to a plugin (agent/attach included: remembered and given again after a restart).
  // `done` gets the plugin's result or its error. No answer within the delay, or a plugin that
  // crashed or does not run: the method's default answer when it has one (permissions/decide:
  // {"decision":"ask"}), else failed (-32004) with the reason.
  void call(std::string_view id, const std::string& method,
            std::optional<boost::json::value> params,
            std::optional<std::chrono::milliseconds> timeout, CallDone done);

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
    std::unique_ptr<Journal> journal;
    std::unique_ptr<supervisor::Supervisor> supervisor;
    std::map<std::string, Project> projects;  // where it is on, by project id
  };

  Plugin* find(std::string_view id);
  const Plugin* find(std::string_view id) const;
  supervisor::SupervisorConfig supervisor_config(const manifest::Manifest& m) const;

  boost::asio::any_io_executor executor_;
  HostConfig config_;
  runtime::ProgramFactory& programs_;
  StatusListener on_status_;
  std::map<std::string, std::unique_ptr<Plugin>, std::less<>> plugins_;
  std::vector<std::string> load_order_;
};

// Where an agent/attach call is about: its params' "agent" (a string, or an object's "id"),
// else its "key". Empty when it names none.
std::string attached_agent(const boost::json::value& params);

}  // namespace escouade::host
