#include "base/quote.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "base/utf8.hpp"

namespace escouade {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // …
constexpr char kHex[] = "0123456789ABCDEF";

// The length of the well-formed UTF-8 character that starts `s` (not empty, first byte not
// ASCII), or 0 when its first byte starts none.
std::size_t multibyte_char_length(std::string_view s) noexcept {
  auto lead = static_cast<unsigned char>(s[0]);
  std::size_t len = (lead >= 0xC2 && lead <= 0xDF)   ? 2
                    : (lead >= 0xE0 && lead <= 0xEF) ? 3
                    : (lead >= 0xF0 && lead <= 0xF4) ? 4
                                                     : 0;
  if (len == 0 || len > s.size()) return 0;
  return is_valid_utf8(s.substr(0, len)) ? len : 0;
}

// Whether none of the 8 bytes at `p` is below 0x20, DEL or past ASCII: each is kept as it is
// (a tab, kept too, makes the word not plain; the caller takes it byte by byte). The tests of
// a byte below 0x20 and of a zero byte are the exact ones for a whole word (Anderson, "Bit
// Twiddling Hacks": hasless, haszero).
bool plain_word(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  const std::uint64_t below_space = (w - kOnes * 0x20) & ~w & kHighs;
  const std::uint64_t del = w ^ (kOnes * 0x7F);
  const std::uint64_t is_del = (del - kOnes) & ~del & kHighs;
  return ((w & kHighs) | below_space | is_del) == 0;
}

// One character of the input and what the journal writes for it.
struct Piece {
  std::size_t input_bytes = 1;
  std::string_view text;
};

// The escape of the character that starts `s` (not empty); `buf` holds it when it is not a slice
// of `s`.
Piece escape_first_char(std::string_view s, char (&buf)[6]) noexcept {
  auto c = static_cast<unsigned char>(s[0]);
  auto hex = [&buf](char kind, unsigned value, std::size_t digits) {
    buf[0] = '\\';
    buf[1] = kind;
    for (std::size_t i = 0; i < digits; ++i) {
      buf[2 + i] = kHex[(value >> (4 * (digits - 1 - i))) & 0xF];
    }
    return std::string_view(buf, 2 + digits);
  };
  if (c < 0x80) {
    if (c == '\n') return {1, "\\n"};
    if (c == '\r') return {1, "\\r"};
    if ((c < 0x20 && c != '\t') || c == 0x7F) return {1, hex('x', c, 2)};
    return {1, s.substr(0, 1)};
  }
  std::size_t len = multibyte_char_length(s);
  if (len == 0) return {1, hex('x', c, 2)};
  auto c1 = static_cast<unsigned char>(s[1]);
  if (c == 0xC2 && c1 <= 0x9F) return {2, hex('u', c1, 4)};  // U+0080..U+009F
  if (c == 0xE2 && c1 == 0x80) {
    auto c2 = static_cast<unsigned char>(s[2]);
    if (c2 == 0xA8) return {3, "\\u2028"};
    if (c2 == 0xA9) return {3, "\\u2029"};
  }
  return {len, s.substr(0, len)};
}

}  // namespace

std::size_t append_escaped_for_journal(std::string& out, std::string_view s, std::size_t max_chars,
                                       std::size_t max_bytes) {
  // A hint only: escapes can make the text longer.
  out.reserve(out.size() + std::min({s.size(), max_bytes, max_chars}));
  const std::size_t start = out.size();
  std::size_t taken = 0;
  char buf[6];
  for (std::size_t chars = 0; taken < s.size() && chars < max_chars; ++chars) {
    // A run of printable ASCII (and tabs) is kept as it is, one byte a character: appended at
    // once (callgrind: a journal line's escape cost 25 instructions a byte, one at a time).
    std::size_t run = 0;
    const std::size_t room = std::min(max_chars - chars, max_bytes - (out.size() - start));
    const std::size_t limit = std::min(room, s.size() - taken);
    const char* from = s.data() + taken;
    while (run < limit) {
      // Eight bytes at once when none of them is escaped (callgrind: 740 instructions a
      // decision's vote line, one byte at a time); a word with a tab goes byte by byte.
      if (limit - run >= 8 && plain_word(from + run)) {
        run += 8;
        continue;
      }
      const auto c = static_cast<unsigned char>(from[run]);
      if ((c < 0x20 && c != '\t') || c >= 0x7F) break;
      ++run;
    }
    if (run > 0) {
      out.append(s.data() + taken, run);
      taken += run;
      chars += run - 1;  // the loop counts the last one
      continue;
    }
    Piece piece = escape_first_char(s.substr(taken), buf);
    if (out.size() - start + piece.text.size() > max_bytes) break;
    out += piece.text;
    taken += piece.input_bytes;
  }
  return taken;
}

std::string quote_for_journal(std::string_view s, std::size_t max_chars) {
  std::string out;
  std::size_t taken =
      append_escaped_for_journal(out, s, max_chars, std::numeric_limits<std::size_t>::max());
  if (taken < s.size()) out += kEllipsis;
  return out;
}

std::string quote_name(std::string_view s, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(s.size(), max_bytes) + 2);
  out += '"';
  std::size_t i = 0;
  while (i < s.size() && i < max_bytes) {
    const char ch = s[i];
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      if (const std::size_t n = multibyte_char_length(s.substr(i)); n > 0) {
        out.append(s.substr(i, n));
        i += n;
      } else {
        out += "\xEF\xBF\xBD";  // U+FFFD
        ++i;
      }
      continue;
    }
    ++i;
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  if (i < s.size()) out += std::string(kEllipsis) + " (" + std::to_string(s.size()) + " bytes)";
  return out;
}

}  // namespace escouade
