#include "runtime/module_fingerprint.hpp"

#include <algorithm>
#include <cctype>

#include "base/sha256.hpp"

namespace escouade::runtime {

bool is_sha256_hex(std::string_view text) noexcept {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         });
}

std::optional<std::string> fingerprint_mismatch(std::string_view name, std::string_view bytes,
                                                std::string_view expected) {
  std::string want(expected);
  std::transform(want.begin(), want.end(), want.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  const std::string got = Sha256::hex(Sha256::of(bytes));
  if (got == want) return std::nullopt;
  return "its module " + std::string(name) +
         " does not match the fingerprint of its store: its SHA-256 is " + got +
         ", the store's version.json says " + want + "; it was not compiled";
}

}  // namespace escouade::runtime
