#pragma once

// The guard's rules (rules.json) and the verdict they give on a permission request. Pure: no
// I/O, so the rules can be read once and asked many times.

#include <algorithm>
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

// White space as the "C" locale's isspace: " \t\n\v\f\r". A comparison, where
// find_first_of(" \t\n\v\f\r") looked each byte up in the set (a memchr a byte).
constexpr bool is_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

// The next word of `text` from `at`, which moves past it; empty at the end of `text`.
inline std::string_view next_word(std::string_view text, std::size_t& at) {
  while (at < text.size() && is_space(text[at]))
    ++at;
  const std::size_t begin = at;
  while (at < text.size() && !is_space(text[at]))
    ++at;
  return text.substr(begin, at - begin);
}

// The words of `text`, split at white space as `std::istream >> std::string` splits them (the
// "C" locale's), without a stream: in the run.wasm build, libc++'s streams and locales were half
// the module and a quarter of a decision's instructions. Views into `text`, in one allocation:
// a decision allocates next to nothing, which counts most in the run.wasm build.
inline std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> out;
  out.reserve(text.size() / 2 + 1);  // a word and its space take two bytes at least
  std::size_t at = 0;
  for (auto word = next_word(text, at); !word.empty(); word = next_word(text, at))
    out.push_back(word);
  return out;
}

// Whether `words` begin with the words of `prefix`, which has some.
inline bool begins_with_words(const std::vector<std::string_view>& words, std::string_view prefix) {
  std::size_t at = 0;
  std::size_t k = 0;
  for (auto word = next_word(prefix, at); !word.empty(); word = next_word(prefix, at), ++k) {
    if (k >= words.size() || words[k] != word) return false;
  }
  return k > 0;
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
inline bool pushes_to(const std::vector<std::string_view>& words, std::string_view branch) {
  constexpr std::string_view kHeads = "refs/heads/";
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] != "git" || words[i + 1] != "push") continue;
    for (std::size_t j = i + 2; j < words.size(); ++j) {
      const std::string_view w = words[j];
      if (w == ";" || w == "&&" || w == "||" || w == "|") break;
      const auto colon = w.rfind(':');
      const std::string_view target = colon == std::string_view::npos ? w : w.substr(colon + 1);
      if (target == branch || (target.size() == kHeads.size() + branch.size() &&
                               target.starts_with(kHeads) && target.ends_with(branch)))
        return true;
    }
  }
  return false;
}

// Shell syntax that could chain another command after an allowed one.
inline bool chains(std::string_view command) {
  return std::any_of(command.begin(), command.end(), [](char c) {
    return c == ';' || c == '|' || c == '&' || c == '`' || c == '$' || c == '<' || c == '>' ||
           c == '\n';
  });
}

inline escouade::Decision decide(const Rules& rules, const escouade::PermissionRequest& request) {
  std::string_view command;
  if (request.input) {
    if (const auto* c = request.input->if_contains("command"); c && c->is_string()) {
      command = c->get_string();
    }
  }
  const auto words = words_of(command);
  // The words joined by one space each: the command itself when it is already so (its only
  // white space single spaces between words), as it mostly is.
  std::size_t joined_size = words.empty() ? 0 : words.size() - 1;
  for (const auto w : words)
    joined_size += w.size();
  std::string joined;
  std::string_view spaced = command;
  const bool single_spaced =
      joined_size == command.size() &&
      std::none_of(command.begin(), command.end(), [](char c) { return c != ' ' && is_space(c); });
  if (!single_spaced) {
    joined.reserve(joined_size);
    for (const auto w : words) {
      if (!joined.empty()) joined += ' ';
      joined += w;
    }
    spaced = joined;
  }
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
      if (begins_with_words(words, allowed)) return escouade::allow(allowed + " only reads");
    }
  }
  if (command.empty()) return escouade::ask("a " + request.kind + " the guard has no rule for");
  std::string message = "no rule of the guard covers: ";
  message += command;
  return escouade::ask(std::move(message));
}

}  // namespace guard
