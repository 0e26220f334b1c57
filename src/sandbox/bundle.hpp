#pragma once

// What the host reads of a run.js bundle before the engine sees it: the SDK's mark on its first
// line, and the JSON files at the plugin's root that node:fs may read (spec: "The files of its
// folder"). Pure functions and plain file reads: no engine here.
//
// Thread: any; the sandbox calls them on the instance's thread, never on the host's.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace escouade::sandbox {

// The SDK marks its bundles with a first line `// @escouade-dev/plugin <version>`. A bundle made
// before 0.3 does not run in the sandbox (spec: "The limits"): the refusal's reason, or nullopt
// when the bundle may run (a later version, or no mark at all: not an SDK bundle).
std::optional<std::string> refuse_old_sdk(std::string_view source);

// The JSON files at the root of the plugin's folder, by name, as node:fs's readFileSync gives
// them: 256 KB each (larger ones are left out), 1 MB in all (taken in name order until the next
// would pass it), never the manifest. Unreadable files are left out.
struct RootFiles {
  static constexpr std::size_t kEachBytes = 256u * 1024u;
  static constexpr std::size_t kTotalBytes = 1024u * 1024u;
  std::map<std::string, std::string, std::less<>> files;
  // Why each JSON file at the root that is not given was left out, by name.
  std::map<std::string, std::string, std::less<>> left_out;
};
RootFiles read_root_files(const std::filesystem::path& folder);

}  // namespace escouade::sandbox
