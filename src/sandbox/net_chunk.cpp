#include "sandbox/net_chunk.hpp"

#include <cstring>
#include <optional>

#include "base/base64.hpp"
#include "base/utf8.hpp"

namespace escouade::sandbox {

namespace {

constexpr std::string_view kStart = R"({"jsonrpc":"2.0","method":"net/chunk","params":{"stream":)";
constexpr std::string_view kData = R"(,"data":")";
constexpr std::string_view kDataBase64 = R"(,"dataBase64":")";
constexpr std::string_view kEnd = R"("}})";

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHigh = 0x8080808080808080ULL;

std::uint64_t word_at(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
// Whether one of the 8 bytes of `w` is a quote, a backslash or a control character (below 0x20):
// what ends a run of a JSON string's bytes that are themselves. May say so of a byte >= 0x80
// that is none (the exact test follows).
constexpr bool may_stop(std::uint64_t w) noexcept {
  const std::uint64_t quote = w ^ (kOnes * '"');
  const std::uint64_t backslash = w ^ (kOnes * '\\');
  return (((quote - kOnes) | (backslash - kOnes) | (w - kOnes * 0x20)) & kHigh) != 0;
}
bool stops(char c) noexcept {
  const auto b = static_cast<unsigned char>(c);
  return b == '"' || b == '\\' || b < 0x20;
}

int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
std::optional<std::uint32_t> hex4(std::string_view s, std::size_t at) {
  if (at + 4 > s.size()) return std::nullopt;
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const int d = hex_digit(s[at + i]);
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<std::uint32_t>(d);
  }
  return v;
}
void put_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The JSON string's contents from `at` (past its opening quote) decoded into `out`; where its
// closing quote is, or npos when it is not one this reader takes (a control character, an
// escape JSON does not have, a lone surrogate, no closing quote).
std::size_t unescape(std::string_view s, std::size_t at, std::string& out) {
  const char* p = s.data();
  const std::size_t n = s.size();
  for (;;) {
    std::size_t run = at;
    for (;;) {
      while (run + 8 <= n && !may_stop(word_at(p + run)))
        run += 8;
      // A word that may hold a stop, byte by byte: past it, words again (UTF-8's bytes >= 0x80
      // are taken for one by the test of words).
      const std::size_t word_end = run + 8 < n ? run + 8 : n;
      while (run < word_end && !stops(p[run]))
        ++run;
      if (run < word_end || run >= n) break;
    }
    out.append(p + at, run - at);
    if (run >= n) return std::string_view::npos;
    const char c = p[run];
    if (c == '"') return run;
    if (c != '\\' || run + 1 >= n) return std::string_view::npos;  // a control character
    const char e = p[run + 1];
    at = run + 2;
    switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        auto unit = hex4(s, at);
        if (!unit) return std::string_view::npos;
        at += 4;
        std::uint32_t cp = *unit;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return std::string_view::npos;  // a lone low surrogate
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // Its low half must follow, escaped too: a lone high surrogate is no UTF-8.
          if (at + 6 > n || p[at] != '\\' || p[at + 1] != 'u') return std::string_view::npos;
          auto low = hex4(s, at + 2);
          if (!low || *low < 0xDC00 || *low > 0xDFFF) return std::string_view::npos;
          at += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (*low - 0xDC00);
        }
        put_utf8(out, cp);
        break;
      }
      default:
        return std::string_view::npos;
    }
  }
}

}  // namespace

bool read_net_chunk(std::string_view line, NetChunkLine& chunk, std::string& bytes) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (line.substr(0, kStart.size()) != kStart) return false;
  std::size_t at = kStart.size();
  // The stream: an integer as JSON writes it (no sign, no leading zero), exact as a number of
  // JavaScript (15 digits at most).
  std::int64_t stream = 0;
  const std::size_t digits_at = at;
  while (at < line.size() && line[at] >= '0' && line[at] <= '9' && at - digits_at < 15) {
    stream = stream * 10 + (line[at] - '0');
    ++at;
  }
  const std::size_t digits = at - digits_at;
  if (digits == 0 || (digits > 1 && line[digits_at] == '0')) return false;
  std::string_view rest = line.substr(at);
  bool text;
  if (rest.substr(0, kData.size()) == kData) {
    text = true;
    at += kData.size();
  } else if (rest.substr(0, kDataBase64.size()) == kDataBase64) {
    text = false;
    at += kDataBase64.size();
  } else {
    return false;
  }
  bytes.clear();
  std::size_t close;
  if (text) {
    close = unescape(line, at, bytes);
    if (close == std::string_view::npos) return false;
    // The escapes made UTF-8; the rest must be, as the engine reads a line.
    if (!is_valid_utf8(bytes)) return false;
  } else {
    close = line.find('"', at);
    if (close == std::string_view::npos) return false;
    auto decoded = base64_decode(line.substr(at, close - at));
    if (!decoded) return false;
    bytes = std::move(*decoded);
  }
  if (line.substr(close) != kEnd) return false;
  chunk.stream = stream;
  chunk.text = text;
  return true;
}

}  // namespace escouade::sandbox
