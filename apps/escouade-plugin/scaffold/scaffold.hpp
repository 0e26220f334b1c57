#pragma once

// `escouade-plugin new cpp <dir>`: a new C++ process plugin in a folder (`new wasm`: the same
// plugin built as a run.wasm module, plan_wasm below), built from the files
// the binary carries (embedded.hpp). What it writes:
//   escouade-plugin.json   id, name, version 0.1.0, run ./bin/<target>, decide and events
//   src/main.cpp           a plugin with the SDK: a decide handler and a fact handler
//   CMakeLists.txt         standalone; puts the program in bin/<target>
//   README.md, .gitignore
//   third_party/escouade/include/escouade/*.hpp   the SDK headers this binary was built with
// `escouade-plugin new js <dir>`: a run.js plugin, see plan_js below; `new ts <dir>`: a
// TypeScript project with the TypeScript SDK vendored, see plan_ts below.
// Nothing here prints; the command (new_command.cpp) does. Not thread-safe: it writes files.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace escouade::scaffold {

// Where the SDK headers go, relative to the new folder.
inline constexpr std::string_view kSdkFolder = "third_party/escouade/include/escouade";

// Where `new ts` puts the TypeScript SDK's package, relative to the new folder: the template's
// package.json depends on "file:vendor/escouade-dev-plugin".
inline constexpr std::string_view kTsSdkFolder = "vendor/escouade-dev-plugin";

// What `new cpp` was given.
struct Request {
  std::filesystem::path folder;
  std::optional<std::string> id;    // else derived from the folder's name
  std::optional<std::string> name;  // else the folder's name
};

// Who the new plugin is; `target` is the program's file name, the id's last label.
struct Identity {
  std::string id;
  std::string name;
  std::string target;
};

// A file to write: its path relative to the new folder ('/' between folders) and its bytes.
struct PlannedFile {
  std::string path;
  std::string bytes;
};

// What was written: the folder as an absolute path, and each file in the order written.
struct Scaffolded {
  Identity identity;
  std::filesystem::path folder;
  std::vector<std::string> files;
};

// The name a folder is known by: its last component once `folder` is made absolute against
// the working folder and "." and ".." are resolved ("." is the working folder's own name).
std::string folder_name(const std::filesystem::path& folder);

// dev.example.<label>, the label being `name` in lower case with every character other than
// a-z, 0-9 and '-' dropped, and no '-' at either end. Nullopt when no character is left.
std::optional<std::string> id_from_folder_name(std::string_view name);

// `text` with @ID@, @NAME@ and @TARGET@ replaced by `who`'s. With `json`, the name is written
// as the inside of a JSON string (quotes and control characters escaped); the id and the
// target need no escaping anywhere (the manifest's rules keep them to a-z, 0-9, '.' and '-').
// Any other '@' is left as it is.
std::string fill(std::string_view text, const Identity& who, bool json);

// The id and name of `request` (derived where not given), checked by the manifest's own
// rules (manifest::parse_manifest on the manifest about to be written, its run left out as
// the program is not built yet). A refusal's message is the manifest's: `id: "Dev.X": an id
// is reverse-DNS in lower case, like dev.example.guard`.
Result<Identity> settle_identity(const Request& request);

// Every file of a new C++ plugin for `who`: the manifest first, the rest of the template
// filled in (its gitignore written as .gitignore), then the SDK headers under kSdkFolder. Pure.
std::vector<PlannedFile> plan_cpp(const Identity& who);

// The same plugin built as run.wasm (`new wasm`): plan_cpp's files with template-wasm's in
// place of those of the same path (the manifest's run is {"wasm": "CMakeLists.txt"}, the
// CMakeLists.txt builds plugin.wasm with clang++-14 --target=wasm32-wasi, the README says so),
// and the SDK's wasm/support.cpp under third_party/escouade/wasm/. Pure.
std::vector<PlannedFile> plan_wasm(const Identity& who);

// Settles the identity, then writes plan_cpp's files into request.folder, made when missing.
// Refuses, before writing anything, an empty path, an identity the manifest refuses, a path
// that is not a folder and a folder that is not empty. A file that cannot be written stops it
// with the reason; what was written before stays.
Result<Scaffolded> scaffold_cpp(const Request& request);
// The same with plan_wasm's files.
Result<Scaffolded> scaffold_wasm(const Request& request);

// `new js` (scaffold_js.cpp): escouade-plugin.json with "run": {"js": "plugin.mjs"}, plugin.mjs
// (a plain ES module over node:readline: decisions left to the user, facts to the journal,
// batches answered) and README.md. Pure.
std::vector<PlannedFile> plan_js(const Identity& who);
// As scaffold_cpp, with plan_js's files.
Result<Scaffolded> scaffold_js(const Request& request);

// `new ts` (scaffold_ts.cpp): template-ts filled in (its gitignore written as .gitignore), the
// manifest first: escouade-plugin.json with "run": {"js": "dist/plugin.mjs"}, package.json
// (named after the target, its devDependencies the SDK, TypeScript and Node's types) and its
// package-lock.json, tsconfig.json, src/plugin.ts (the plugin: a start and the facts logged,
// decisions left to the user), src/main.ts (the bundle's entry), test/plugin.test.ts and
// README.md; then the TypeScript SDK's package as it is (ts_sdk_files()) under kTsSdkFolder.
// Pure.
std::vector<PlannedFile> plan_ts(const Identity& who);
// As scaffold_cpp, with plan_ts's files; then the SDK's bin/ files are made executable where
// they are readable (the mode npm gives a package's commands when it links them).
Result<Scaffolded> scaffold_ts(const Request& request);

// What scaffold_cpp and scaffold_js share: the checks, then `plan`'s files written.
Result<Scaffolded> scaffold_with(const Request& request,
                                 std::vector<PlannedFile> (*plan)(const Identity&));

}  // namespace escouade::scaffold
