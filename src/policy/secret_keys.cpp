#include "policy/secret_keys.hpp"

#include "base/utf8.hpp"

namespace escouade::policy {

namespace {

bool grants(std::string_view pattern, std::string_view key) {
  if (!pattern.empty() && pattern.back() == '*') {
    const std::string_view stem = pattern.substr(0, pattern.size() - 1);
    return key.size() > stem.size() && key.substr(0, stem.size()) == stem;
  }
  return key == pattern;
}

}  // namespace

std::optional<std::string> secret_key_form_problem(std::string_view key) {
  if (key.size() > kMaxSecretKeyBytes) {
    return "a key holds " + std::to_string(kMaxSecretKeyBytes) + " bytes at most";
  }
  if (!is_valid_utf8(key)) return "a key is UTF-8 text";
  for (char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return "a key holds no control character (NUL, line break...)";
  }
  return std::nullopt;
}

std::optional<std::string> secret_key_refusal(const std::vector<std::string>& patterns,
                                              std::string_view key) {
  if (key.substr(0, 7) == "plugin:") {
    return "a keychain name, not a key: a plugin asks for its secrets by the keys of its "
           "permissions.secrets";
  }
  for (const auto& p : patterns) {
    if (grants(p, key)) return std::nullopt;
  }
  if (patterns.empty()) return "not a key of permissions.secrets, which names none";
  return "not a key of permissions.secrets";
}

}  // namespace escouade::policy
