#include "manifest/rules.hpp"

#include <algorithm>

#include "manifest/manifest.hpp"
#include "protocol/gen/types.hpp"

namespace escouade::manifest {

namespace {

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_control(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t end = s.find(sep, start);
    if (end == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, end - start));
    start = end + 1;
  }
}

// A DNS label as the id and host names use it: a-z, 0-9 and '-', not at either end.
bool is_label(std::string_view label, std::size_t max_length) {
  if (label.empty() || label.size() > max_length) return false;
  if (label.front() == '-' || label.back() == '-') return false;
  return std::all_of(label.begin(), label.end(),
                     [](char c) { return is_lower_alnum(c) || c == '-'; });
}

bool is_numeric(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

// A numeric identifier of semver: digits, no leading zero.
bool is_semver_number(std::string_view s) {
  return is_numeric(s) && (s == "0" || s[0] != '0');
}

bool is_semver_identifier(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return is_alpha(c) || is_digit(c) || c == '-'; });
}

// The syntax of an event: `*`, or labels of [a-z0-9_] joined by dots, the last one possibly `*`.
bool is_event_syntax(std::string_view event) {
  if (event == "*") return true;
  const auto labels = split(event, '.');
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string_view label = labels[i];
    if (label == "*" && i + 1 == labels.size() && i > 0) continue;
    if (label.empty()) return false;
    for (char c : label) {
      if (!is_lower_alnum(c) && c != '_') return false;
    }
  }
  return true;
}

std::string join(const std::vector<std::string_view>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

bool looks_like_ipv4(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return is_digit(c) || c == '.'; });
}

}  // namespace

const std::vector<std::string_view>& fact_names() {
  // The generated enum counts from 0 without gaps; to_string gives "" past its last value.
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (int i = 0;; ++i) {
      const std::string_view name = proto::to_string(static_cast<proto::FactName>(i));
      if (name.empty()) break;
      names.push_back(name);
    }
    return names;
  }();
  return kNames;
}

bool event_matches(std::string_view pattern, std::string_view fact_name) noexcept {
  if (pattern == "*") return true;
  if (pattern.size() >= 2 && pattern.substr(pattern.size() - 2) == ".*") {
    const std::string_view prefix = pattern.substr(0, pattern.size() - 1);  // keeps the dot
    return fact_name.size() > prefix.size() && fact_name.substr(0, prefix.size()) == prefix;
  }
  return pattern == fact_name;
}

std::optional<std::string> id_problem(std::string_view id) {
  if (id.size() > kMaxIdLength) return "an id is at most 128 characters";
  const auto labels = split(id, '.');
  const bool ok = labels.size() >= 2 && std::all_of(labels.begin(), labels.end(), [](auto label) {
                    return is_label(label, kMaxIdLength);
                  });
  if (ok) return std::nullopt;
  return "an id is reverse-DNS in lower case, like dev.example.guard";
}

std::optional<std::string> version_problem(std::string_view version) {
  if (version.size() > kMaxVersionLength) return "a version is at most 128 characters";
  static const std::string kWhy = "a version is semver, like 1.2.0";
  std::string_view rest = version;
  std::string_view build;
  if (auto plus = rest.find('+'); plus != std::string_view::npos) {
    build = rest.substr(plus + 1);
    rest = rest.substr(0, plus);
    for (auto id : split(build, '.')) {
      if (!is_semver_identifier(id)) return kWhy;
    }
  }
  std::string_view pre;
  if (auto dash = rest.find('-'); dash != std::string_view::npos) {
    pre = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
    for (auto id : split(pre, '.')) {
      if (!is_semver_identifier(id)) return kWhy;
      if (is_numeric(id) && !is_semver_number(id)) return kWhy;
    }
  }
  const auto core = split(rest, '.');
  if (core.size() != 3) return kWhy;
  for (auto number : core) {
    if (!is_semver_number(number)) return kWhy;
  }
  return std::nullopt;
}

std::optional<std::string> event_problem(std::string_view event) {
  if (!is_event_syntax(event)) {
    return "an event is a fact name or a pattern, like ticket.column or ticket.*";
  }
  const auto& names = fact_names();
  if (event.back() == '*') {
    const bool any = std::any_of(names.begin(), names.end(),
                                 [&](std::string_view name) { return event_matches(event, name); });
    if (any) return std::nullopt;
    return "no fact matches this pattern";
  }
  if (proto::fact_name_from_string(event)) return std::nullopt;
  // The facts of the same family are the likeliest meant.
  const std::string family(event.substr(0, event.find('.') + 1));
  std::vector<std::string_view> near;
  for (auto name : names) {
    if (family.size() > 1 && name.substr(0, family.size()) == family) near.push_back(name);
  }
  if (near.empty()) return "no such fact";
  return "no such fact; the facts " + family + "* are " + join(near);
}

