#pragma once

// What the services share, and what they know of each plugin they serve.

#include <boost/asio/any_io_executor.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "journal/journal.hpp"
#include "journal/masker.hpp"
#include "manifest/manifest.hpp"
#include "services/workers.hpp"

namespace escouade::platform {
class Keychain;
}

namespace escouade::services {

class SettingsStore;

// The host's parts the services use. Owned by the host; lives longer than every session bound
// with it (the host closes `workers` before the keychain and the settings go).
struct ServiceContext {
  boost::asio::any_io_executor host;  // the host's thread: handlers and replies run there
  Workers* workers = nullptr;         // blocking work: the keychain, files, settings
  platform::Keychain* keychain = nullptr;
  SettingsStore* settings = nullptr;
};

// One plugin as the services see it: the manifest of now (its permissions), its journal and
// the masker of the secrets it was given, and the folders of the projects where it is on.
// Shared by the host and the handlers of its sessions (and their work in flight); read and
// changed on the host's thread only. A new manifest (an update, a permission taken back) makes
// a new ServedPlugin; the journal and the masker stay the plugin's for as long as it is loaded.
struct ServedPlugin {
  manifest::Manifest manifest;
  std::shared_ptr<Journal> journal;
  std::shared_ptr<Masker> masker;
  std::map<std::string, std::filesystem::path, std::less<>> project_folders;
};

// Runs `work()` on the workers, then `then(result)` on the host's thread (Workers::run).
template <class Work, class Then>
void on_worker(const ServiceContext& ctx, Work work, Then then) {
  ctx.workers->run(std::move(work), std::move(then));
}

}  // namespace escouade::services
