#include "base/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace escouade {

namespace {

std::uint64_t word_at(const unsigned char* p) noexcept {
  std::uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

}  // namespace

bool is_valid_utf8(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  while (p < end) {
    // Fast paths: 32 ASCII bytes at a time, then eight (a fact's line of 400 bytes: 667
    // instructions eight at a time, docs/PERFORMANCE.md).
    while (end - p >= 32) {
      if (((word_at(p) | word_at(p + 8) | word_at(p + 16) | word_at(p + 24)) & kHigh) != 0) break;
      p += 32;
    }
    if (p == end) break;  // a multiple of 32 bytes, all taken
    if (end - p >= 8) {
      if ((word_at(p) & kHigh) == 0) {
        p += 8;
        continue;
      }
    }
    unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    std::size_t len;
    std::uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;  // a continuation byte first, an overlong lead (C0, C1) or past F4
    }
    if (static_cast<std::size_t>(end - p) < len) return false;
    for (std::size_t i = 1; i < len; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;  // overlong
    if (cp >= 0xD800 && cp <= 0xDFFF) return false;                            // surrogate
    if (cp > 0x10FFFF) return false;
    p += len;
  }
  return true;
}

std::size_t utf8_complete_prefix(std::string_view s) noexcept {
  // Walk back over at most three continuation bytes to the last lead byte.
  std::size_t n = s.size();
  std::size_t back = 0;
  while (back < 4 && back < n && (static_cast<unsigned char>(s[n - 1 - back]) & 0xC0) == 0x80) {
    ++back;
  }
  if (back == n) return n;  // only continuation bytes: nothing to wait for
  auto lead = static_cast<unsigned char>(s[n - 1 - back]);
  std::size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (want > back + 1) return n - 1 - back;  // the character is cut: keep it for later
  return n;
}

std::string to_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (i + len <= s.size() && is_valid_utf8(s.substr(i, len))) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

}  // namespace escouade
