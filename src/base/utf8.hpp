#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace escouade {

// True when `s` is well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
bool is_valid_utf8(std::string_view s) noexcept;

// The length of the longest prefix of `s` that does not end inside a multi-byte character;
// what is past it may be completed by the next read.
std::size_t utf8_complete_prefix(std::string_view s) noexcept;

// `s` with each byte that does not begin a well-formed character replaced by U+FFFD, the rest as
// it is: for text that must be UTF-8 (a program's output as proc/out carries it).
std::string to_valid_utf8(std::string_view s);

}  // namespace escouade
