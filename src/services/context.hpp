#pragma once

// What the services share, and what they know of each plugin they serve.

#include <boost/asio/any_io_executor.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.hpp"
#include "base/workers.hpp"
#include "journal/journal.hpp"
#include "journal/masker.hpp"
#include "manifest/manifest.hpp"
#include "policy/commands.hpp"
#include "policy/egress.hpp"
#include "policy/fs_roots.hpp"
#include "policy/grants.hpp"
#include "services/files.hpp"

namespace escouade::platform {
class Keychain;
}
namespace escouade::net {
class Client;
}
namespace escouade::runtime {
struct ProcessContext;
}

namespace escouade::services {

class SettingsStore;

// The host's parts each service uses, owned by the host and living longer than every session
// bound with them (the host closes the workers before the keychain and the settings go). One
// struct a service, so that each is given what it uses and nothing else.
struct SecretsContext {
  boost::asio::any_io_executor host;  // the host's thread: answers and journal lines there
  Workers* workers = nullptr;         // the keychain's blocking calls
  platform::Keychain* keychain = nullptr;
};

struct SettingsContext {
  Workers* workers = nullptr;  // reading the settings and .escouade.yml files
  SettingsStore* store = nullptr;
};

struct FilesContext {
  Workers* workers = nullptr;  // reading a plugin's own files
};

// timer/* (services/timers.hpp): the host's loop runs the timers, `clock` keeps their time.
class TimerPacer;
struct TimersContext {
  boost::asio::any_io_executor host;
  Clock* clock = nullptr;
  // Every sandboxed plugin's firings within their rates (timer_pacer.hpp); null: none paced.
  TimerPacer* pacer = nullptr;
};

// net/* (services/net.hpp): the host's one HTTP(S) client, whose handlers run on the host's
// thread. Null: the host has no network to give (net/* answer failed).
struct NetContext {
  net::Client* client = nullptr;
  std::string why_none;  // when there is no client: the reason net/* fail with
};

// A project as the app named it (host/enable): whether it is private, and its folder.
struct ProjectPlace {
  bool is_private = true;
  std::filesystem::path folder;
};

// The agents the app set (host/agents/set) and the projects it named, which fs/* and proc/spawn
// judge against. Owned by the host, read and changed on its thread only.
struct AgentBook {
  std::map<std::string, policy::Agent, std::less<>> agents;
  std::map<std::string, ProjectPlace, std::less<>> projects;

  const policy::Agent* find(std::string_view key) const {
    auto it = agents.find(key);
    return it == agents.end() ? nullptr : &it->second;
  }
};

// fs/* (services/fs.hpp): the judging on the host's thread, the files on the workers.
struct FsContext {
  Workers* workers = nullptr;
  const AgentBook* agents = nullptr;
};

// proc/* (services/proc.hpp): each program found on its PATH by the workers (the disk), its
// pipes read on the host's thread, its tree ended by the tree ender of `processes`, whose
// known children it joins while it runs.
struct ProcContext {
  boost::asio::any_io_executor host;
  Workers* workers = nullptr;
  runtime::ProcessContext* processes = nullptr;
  const AgentBook* agents = nullptr;
  // The environment of a program started for no agent ("K=V"): the app's, as plugins get it.
  std::vector<std::string> base_env;
};

struct ServiceContext {
  SecretsContext secrets;
  SettingsContext settings;
  FilesContext files;
  TimersContext timers;
  NetContext net;
  FsContext fs;
  ProcContext proc;
};

// One plugin as the services see it: the manifest of now (its permissions), its journal and
// the masker of the secrets it was given, and the folders of the projects where it is on.
// Shared by the host and the handlers of its sessions (and their work in flight); read and
// changed on the host's thread only. A new manifest (an update, a permission taken back) makes
// a new ServedPlugin; the journal and the masker stay the plugin's for as long as it is loaded.
struct ServedPlugin {
  manifest::Manifest manifest;
  // What the manifest grants, built once from it (deny by default: made from nothing, nothing).
  policy::Grants grants;
  // Where its net/* and ws/* may go: its permissions.network, with the {account} hosts and the
  // local:shared port the app set (host/accounts/set, host/shared/set), kept up to date by the
  // host.
  policy::EgressGrant egress;
  // Its folder, opened once at load (files/read reads beneath it).
  std::shared_ptr<const OwnFolder> folder;
  std::shared_ptr<Journal> journal;
  std::shared_ptr<Masker> masker;
  std::map<std::string, std::filesystem::path, std::less<>> project_folders;
  // The roots its fs/* may reach (permissions.files) and the programs its proc/spawn may start
  // (permissions.commands), built once from the manifest: deny by default.
  policy::FsRoots fs_roots;
  policy::Commands commands;
  // Its own temporary folder (the root temp), made by the host under the data folder.
  std::filesystem::path temp_folder;

  // Whether it is on for `project` (the fence of a private project's agents and folder).
  bool on_for(std::string_view project) const { return project_folders.contains(project); }
};

}  // namespace escouade::services
