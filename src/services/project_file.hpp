#pragma once

// A project's .escouade.yml, as far as settings go: the `plugins.<id>` section of one plugin.
// The file is the user's (a folder of theirs, often a git checkout): it is read as untrusted
// text, at most kMaxProjectFileBytes, only when it is a regular file (a link, a folder or a
// FIFO is reported, never read), and every fault becomes a sentence for the plugin's journal
// rather than an error. yaml-cpp stays inside project_file.cpp.
// Nothing here throws; every function is thread-safe and blocking (the host calls them from a
// worker thread).

#include <boost/json/value.hpp>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "manifest/manifest.hpp"

namespace escouade::services {

inline constexpr std::string_view kProjectFileName = ".escouade.yml";
// A larger file is reported and not parsed; no more than this and one byte is ever read.
inline constexpr std::uintmax_t kMaxProjectFileBytes = 1024 * 1024;

// One entry of plugins.<id>: a YAML scalar as written, not yet typed (its type comes from the
// manifest, see project_value_as).
struct ProjectValue {
  std::string name;
  std::string text;
  // True for a plain scalar (42, true, #dev), which YAML 1.2's core schema may read as a number
  // or a boolean; false for a quoted or block scalar or one tagged !!str: always text.
  bool plain = true;
  int line = 0;  // 1-based, where the value starts
  int column = 0;
  // "<file>: line L, column C: plugins.<id>.<name>", to begin a sentence about this entry.
  std::string where;
};

struct ProjectSettings {
  std::filesystem::path file;  // <project folder>/.escouade.yml
  // plugins.<id>, in the file's order, each name once (a repeated name keeps its last value).
  // Null values (`name:` or `name: ~`) are left out: they set nothing.
  std::vector<ProjectValue> values;
  // Sentences for the plugin's journal, each naming the file, and the line and column where
  // there is one. A missing file is no problem; a file that cannot be read or parsed gives one
  // problem and no values; a bad entry is skipped with its own problem.
  std::vector<std::string> problems;
};

// Reads plugins.<plugin_id> of <project_folder>/.escouade.yml. A plugin id is one YAML key,
// dots included (plugins: {dev.example.guard: {channel: "#ops"}}).
ProjectSettings read_project_settings(const std::filesystem::path& project_folder,
                                      std::string_view plugin_id);

// The JSON value of `value` for a setting of `type`, by YAML 1.2's core schema: a boolean is a
// plain true or false (True and TRUE too; yes, no, on and off are text in YAML 1.2); a number is
// a plain integer (decimal, 0x hex or 0o octal) or float, finite; a string setting takes any
// scalar as its text. A whole number answers as an integer (see setting_number in
// setting_value.hpp). The refusal is invalidParams (-32602) saying what was expected and what was
// found, e.g. `expected a number, got "abc"`.
Result<boost::json::value> project_value_as(const ProjectValue& value, manifest::SettingType type);

}  // namespace escouade::services
