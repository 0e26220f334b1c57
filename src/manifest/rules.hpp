#pragma once

// The rules a manifest's values keep, one function a kind of value. Each returns why a value
// breaks its rule, as a clause a person reads ("an id is reverse-DNS in lower case, like
// dev.example.guard"), or nothing when the value holds. The caller adds the field's path and
// the value. The schema (schema/manifest-1.json) says the same where a pattern can; these say
// why, and check what a pattern cannot (that a fact exists). Pure: no I/O, thread-safe.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace escouade::manifest {

inline constexpr std::size_t kMaxIdLength = 128;
inline constexpr std::size_t kMaxVersionLength = 128;
inline constexpr std::size_t kMaxSecretKeyLength = 256;
inline constexpr std::size_t kMaxHostLength = 253;

std::optional<std::string> id_problem(std::string_view id);

// Semantic Versioning 2.0.0, pre-release and build metadata included.
std::optional<std::string> version_problem(std::string_view version);

// A fact name of the protocol, `<prefix>.*` matching at least one, or `*`.
std::optional<std::string> event_problem(std::string_view event);

// `event:` followed by what event_problem accepts.
std::optional<std::string> activation_problem(std::string_view entry);

// A key of permissions.secrets: the plugin's own name for a secret, `*` only at its end.
std::optional<std::string> secret_key_problem(std::string_view key);

// An entry of permissions.network: a host name, `{account}` or `local:shared`.
std::optional<std::string> network_problem(std::string_view entry);

// An entry of permissions.commands: a program name and arguments separated by single spaces,
// no shell syntax, an optional last word `*`.
std::optional<std::string> command_grant_problem(std::string_view command);

// A path of run.js or run.wasm as written: relative to the plugin's folder, with '/' between
// folders. Whether it stays inside the folder and exists is for the caller, who knows the folder.
std::optional<std::string> relative_path_problem(std::string_view path);

// A name under contributes.settings.
std::optional<std::string> setting_name_problem(std::string_view name);

// Every fact name of the protocol (its FactName enum), in the schema's order.
const std::vector<std::string_view>& fact_names();

}  // namespace escouade::manifest
