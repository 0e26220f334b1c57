#pragma once

// Base64 (RFC 4648, the standard alphabet, with padding): the bodies and pieces of net/* and
// ws/* that are not UTF-8 travel in it.

#include <optional>
#include <string>
#include <string_view>

namespace escouade {

std::string base64_encode(std::string_view bytes);

// The bytes `text` encodes; nullopt when it is not base64 (a character outside the alphabet,
// a length that is not a multiple of 4, padding anywhere but at the end, bits left over).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace escouade
