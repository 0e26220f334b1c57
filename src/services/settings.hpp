#pragma once

// What settings/get answers a plugin: the values of its manifest's contributes.settings as the
// user set them (kept by SettingsStore), else the manifest's defaults; with a project, the
// plugins.<id> section of that project's .escouade.yml over them (project_file.hpp). The host
// decides whether the plugin is on for the project; this file only reads. See docs/settings.md.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "manifest/manifest.hpp"

namespace escouade::rpc {
class Session;
}

namespace escouade::services {

struct ServedPlugin;
struct SettingsContext;

// A store file larger than this is reported as corrupt; a set that would make it larger is
// refused.
inline constexpr std::uintmax_t kMaxSettingsFileBytes = 1024 * 1024;

// The values for settings/get, and what went wrong finding them: sentences for the plugin's
// journal (the host writes each there), never a reason to fail the call.
struct ResolvedSettings {
  boost::json::object values;
  std::vector<std::string> problems;
};

// The user's values of each plugin's settings, one JSON object a plugin in
// <dir>/<plugin id>.json (the host passes <data dir>/plugin-settings), written atomically
// (a temporary file in <dir>, then a rename), readable by its owner only.
// Thread-safe: a mutex orders set and read, so the host thread may set while a worker reads.
// One store per dir in a process; every member blocks on files.
class SettingsStore {
 public:
  explicit SettingsStore(std::filesystem::path dir);

  // Merges `values` into what was set before and writes the file. Every name must be one of
  // m.settings and every value of that setting's type, or null, which forgets the user's value
  // (the default answers again). A refusal writes nothing: invalidParams (-32602)
  //   settings.<name>: not a setting of <id>; it has a, b
  //   settings.<name>: expected a number, got a string
  // or internal (-32603) when the file cannot be read or written. Values kept for names the
  // manifest no longer declares stay in the file. A corrupt file is moved aside to
  // <id>.json.corrupt and the store starts over from `values`.
  Result<void> set(const manifest::Manifest& m, const boost::json::object& values);

  // Each setting of m.settings: the user's value, else the manifest's default. A kept value of
  // another type than the manifest's now (an update changed it) answers the default. Problems:
  // a file that cannot be read or is corrupt (then every default answers), a kept value of the
  // wrong type.
  ResolvedSettings read(const manifest::Manifest& m) const;
  // read(m).values.
  boost::json::object user_values(const manifest::Manifest& m) const;

  const std::filesystem::path& dir() const noexcept { return dir_; }
  // <dir>/<plugin id>.json.
  std::filesystem::path file_of(std::string_view plugin_id) const;

 private:
  std::filesystem::path dir_;
  mutable std::mutex mutex_;
};

// The user's values (store.read(m)), then, when `project_folder` is given, the plugins.<m.id>
// entries of its .escouade.yml over them, each typed by the manifest (project_value_as). A
// project entry that is not a setting of m, or not of its type, is skipped with a problem; a
// .escouade.yml that cannot be read leaves the user's values as they are, with its problem.
// Thread-safe, blocking.
ResolvedSettings resolve_settings(const manifest::Manifest& m, const SettingsStore& store,
                                  const std::filesystem::path* project_folder);

// Binds settings/get on a session of `plugin`'s: resolved on the workers; a project it is not on
// for gets the user's values alone, and the journal says so.
void serve_settings(rpc::Session& session, const SettingsContext& ctx,
                    const std::shared_ptr<ServedPlugin>& plugin);

}  // namespace escouade::services
