#pragma once

// Internal to src/manifest: where a value lies in a manifest (its field path), how a refusal
// names it, and the checks of a parsed manifest that need no file system. Every function is
// pure and thread-safe.

#include <boost/json/value.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace escouade::manifest::detail {

// One step into a JSON value: a member's name or an array's index.
struct PathPart {
  std::string key;
  std::size_t index = 0;
  bool is_index = false;
};
using FieldPath = std::vector<PathPart>;

// The name a refusal gives to the manifest as a whole.
inline constexpr std::string_view kRootName = "escouade-plugin.json";

// "permissions.commands[2]"; kRootName for the empty path.
std::string path_string(const FieldPath& path);
FieldPath child(FieldPath path, std::string_view key);
FieldPath child(FieldPath path, std::size_t index);

// The value at `path` in `doc`, or null when the path leads nowhere.
const boost::json::value* value_at(const boost::json::value& doc, const FieldPath& path);

// A value as a refusal shows it: its JSON, cut past 64 bytes.
std::string shown(const boost::json::value& value);

// A refusal: invalidParams (-32602) with "<path>: <why>".
Error refusal(std::string message);

// Why the value at `path` breaks the rule of its field, as the whole message
// ("id: \"Guard\": an id is reverse-DNS..."); nothing when it holds, when `path` leads nowhere,
// or when its field has no rule beyond the schema's.
std::optional<std::string> explain_field(const boost::json::value& doc, const FieldPath& path);

// Before the schema: every string and member name at most kMaxStringBytes, none with a NUL.
// libstdc++'s std::regex, which valijson's patterns run on, recurses once per character: a
// long string would overflow the stack.
inline constexpr std::size_t kMaxStringBytes = 1024;
std::optional<std::string> check_strings(const boost::json::value& doc);

// After the schema: the rules of each field (explain_field over every field that has one), in
// the order of the schema's members. The first refusal, or nothing.
std::optional<std::string> check_rules(const boost::json::value& doc);

}  // namespace escouade::manifest::detail
