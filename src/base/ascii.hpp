#pragma once

// ASCII case, for the protocol words that ignore it (URL schemes and hosts, HTTP header names):
// only A-Z change, whatever the locale.

#include <string>
#include <string_view>

namespace escouade {

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace escouade
