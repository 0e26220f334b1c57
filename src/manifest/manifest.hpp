#pragma once

// A plugin's manifest, escouade-plugin.json at its folder's root: read, checked and typed.
// The checks come in two steps: the schema (schema/manifest-1.json, embedded at build time,
// run by valijson), then the rules a schema cannot say (facts that exist, files that exist in
// the folder, programs on PATH). Every refusal is an Error with code invalidParams (-32602) and
// the message "<field path>: <why>", e.g.
//   id: "Guard": an id is reverse-DNS in lower case, like dev.example.guard
// Nothing here throws; every function is thread-safe.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/result.hpp"

namespace escouade::manifest {

inline constexpr std::string_view kManifestFileName = "escouade-plugin.json";
// A larger file is refused before it is read.
inline constexpr std::uintmax_t kMaxManifestBytes = 256 * 1024;
// The largest run.js bundle and plugin.wasm a sandboxed plugin may have (docs/sandbox.md): a
// larger one is refused at load, before anything reads it whole. Either must also compile within
// the instance's 64 MB, which a dense bundle of a few MB already does not.
inline constexpr std::uintmax_t kMaxBundleBytes = 8u * 1024 * 1024;
inline constexpr std::uintmax_t kMaxModuleBytes = 16u * 1024 * 1024;

enum class RunKind { none, command, js, wasm };

// What runs. kind none: a declarative plugin, nothing runs.
struct Run {
  RunKind kind = RunKind::none;
  // command: the program and its arguments, as written ("./guard", "--verbose").
  std::vector<std::string> command;
  // js: the module, as written (dist/plugin.mjs); wasm: the build file, as written (Cargo.toml).
  std::string path;
  // Absolute. command: the program, a file of the folder (links resolved: <folder>/guard) or
  // where PATH has it (as found: /usr/bin/node); js: the module; wasm: <folder>/plugin.wasm.
  std::filesystem::path resolved;
};

// An event of activation or permissions.events: a fact name (ticket.column), a pattern
// `<prefix>.*` (ticket.*) or `*`.
struct EventSelector {
  std::string text;
  bool pattern = false;

  bool matches(std::string_view fact_name) const noexcept;
  friend bool operator==(const EventSelector&, const EventSelector&) = default;
};

// A root of permissions.files and the fs/* methods.
enum class FsRoot { plugin, agent, agent_repo, agent_home, temp };
enum class FileAccess { read, write };  // write includes read

// "plugin", "agent", "agentRepo", "agentHome", "temp": the manifest's and the protocol's names.
std::string_view to_string(FsRoot root) noexcept;

// An entry of permissions.commands: "npm test *" is {words: npm, test; any_arguments}.
struct CommandGrant {
  std::string text;                // as written
  std::vector<std::string> words;  // the program's name first, without the last "*"
  bool any_arguments = false;      // the entry ended with " *"

  friend bool operator==(const CommandGrant&, const CommandGrant&) = default;
};

// The entry as permissions.commands writes it, read into its words ("npm test *").
CommandGrant command_of(std::string_view text);

// permissions.network.
struct NetworkGrant {
  std::vector<std::string> hosts;  // each covers its subdomains
  bool account = false;            // "{account}": the host of one of the plugin's accounts
  bool local_shared = false;       // "local:shared": the local server of its launched process

  friend bool operator==(const NetworkGrant&, const NetworkGrant&) = default;
};

// What the plugin may reach; all empty or false when the manifest names nothing.
struct Permissions {
  std::vector<EventSelector> events;
  bool decide = false;
  std::vector<std::string> secrets;  // keys; one ending with '*' covers a family (account:*)
  NetworkGrant network;
  std::map<FsRoot, FileAccess> files;
  std::vector<CommandGrant> commands;
};

enum class SettingType { string, number, boolean };
using SettingValue = std::variant<std::string, double, bool>;

// A setting of contributes.settings; its default is of its type.
struct Setting {
  SettingType type = SettingType::string;
  SettingValue default_value;
  std::string description;
};

// The limits of a plugin run inside Escouade: the manifest's, or the spec's defaults.
struct Limits {
  static constexpr std::int64_t kDefaultFileBytes = 256 * 1024;  // per fs/read
  static constexpr std::int64_t kMaxFileBytes = 4 * 1024 * 1024;
  static constexpr std::int64_t kDefaultNetTimeoutMs = 10'000;  // per net/fetch
  static constexpr std::int64_t kMaxNetTimeoutMs = 120'000;
  static constexpr std::int64_t kDefaultNetBytes = 1024 * 1024;  // per net/fetch answer
  static constexpr std::int64_t kMaxNetBytes = 32 * 1024 * 1024;

  std::int64_t file_bytes = kDefaultFileBytes;
  std::int64_t net_timeout_ms = kDefaultNetTimeoutMs;
  std::int64_t net_bytes = kDefaultNetBytes;

  friend bool operator==(const Limits&, const Limits&) = default;
};

struct Manifest {
  std::filesystem::path folder;  // absolute, links resolved when it exists
  std::string id;
  std::string version;
  std::string name;
  std::string description;
  Run run;
  // Empty: the plugin never starts by itself.
  std::vector<EventSelector> activation;
  Permissions permissions;
  std::map<std::string, Setting, std::less<>> settings;
  Limits limits;
};

// What the checks read from the world, passed in (STYLE.md: pass the world in).
struct CheckEnvironment {
  // Where a bare program name of run.command ("node") is looked up: folders separated by ':',
  // as in PATH. Empty and relative entries are skipped.
  std::string search_path;
};

// This process's environment (its PATH): what the forms without a CheckEnvironment use.
CheckEnvironment process_environment();

// Checks `json_text` as the manifest of the plugin in `folder` (the folder is read only to check
// run's files). The refusal names the field and why.
Result<Manifest> parse_manifest(std::string_view json_text, const std::filesystem::path& folder,
                                const CheckEnvironment& environment);
Result<Manifest> parse_manifest(std::string_view json_text, const std::filesystem::path& folder);

// Reads <folder>/escouade-plugin.json (a regular file of at most kMaxManifestBytes) and checks
// it as parse_manifest does.
Result<Manifest> load_manifest(const std::filesystem::path& folder,
                               const CheckEnvironment& environment);
Result<Manifest> load_manifest(const std::filesystem::path& folder);

// True when `fact_name` is `pattern`, or `pattern` is `<prefix>.*` and the name starts with
// `<prefix>.`, or `pattern` is `*`.
bool event_matches(std::string_view pattern, std::string_view fact_name) noexcept;

// schema/manifest-1.json as the build embedded it (cmake/EscouadeEmbed.cmake).
extern const std::string_view kManifestSchemaText;
inline std::string_view manifest_schema_text() noexcept {
  return kManifestSchemaText;
}

}  // namespace escouade::manifest
