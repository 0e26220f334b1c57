#include "services/settings.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <system_error>
#include <utility>
#include <variant>

#include "base/os_message.hpp"
#include "base/private_dirs.hpp"
#include "base/quote.hpp"
#include "base/workers.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "rpc/session.hpp"
#include "services/context.hpp"
#include "services/project_file.hpp"
#include "services/setting_value.hpp"

namespace escouade::services {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using manifest::Manifest;
using manifest::Setting;
using manifest::SettingType;

constexpr auto kInvalidParams = proto::ErrorCode::invalid_params;
constexpr auto kInternal = proto::ErrorCode::internal;

std::string_view kind_of(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string:
      return "a string";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return "a number";
    case json::kind::bool_:
      return "a boolean";
    case json::kind::array:
      return "a list";
    case json::kind::object:
      return "an object";
    case json::kind::null:
      return "null";
  }
  return "a value";
}

bool has_type(const json::value& v, SettingType type) {
  switch (type) {
    case SettingType::string:
      return v.is_string();
    case SettingType::number:
      return v.is_number() && (!v.is_double() || std::isfinite(v.get_double()));
    case SettingType::boolean:
      return v.is_bool();
  }
  return false;
}

json::value default_of(const Setting& setting) {
  return std::visit(
      [](const auto& d) -> json::value {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return json::string(d);
        } else if constexpr (std::is_same_v<T, double>) {
          return setting_number(d);
        } else {
          return json::value(d);
        }
      },
      setting.default_value);
}

// A kept number as settings/get answers it (see setting_number).
json::value answer(const json::value& kept) {
  if (kept.is_double()) return setting_number(kept.get_double());
  if (kept.is_uint64()) {
    const std::uint64_t u = kept.get_uint64();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return json::value(static_cast<std::int64_t>(u));
    }
    return setting_number(static_cast<double>(u));
  }
  return kept;
}

