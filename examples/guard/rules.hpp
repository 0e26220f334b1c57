#pragma once

// The guard's rules (rules.json) and the verdict they give on a permission request. Pure: no
// I/O, so the rules can be read once and asked many times.

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "escouade/plugin.hpp"

namespace guard {

struct DenyRule {
  std::string contains;              // refuse a command holding this text
  std::vector<std::string> push_to;  // refuse `git push` naming one of these branches
  std::string message;
};

struct Rules {
  std::vector<DenyRule> deny;
  std::vector<std::string> allow_kinds;     // request kinds allowed as they are ("read")
  std::vector<std::string> allow_commands;  // commands allowed with any arguments ("git diff")
};

// The words of `text`, split at white space as `std::istream >> std::string` splits them (the
// "C" locale's), without a stream: in the run.wasm build, libc++'s streams and locales were half
// the module and a quarter of a decision's instructions.
inline std::vector<std::string> words_of(std::string_view text) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  std::vector<std::string> out;
  for (auto at = text.find_first_not_of(kSpace); at != std::string_view::npos;) {
    const auto end = text.find_first_of(kSpace, at);
    out.emplace_back(text.substr(at, end == std::string_view::npos ? end : end - at));
    at = end == std::string_view::npos ? end : text.find_first_not_of(kSpace, end);
  }
  return out;
}

inline std::vector<std::string> strings_of(const boost::json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const auto* a = o.if_contains(key); a && a->is_array()) {
    for (const auto& v : a->get_array()) {
      if (v.is_string()) out.emplace_back(v.get_string());
    }
  }
  return out;
}

// The rules in `text`, or why they do not hold.
inline escouade::Result<Rules> parse_rules(std::string_view text) {
  boost::json::error_code ec;
  const boost::json::value doc = boost::json::parse(text, ec);
  if (ec)
    return escouade::Error(escouade::ErrorCode::invalid_params, "rules.json: " + ec.message());
  const auto* o = doc.if_object();
  if (!o) return escouade::Error(escouade::ErrorCode::invalid_params, "rules.json: not an object");
  Rules rules;
  if (const auto* deny = o->if_contains("deny"); deny && deny->is_array()) {
    for (const auto& d : deny->get_array()) {
      const auto* r = d.if_object();
      if (!r) continue;
      DenyRule rule;
      if (const auto* c = r->if_contains("contains"); c && c->is_string())
        rule.contains = c->get_string();
      rule.push_to = strings_of(*r, "pushTo");
      if (const auto* m = r->if_contains("message"); m && m->is_string())
        rule.message = m->get_string();
      if (rule.message.empty()) rule.message = "refused by the guard's rules";
      rules.deny.push_back(std::move(rule));
    }
  }
  rules.allow_kinds = strings_of(*o, "allowKinds");
  rules.allow_commands = strings_of(*o, "allowCommands");
  return rules;
}

// Whether `words` push to `branch`: `git push <remote> main`, `HEAD:main`, `feature:master`...
inline bool pushes_to(const std::vector<std::string>& words, const std::string& branch) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] != "git" || words[i + 1] != "push") continue;
    for (std::size_t j = i + 2; j < words.size(); ++j) {
      const std::string& w = words[j];
      if (w == ";" || w == "&&" || w == "||" || w == "|") break;
      const auto colon = w.rfind(':');
      const std::string target = colon == std::string::npos ? w : w.substr(colon + 1);
      if (target == branch || target == "refs/heads/" + branch) return true;
    }
  }
  return false;
}

// Shell syntax that could chain another command after an allowed one.
inline bool chains(std::string_view command) {
  return command.find_first_of(";|&`$<>\n") != std::string_view::npos;
}

inline escouade::Decision decide(const Rules& rules, const escouade::PermissionRequest& request) {
  std::string command;
  if (request.input) {
    if (const auto* c = request.input->if_contains("command"); c && c->is_string()) {
      command = c->get_string();
    }
  }
  const auto words = words_of(command);
  std::string spaced;
  for (const auto& w : words)
    spaced += (spaced.empty() ? "" : " ") + w;
  for (const auto& rule : rules.deny) {
    if (!rule.contains.empty() && spaced.find(rule.contains) != std::string::npos) {
      return escouade::deny(rule.message);
    }
    for (const auto& branch : rule.push_to) {
      if (pushes_to(words, branch)) return escouade::deny(rule.message);
    }
  }
  for (const auto& kind : rules.allow_kinds) {
    if (request.kind == kind) return escouade::allow("a " + kind + " is allowed");
  }
  if (!words.empty() && !chains(command)) {
    for (const auto& allowed : rules.allow_commands) {
      const auto prefix = words_of(allowed);
      if (!prefix.empty() && prefix.size() <= words.size() &&
          std::equal(prefix.begin(), prefix.end(), words.begin())) {
        return escouade::allow(allowed + " only reads");
      }
    }
  }
  if (command.empty()) return escouade::ask("a " + request.kind + " the guard has no rule for");
  return escouade::ask("no rule of the guard covers: " + command);
}

}  // namespace guard
