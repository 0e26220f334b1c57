#include "manifest/fields.hpp"

#include <boost/json/serialize.hpp>
#include <charconv>
#include <cstdint>
#include <system_error>

#include "manifest/rules.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::manifest::detail {

namespace json = boost::json;

namespace {

struct LimitField {
  std::string_view name;
  std::int64_t max;
  std::string_view max_shown;
};

constexpr LimitField kLimits[] = {
    {"fileBytes", 4194304, "4194304 (4 MiB)"},
    {"netTimeoutMs", 120000, "120000 (120 s)"},
    {"netBytes", 33554432, "33554432 (32 MiB)"},
};

std::string with_value(const FieldPath& path, const json::value& value, std::string_view why) {
  return path_string(path) + ": " + shown(value) + ": " + std::string(why);
}

std::optional<std::string> string_rule(const FieldPath& path, const json::value& value,
                                       std::optional<std::string> (*rule)(std::string_view)) {
  if (!value.is_string()) return std::nullopt;
  const json::string& s = value.get_string();
  if (auto why = rule(std::string_view(s.data(), s.size()))) return with_value(path, value, *why);
  return std::nullopt;
}

std::optional<std::string> limit_rule(const FieldPath& path, const json::value& value,
                                      const LimitField& limit) {
  if (!value.is_number()) return std::nullopt;
  const bool too_big = (value.is_int64() && value.get_int64() > limit.max) || value.is_uint64() ||
                       (value.is_double() && value.get_double() > static_cast<double>(limit.max));
  if (too_big) return with_value(path, value, "at most " + std::string(limit.max_shown));
  const bool too_small =
      (value.is_int64() && value.get_int64() < 1) || (value.is_double() && value.get_double() < 1);
  if (too_small) return with_value(path, value, "at least 1");
  if (value.is_double()) return with_value(path, value, "a whole number, like 1048576");
  return std::nullopt;
}

// run holds exactly one of its three members.
std::optional<std::string> run_rule(const FieldPath& path, const json::value& value) {
  if (!value.is_object()) return std::nullopt;
  const json::object& run = value.get_object();
  for (const auto& member : run) {
    const std::string_view key = member.key();
    if (key != "command" && key != "js" && key != "wasm") {
      return path_string(child(path, key)) + ": unknown member (a typo?); " + path_string(path) +
             " has command, js, wasm";
    }
  }
  if (run.size() == 1) return std::nullopt;
  return path_string(path) +
         ": exactly one of command, js or wasm (leave run out for a plugin where nothing runs)";
}

// A setting's default is of the setting's type.
std::optional<std::string> setting_default_rule(const FieldPath& setting_path,
                                                const json::value& setting) {
  if (!setting.is_object()) return std::nullopt;
  const json::value* type = setting.get_object().if_contains("type");
  const json::value* def = setting.get_object().if_contains("default");
  if (!type || !def || !type->is_string()) return std::nullopt;
  const std::string_view t = type->get_string();
  const FieldPath path = child(setting_path, "default");
  if (t == "string" && !def->is_string()) {
    return with_value(path, *def, "the default of a string setting is a string");
  }
  if (t == "number" && !def->is_number()) {
    return with_value(path, *def, "the default of a number setting is a number");
  }
  if (t == "boolean" && !def->is_bool()) {
    return with_value(path, *def, "the default of a boolean setting is true or false");
  }
  return std::nullopt;
}

std::optional<std::string> check_strings_in(const json::value& v, FieldPath& path) {
  auto too_long = [&](std::string_view what, std::size_t size) {
    return path_string(path) + ": " + std::string(what) + " of " + std::to_string(size) +
           " bytes; at most " + std::to_string(kMaxStringBytes) + " in a manifest";
  };
  if (v.is_string()) {
    const json::string& s = v.get_string();
    if (s.size() > kMaxStringBytes) return too_long("a string", s.size());
    if (std::string_view(s.data(), s.size()).find('\0') != std::string_view::npos) {
      return path_string(path) + ": a string may not hold a NUL character";
    }
    return std::nullopt;
  }
  if (v.is_array()) {
    const json::array& a = v.get_array();
    for (std::size_t i = 0; i < a.size(); ++i) {
      path.push_back(PathPart{{}, i, true});
      auto problem = check_strings_in(a[i], path);
      path.pop_back();
      if (problem) return problem;
    }
    return std::nullopt;
  }
  if (v.is_object()) {
    for (const auto& member : v.get_object()) {
      const std::string_view key = member.key();
      if (key.size() > kMaxStringBytes) return too_long("a member name", key.size());
      if (key.find('\0') != std::string_view::npos) {
        return path_string(path) + ": a member name may not hold a NUL character";
      }
      path.push_back(PathPart{std::string(key), 0, false});
      auto problem = check_strings_in(member.value(), path);
      path.pop_back();
      if (problem) return problem;
    }
  }
  return std::nullopt;
}

bool is_key(const PathPart& part, std::string_view key) {
  return !part.is_index && part.key == key;
}

}  // namespace

std::string path_string(const FieldPath& path) {
  if (path.empty()) return std::string(kRootName);
  std::string out;
  for (const auto& part : path) {
    if (part.is_index) {
      out += '[';
      out += std::to_string(part.index);
      out += ']';
    } else {
      if (!out.empty()) out += '.';
      out += part.key;
    }
  }
  return out;
}