std::optional<std::string> activation_problem(std::string_view entry) {
  constexpr std::string_view kPrefix = "event:";
  if (entry.substr(0, kPrefix.size()) != kPrefix) {
    return "an activation is event:<fact>, like event:ticket.column";
  }
  return event_problem(entry.substr(kPrefix.size()));
}

std::optional<std::string> secret_key_problem(std::string_view key) {
  if (key.empty()) return "a key may not be empty";
  if (key.size() > kMaxSecretKeyLength) return "a key is at most 256 characters";
  if (key.substr(0, 7) == "plugin:") {
    return "a key is the plugin's own name for a secret, never a keychain name "
           "(plugin:<id>:<key>)";
  }
  if (auto star = key.find('*'); star != std::string_view::npos && star + 1 != key.size()) {
    return "* may only end a key, like account:*";
  }
  if (key.find('/') != std::string_view::npos) return "a key has no '/'";
  if (std::any_of(key.begin(), key.end(), [](char c) { return is_space(c) || is_control(c); })) {
    return "a key has no whitespace nor control character";
  }
  return std::nullopt;
}

std::optional<std::string> network_problem(std::string_view entry) {
  if (entry == "{account}" || entry == "local:shared") return std::nullopt;
  if (entry.find("://") != std::string_view::npos) return "a host name, not a URL, like slack.com";
  if (entry.substr(0, 1) == "{" || entry.substr(0, 6) == "local:") {
    return "the special entries are {account} and local:shared";
  }
  if (entry.find('/') != std::string_view::npos) return "a host name, not a path, like slack.com";
  if (entry.substr(0, 1) == "[" || std::count(entry.begin(), entry.end(), ':') >= 2) {
    return "an IP address; name its host, like slack.com";
  }
  if (entry.find(':') != std::string_view::npos) return "a host name, without a port";
  if (entry.find('*') != std::string_view::npos) {
    return "no wildcard: a host covers its subdomains already (slack.com covers api.slack.com)";
  }
  if (looks_like_ipv4(entry)) return "an IP address; name its host, like slack.com";
  if (entry.size() > kMaxHostLength) return "a host name is at most 253 characters";
  if (std::any_of(entry.begin(), entry.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) {
    return "a host name is in lower case, like slack.com";
  }
  const auto labels = split(entry, '.');
  const bool syntax = std::all_of(labels.begin(), labels.end(),
                                  [](std::string_view label) { return is_label(label, 63); });
  if (!syntax) {
    return "a host name is labels of a-z, 0-9 and '-' joined by dots, like slack.com";
  }
  if (labels.size() < 2) return "a host name has at least two labels, like slack.com";
  if (!is_alpha(labels.back().front())) {
    return "the last label of a host name starts with a letter, like slack.com";
  }
  return std::nullopt;
}

std::optional<std::string> command_grant_problem(std::string_view command) {
  static const std::string kShell = "a command may not be a path or use a shell";
  if (command.empty()) return "a command may not be empty";
  constexpr std::string_view kShellSyntax = ";|&$`<>(){}'\"\\";
  for (char c : command) {
    if (kShellSyntax.find(c) != std::string_view::npos || (is_control(c) && c != '\t')) {
      return kShell;
    }
  }
  const auto words = split(command, ' ');
  if (words.front().find('/') != std::string_view::npos) return kShell;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    if (word.empty() || word.find('\t') != std::string_view::npos) {
      return "the words of a command are separated by single spaces";
    }
    if (word.find('*') != std::string_view::npos &&
        (word != "*" || i == 0 || i + 1 != words.size())) {
      return "* stands alone as the last word, like npm test *";
    }
    // After an option ("rm -rf *") the star is not "more arguments of a subcommand" but the
    // shell's glob of every file: the spec's wildcard extends a command, never an option.
    if (word == "*" && i > 0 && words[i - 1].front() == '-') return kShell;
  }
  return std::nullopt;
}

std::optional<std::string> relative_path_problem(std::string_view path) {
  if (path.empty()) return "may not be empty";
  if (path.front() == '/') return "an absolute path; give it relative to the plugin's folder";
  if (path.find('\\') != std::string_view::npos) return "use '/' between folders, not '\\'";
  return std::nullopt;
}

std::optional<std::string> setting_name_problem(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= 64 && is_alpha(name.front()) &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return is_alpha(c) || is_digit(c) || c == '_' || c == '-';
                  });
  if (ok) return std::nullopt;
  return "a setting's name is letters, digits, '_' and '-', starting with a letter, at most 64";
}

}  // namespace escouade::manifest