std::string names_of(const Manifest& m) {
  if (m.settings.empty()) return "none";
  std::string names;
  for (const auto& [name, setting] : m.settings) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

std::string not_a_setting(const Manifest& m) {
  return "not a setting of " + m.id + "; it has " + names_of(m);
}

// The manifest checks ids (reverse-DNS, lower case); this only keeps a bad one from naming
// another file.
bool usable_as_file_name(std::string_view id) {
  return !id.empty() && id.front() != '.' && id.find_first_of("/\\") == std::string_view::npos &&
         id.find('\0') == std::string_view::npos;
}

enum class FileState { missing, ok, corrupt, unreadable };

struct StoreFile {
  FileState state = FileState::missing;
  json::object values;
  std::string problem;  // for corrupt and unreadable, without the file's name
};

// The store's directory is the host's own: its files are judged by their status, then read.
StoreFile read_store_file(const fs::path& file) {
  StoreFile out;
  std::error_code ec;
  const fs::file_status status = fs::status(file, ec);
  if (status.type() == fs::file_type::not_found) return out;
  if (ec) {
    out.state = FileState::unreadable;
    out.problem = "cannot be read: " + ec.message();
    return out;
  }
  if (!fs::is_regular_file(status)) {
    out.state = FileState::unreadable;
    out.problem = "not a regular file";
    return out;
  }
  const auto too_big = [&](std::uintmax_t size) {
    out.state = FileState::corrupt;
    out.problem = std::to_string(size) + " bytes; a settings file is at most " +
                  std::to_string(kMaxSettingsFileBytes) + " (1 MiB)";
    return out;
  };
  const std::uintmax_t size = fs::file_size(file, ec);
  if (!ec && size > kMaxSettingsFileBytes) return too_big(size);
  std::ifstream in(file, std::ios::binary);
  std::string text(kMaxSettingsFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (!in && !in.eof()) {
    out.state = FileState::unreadable;
    out.problem = "cannot be read";
    return out;
  }
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxSettingsFileBytes) return too_big(text.size());
  json::value parsed = json::parse(text, ec);
  if (ec) {
    out.state = FileState::corrupt;
    out.problem = "not valid JSON (" + ec.message() + ")";
    return out;
  }
  if (!parsed.is_object()) {
    out.state = FileState::corrupt;
    out.problem = "not a JSON object but " + std::string(kind_of(parsed));
    return out;
  }
  out.state = FileState::ok;
  out.values = std::move(parsed.get_object());
  return out;
}

Error write_failure(const fs::path& file, int error) {
  return Error{kInternal, file.string() + ": cannot be written: " + os_message(error)};
}

// Writes `text` to a new file beside `file`, flushes it to the disk, then renames it over
// `file`: a reader sees the old content or the new, never a part.
Result<void> write_atomically(const fs::path& file, std::string_view text) {
  std::string temporary =
      (file.parent_path() / ("." + file.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) return write_failure(file, errno);
  const auto fail = [&](int error) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return write_failure(file, error);
  };
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return fail(errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return write_failure(file, error);
  }
  if (::rename(temporary.c_str(), file.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return write_failure(file, error);
  }
  // The rename lasts across a crash once the folder is flushed; a failure here loses nothing
  // that is not already written.
  const int dir = ::open(file.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

}  // namespace

SettingsStore::SettingsStore(fs::path dir) : dir_(std::move(dir)) {}

fs::path SettingsStore::file_of(std::string_view plugin_id) const {
  return dir_ / (std::string(plugin_id) + ".json");
}

Result<void> SettingsStore::set(const Manifest& m, const json::object& values) {
  if (!usable_as_file_name(m.id)) {
    return Error{kInternal, "id: \"" + m.id + "\" cannot name a settings file"};
  }
  for (const auto& entry : values) {
    const std::string name(entry.key());
    const auto setting = m.settings.find(name);
    if (setting == m.settings.end()) {
      return Error{kInvalidParams, "settings." + name + ": " + not_a_setting(m)};
    }
    if (entry.value().is_null() || has_type(entry.value(), setting->second.type)) continue;
    std::string got(kind_of(entry.value()));
    if (entry.value().is_double()) got = "a number that is not finite";
    return Error{kInvalidParams, "settings." + name + ": expected a " +
                                     std::string(setting_type_name(setting->second.type)) +
                                     ", got " + got};
  }

  const std::lock_guard lock(mutex_);
  const fs::path file = file_of(m.id);
  StoreFile current = read_store_file(file);
  if (current.state == FileState::unreadable) {
    return Error{kInternal, file.string() + ": " + current.problem};
  }
  json::object merged;
  if (current.state == FileState::ok) merged = std::move(current.values);
  for (const auto& entry : values) {
    if (entry.value().is_null()) {
      merged.erase(entry.key());
    } else {
      merged[entry.key()] = entry.value();
    }
  }
  const std::string text = json::serialize(merged) + "\n";
  if (text.size() > kMaxSettingsFileBytes) {
    return Error{kInvalidParams, "settings: " + std::to_string(text.size()) + " bytes for " + m.id +
                                     "; at most " + std::to_string(kMaxSettingsFileBytes) +
                                     " (1 MiB) are kept"};
  }
  std::error_code ec = create_private_directories(dir_);
  if (ec) return Error{kInternal, dir_.string() + ": cannot be made: " + ec.message()};
  if (current.state == FileState::corrupt) {
    fs::path aside = file;
    aside += ".corrupt";
    fs::rename(file, aside, ec);
    if (ec) return Error{kInternal, file.string() + ": cannot be moved aside: " + ec.message()};
  }
  return write_atomically(file, text);
}

ResolvedSettings SettingsStore::read(const Manifest& m) const {
  ResolvedSettings out;
  const fs::path file = file_of(m.id);
  StoreFile kept;
  if (usable_as_file_name(m.id)) {
    const std::lock_guard lock(mutex_);
    kept = read_store_file(file);
  } else {
    kept.state = FileState::unreadable;
    kept.problem = "the id \"" + m.id + "\" cannot name a settings file";
  }
  if (kept.state == FileState::corrupt || kept.state == FileState::unreadable) {
    out.problems.push_back(file.string() + ": " + kept.problem +
                           "; the manifest's defaults answer until the user's settings are set "
                           "again");
  }
  for (const auto& [name, setting] : m.settings) {
    const json::value* value = kept.values.if_contains(name);
    if (value != nullptr && !value->is_null()) {
      if (has_type(*value, setting.type)) {
        out.values[name] = answer(*value);
        continue;
      }
      out.problems.push_back(file.string() + ": " + name + ": the value kept is " +
                             std::string(kind_of(*value)) + ", but " + m.id + " declares a " +
                             std::string(setting_type_name(setting.type)) +
                             " setting; its default answers");
    }
    out.values[name] = default_of(setting);
  }
  return out;
}

json::object SettingsStore::user_values(const Manifest& m) const {
  return read(m).values;
}

ResolvedSettings resolve_settings(const Manifest& m, const SettingsStore& store,
                                  const fs::path* project_folder) {
  ResolvedSettings out = store.read(m);
  if (project_folder == nullptr) return out;
  ProjectSettings project = read_project_settings(*project_folder, m.id);
  for (std::string& problem : project.problems)
    out.problems.push_back(std::move(problem));
  for (const ProjectValue& value : project.values) {
    const auto setting = m.settings.find(value.name);
    if (setting == m.settings.end()) {
      out.problems.push_back(value.where + ": " + not_a_setting(m) + "; skipped");
      continue;
    }
    Result<json::value> typed = project_value_as(value, setting->second.type);
    if (!typed) {
      out.problems.push_back(value.where + ": " + typed.error().message + "; skipped");
      continue;
    }
    out.values[value.name] = std::move(*typed);
  }
  return out;
}

namespace {

// The values resolved, as settings/get's result: each a string, an integer, a number or a
// boolean, the only kinds of setting a manifest declares (resolve_settings types each by it).
std::map<std::string, proto::Scalar> scalars_of(const json::object& values) {
  std::map<std::string, proto::Scalar> out;
  for (const auto& [key, v] : values) {
    if (v.is_string()) {
      out.emplace(key, std::string(v.get_string()));
    } else if (v.is_int64()) {
      out.emplace(key, v.get_int64());
    } else if (v.is_uint64()) {
      out.emplace(key, static_cast<double>(v.get_uint64()));
    } else if (v.is_double()) {
      out.emplace(key, v.get_double());
    } else if (v.is_bool()) {
      out.emplace(key, v.get_bool());
    }
  }
  return out;
}

}  // namespace

void serve_settings(rpc::Session& session, const SettingsContext& ctx,
                    const std::shared_ptr<ServedPlugin>& plugin) {
  session.serve<proto::method::SettingsGet>(
      [ctx, plugin](const proto::SettingsGetParams& p, rpc::Reply<proto::method::SettingsGet> r) {
        std::optional<std::filesystem::path> folder;
        if (p.project) {
          auto it = plugin->project_folders.find(*p.project);
          if (it == plugin->project_folders.end()) {
            // Nothing of a project it is not on for reaches it: the user's values alone.
            plugin->journal->warn("settings/get: it is not on for project " +
                                  quote_name(*p.project) + "; the user's values answer alone");
          } else if (!it->second.empty()) {
            folder = it->second;
          }
        }
        ctx.workers->run(
            plugin->manifest.id,
            [manifest = plugin->manifest, store = ctx.store, folder] {
              return resolve_settings(manifest, *store, folder ? &*folder : nullptr);
            },
            [plugin, reply = std::move(r)](ResolvedSettings got) mutable {
              for (const auto& problem : got.problems)
                plugin->journal->warn("settings/get: " + problem);
              reply.result(scalars_of(got.values));
            });
      });
}

}  // namespace escouade::services
