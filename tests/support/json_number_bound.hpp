#pragma once

// For the tests and the fuzzer that hold proto::checked_object_members to Boost.JSON's parser:
// whether a text may hold a number the one-pass check does not vouch for (json_text.hpp), which
// it refuses where Boost.JSON may take it. Header only: the fuzz build links no test library.

#include <cstddef>
#include <string_view>

namespace escouade::testing {

// An exponent of three digits or more, or a run of 300 digits: a number past 1e300 may be there.
inline bool may_hold_a_number_past_1e300(std::string_view text) {
  auto digit = [&](std::size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  std::size_t run = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    run = digit(i) ? run + 1 : 0;
    if (run >= 300) return true;
    if (text[i] != 'e' && text[i] != 'E') continue;
    std::size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    std::size_t k = j;
    while (digit(k))
      ++k;
    if (k - j >= 3) return true;
  }
  return false;
}

}  // namespace escouade::testing
