#pragma once

// What the host reads of a run.js bundle before the engine sees it: the SDK's mark on its first
// line, and the JSON files at the plugin's root that node:fs may read (spec: "The files of its
// folder"), read as files/read reads (runtime/own_folder.hpp). No engine here.
//
// Thread: any; the host calls read_root_files on a worker, never on its own thread.

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/own_folder.hpp"

namespace escouade::sandbox {

// The SDK marks its bundles with a first line `// @escouade-dev/plugin <version>`. A bundle made
// before 0.3 does not run in the sandbox (spec: "The limits"): the refusal's reason, or nullopt
// when the bundle may run (a later version, or no mark at all: not an SDK bundle).
std::optional<std::string> refuse_old_sdk(std::string_view source);

// The JSON files at the root of the plugin's folder, by name, as node:fs's readFileSync gives
// them: 256 KB each (larger ones are left out), 1 MB in all (taken in name order until the next
// would pass it), never the manifest. Each is read as files/read reads a file (OwnFolder::read):
// beneath the folder, no link out of it nor to a hidden file, regular files only, no hard link,
// UTF-8, its size checked while it is read; anything else is left out, with the reason.
struct RootFiles {
  static constexpr std::size_t kEachBytes = 256u * 1024u;
  static constexpr std::size_t kTotalBytes = 1024u * 1024u;
  // Names looked at, at most: a root of a million names is not listed whole.
  static constexpr std::size_t kMaxNames = 4096;
  std::map<std::string, std::string, std::less<>> files;
  // Why each JSON file at the root that is not given was left out, by name.
  std::map<std::string, std::string, std::less<>> left_out;
};
RootFiles read_root_files(const runtime::OwnFolder& folder);

}  // namespace escouade::sandbox