FieldPath child(FieldPath path, std::string_view key) {
  path.push_back(PathPart{std::string(key), 0, false});
  return path;
}

FieldPath child(FieldPath path, std::size_t index) {
  path.push_back(PathPart{{}, index, true});
  return path;
}

const json::value* value_at(const json::value& doc, const FieldPath& path) {
  const json::value* v = &doc;
  for (const auto& part : path) {
    if (part.is_index) {
      if (!v->is_array() || part.index >= v->get_array().size()) return nullptr;
      v = &v->get_array()[part.index];
    } else {
      if (!v->is_object()) return nullptr;
      v = v->get_object().if_contains(part.key);
      if (!v) return nullptr;
    }
  }
  return v;
}

std::string shown(const json::value& value) {
  constexpr std::size_t kMax = 64;
  std::string text;
  if (value.is_double()) {
    // The shortest form that reads back the same (1000.5, where serialize writes 1.0005E3).
    char buffer[32];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value.get_double());
    text = ec == std::errc() ? std::string(buffer, end) : json::serialize(value);
    // 4194304.0 stays a fraction's form: it is refused for being one.
    if (text.find_first_of(".eni") == std::string::npos) text += ".0";
  } else {
    text = json::serialize(value);
  }
  if (text.size() <= kMax) return text;
  std::size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  text.resize(cut);
  return text + "...";
}

Error refusal(std::string message) {
  return Error{proto::ErrorCode::invalid_params, std::move(message)};
}

std::optional<std::string> explain_field(const json::value& doc, const FieldPath& path) {
  const json::value* value = value_at(doc, path);
  if (!value) return std::nullopt;
  const std::size_t n = path.size();
  if (n == 1 && is_key(path[0], "id")) return string_rule(path, *value, id_problem);
  if (n == 1 && is_key(path[0], "version")) return string_rule(path, *value, version_problem);
  if (n == 1 && is_key(path[0], "run")) return run_rule(path, *value);
  if (n == 2 && is_key(path[0], "run") && (is_key(path[1], "js") || is_key(path[1], "wasm"))) {
    return string_rule(path, *value, relative_path_problem);
  }
  if (n == 2 && is_key(path[0], "activation") && path[1].is_index) {
    return string_rule(path, *value, activation_problem);
  }
  if (n == 3 && is_key(path[0], "permissions") && path[2].is_index) {
    if (is_key(path[1], "events")) return string_rule(path, *value, event_problem);
    if (is_key(path[1], "secrets")) return string_rule(path, *value, secret_key_problem);
    if (is_key(path[1], "network")) return string_rule(path, *value, network_problem);
    if (is_key(path[1], "commands")) return string_rule(path, *value, command_grant_problem);
  }
  if (n == 2 && is_key(path[0], "limits") && !path[1].is_index) {
    for (const auto& limit : kLimits) {
      if (path[1].key == limit.name) return limit_rule(path, *value, limit);
    }
  }
  if (n >= 3 && is_key(path[0], "contributes") && is_key(path[1], "settings") &&
      !path[2].is_index) {
    if (auto why = setting_name_problem(path[2].key)) {
      const FieldPath settings(path.begin(), path.begin() + 2);
      return path_string(settings) + ": " + shown(json::value(path[2].key)) + ": " + *why;
    }
    const FieldPath setting(path.begin(), path.begin() + 3);
    if (n == 3 || (n == 4 && is_key(path[3], "default"))) {
      return setting_default_rule(setting, *value_at(doc, setting));
    }
  }
  return std::nullopt;
}

std::optional<std::string> check_strings(const json::value& doc) {
  FieldPath path;
  return check_strings_in(doc, path);
}

std::optional<std::string> check_rules(const json::value& doc) {
  if (!doc.is_object()) return std::nullopt;
  const json::object& top = doc.get_object();
  for (std::string_view key : {"id", "version", "run"}) {
    if (auto problem = explain_field(doc, FieldPath{PathPart{std::string(key), 0, false}})) {
      return problem;
    }
  }
  // Each element of the arrays with a rule per element.
  auto each = [&](const FieldPath& list) -> std::optional<std::string> {
    const json::value* v = value_at(doc, list);
    if (!v || !v->is_array()) return std::nullopt;
    for (std::size_t i = 0; i < v->get_array().size(); ++i) {
      if (auto problem = explain_field(doc, child(list, i))) return problem;
    }
    return std::nullopt;
  };
  if (auto problem = each(FieldPath{PathPart{"activation", 0, false}})) return problem;
  const FieldPath permissions{PathPart{"permissions", 0, false}};
  for (std::string_view list : {"events", "secrets", "network", "commands"}) {
    if (auto problem = each(child(permissions, list))) return problem;
  }
  const FieldPath settings = child(FieldPath{PathPart{"contributes", 0, false}}, "settings");
  if (const json::value* v = value_at(doc, settings); v && v->is_object()) {
    for (const auto& member : v->get_object()) {
      if (auto problem = explain_field(doc, child(settings, member.key()))) return problem;
    }
  }
  if (const json::value* v = top.if_contains("limits"); v && v->is_object()) {
    for (const auto& member : v->get_object()) {
      const FieldPath path = child(FieldPath{PathPart{"limits", 0, false}}, member.key());
      if (auto problem = explain_field(doc, path)) return problem;
    }
  }
  return std::nullopt;
}

}  // namespace escouade::manifest::detail
