// libFuzzer target for the guards that read a plugin's words: the path verdict of files/read,
// the secret key verdict, and the masking of secrets. Each checks a property that must hold
// for every input, not just that nothing crashes.
//
// Input: the first byte picks the guard, the rest is its material.
//   0: a path for own_file_parts: what it accepts never leaves, hides or names the manifest
//   1: a key for secret_key_refusal against {"token", "account:*"}: granted only as declared
//   2: secrets and a text, split by 0xFF bytes (up to 3 secrets, then the text): after mask(),
//      no secret is left in the text

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "journal/masker.hpp"
#include "policy/paths.hpp"
#include "policy/secret_keys.hpp"

namespace {

[[noreturn]] void broken() {
  std::abort();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void check_path(std::string_view path) {
  auto parts = escouade::policy::own_file_parts(path);
  if (!parts) return;
  if (parts->empty()) broken();
  for (const auto& p : *parts) {
    if (p.empty() || p[0] == '.') broken();  // hidden, "..", "."
    if (p.find_first_of(std::string_view("/\\\0", 3)) != std::string::npos) broken();
  }
  if (parts->size() == 1 && lower((*parts)[0]) == "escouade-plugin.json") broken();
  if (!path.empty() && path[0] == '/') broken();
}

void check_key(std::string_view key) {
  static const std::vector<std::string> granted = {"token", "account:*"};
  const bool ok = !escouade::policy::secret_key_refusal(granted, key);
  const bool expected = key == "token" || (key.size() > 8 && key.substr(0, 8) == "account:");
  if (ok != expected) broken();
}

void check_mask(std::string_view material) {
  std::vector<std::string> secrets;
  std::size_t at = 0;
  while (secrets.size() < 3) {
    const std::size_t cut = material.find('\xff', at);
    if (cut == std::string_view::npos) break;
    secrets.emplace_back(material.substr(at, cut - at));
    at = cut + 1;
  }
  std::string text(material.substr(at));
  escouade::Masker masker;
  for (const auto& s : secrets)
    masker.add(s);
  masker.mask(text);
  for (const auto& s : secrets) {
    // A secret made of the mask's own bytes may be written anew by the mask itself.
    if (s.empty() || s.find_first_of("\xe2\x80\xa2") != std::string::npos) continue;
    if (text.find(s) != std::string::npos) broken();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      check_path(rest);
      break;
    case 1:
      check_key(rest);
      break;
    default:
      check_mask(rest);
      break;
  }
  return 0;
}
