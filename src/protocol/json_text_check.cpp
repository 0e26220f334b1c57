// checked_object_members: JSON text checked and its object's members found in one pass over it.
// Held to Boost.JSON's parser (is_json_text) by json_text_check_test and by fuzz_codec, which
// traps when this takes a line that parser refuses.

#include <bit>
#include <cstdint>
#include <cstring>

#include "protocol/json_text.hpp"

namespace escouade::proto {

namespace {

// Past these, a number is not vouched for here: its value may be beyond a double's range, which
// Boost.JSON reads as an infinity the Decoder refuses. Such text is refused, and goes the
// Decoder's way, which decides. A double holds up to about 1.8e308.
constexpr int kMaxDigits = 300;    // in its integer part, and in its fraction
constexpr int kMaxExponent = 300;  // written, either sign; with the integer digits, at most this

// The 8-byte reads below take the first byte in memory as the lowest of the word.
static_assert(std::endian::native == std::endian::little, "json_text_check reads little-endian");

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;

// Of 8 bytes, those that need a look (a quote, a backslash, a control character, a byte of a
// multi-byte UTF-8 sequence), each marked by its high bit; 0 when none does. Each test is the
// "some byte is zero / less than" trick: a borrow may mark bytes above a marked one, never
// below, so the lowest mark is exact.
std::uint64_t special8(const char* p) noexcept {
  std::uint64_t x;
  std::memcpy(&x, p, sizeof x);
  const std::uint64_t quote = x ^ (kOnes * '"');
  const std::uint64_t backslash = x ^ (kOnes * '\\');
  const std::uint64_t special = ((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash) |
                                ((x - kOnes * 0x20) & ~x) | x;
  return special & kHighs;
}

int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_continuation(unsigned char c) noexcept {
  return (c & 0xC0) == 0x80;
}

struct Checker {
  const char* p;
  const char* end;
  std::size_t depth_left;

  void skip_space() noexcept {
    // Compact JSON has none: one test for the usual case, a byte past the space.
    while (p < end && static_cast<unsigned char>(*p) <= ' ' &&
           (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
      ++p;
  }

  // Four hex digits at p: their value, or -1.
  int hex4() noexcept {
    if (end - p < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = hex_digit(p[i]);
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    p += 4;
    return v;
  }

  // At a '\\' inside a string: past its escape.
  bool escape() noexcept {
    if (end - p < 2) return false;
    const char c = p[1];
    p += 2;
    switch (c) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        return true;
      case 'u':
        break;
      default:
        return false;
    }
    const int u1 = hex4();
    if (u1 < 0 || (u1 >= 0xDC00 && u1 <= 0xDFFF)) return false;  // a trailing surrogate first
    if (u1 < 0xD800 || u1 > 0xDBFF) return true;
    // A leading surrogate: its trailing one must follow, escaped.
    if (end - p < 2 || p[0] != '\\' || p[1] != 'u') return false;
    p += 2;
    const int u2 = hex4();
    return u2 >= 0xDC00 && u2 <= 0xDFFF;
  }

  // At a byte of 0x80 or more inside a string: past its UTF-8 sequence, which must be one of a
  // scalar value in its shortest form (no surrogate, nothing past U+10FFFF).
  bool utf8() noexcept {
    const auto c = static_cast<unsigned char>(*p);
    const auto left = end - p;
    auto at = [&](int i) { return static_cast<unsigned char>(p[i]); };
    int length;
    unsigned char low = 0x80, high = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    } else {
      return false;
    }
    if (left < length || at(1) < low || at(1) > high) return false;
    for (int i = 2; i < length; ++i) {
      if (!is_continuation(at(i))) return false;
    }
    p += length;
    return true;
  }

  // At a '"': past the string's closing quote, every byte of it checked.
  bool string() noexcept {
    ++p;
    for (;;) {
      // Plain bytes 8 at a time, up to the first that needs a look.
      while (end - p >= 8) {
        const std::uint64_t special = special8(p);
        if (special == 0) {
          p += 8;
          continue;
        }
        p += std::countr_zero(special) / 8;
        break;
      }
      if (p >= end) return false;
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"') {
        ++p;
        return true;
      }
      if (c == '\\') {
        if (!escape()) return false;
      } else if (c < 0x20) {
        return false;
      } else if (c >= 0x80) {
        if (!utf8()) return false;
      } else {
        ++p;  // in the last 7 bytes, read one at a time
      }
    }
  }

  // Digits at p: how many, p past them.
  int digits() noexcept {
    const char* start = p;
    while (p < end && *p >= '0' && *p <= '9')
      ++p;
    const auto n = p - start;
    return n > kMaxDigits ? kMaxDigits + 1 : static_cast<int>(n);
  }

  bool number() noexcept {
    if (*p == '-') ++p;
    if (p >= end) return false;
    int integer;
    if (*p == '0') {
      ++p;
      integer = 1;
    } else if (*p >= '1' && *p <= '9') {
      integer = digits();
    } else {
      return false;
    }
    if (integer > kMaxDigits) return false;
    if (p < end && *p == '.') {
      ++p;
      const int fraction = digits();
      if (fraction == 0 || fraction > kMaxDigits) return false;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      ++p;
      bool negative = false;
      if (p < end && (*p == '+' || *p == '-')) negative = *p++ == '-';
      const char* start = p;
      int exponent = 0;
      while (p < end && *p >= '0' && *p <= '9') {
        if (exponent <= kMaxExponent) exponent = exponent * 10 + (*p - '0');
        ++p;
      }
      if (p == start || exponent > kMaxExponent) return false;
      if (!negative && integer + exponent > kMaxExponent) return false;
    }
    return true;
  }

  bool literal(const char* word, std::size_t size) noexcept {
    if (static_cast<std::size_t>(end - p) < size || std::memcmp(p, word, size) != 0) return false;
    p += size;
    return true;
  }

  // The object at p, its members into `out` when given (nullopt past out.size() of them), and
  // those of the first object value of the member `nested->key` into nested->out.
  struct Nested {
    std::string_view key;
    std::span<MemberText> out;
    std::optional<std::size_t> count;
  };

  // At a '{' or a '[': past it and the whitespace after it; false past the depth bound.
  bool enter() noexcept {
    if (depth_left == 0) return false;
    --depth_left;
    ++p;
    skip_space();
    return true;
  }

  // At the `close` of the container entered last: past it, and out of that container.
  bool closes(char close) noexcept {
    if (p >= end || *p != close) return false;
    ++p;
    ++depth_left;
    return true;
  }

  // After an element of a container: past the ',' before the next one, or the `close` that ends
  // the container; anything else breaks the text.
  enum class After { next, closed, broken };
  After after_element(char close) noexcept {
    skip_space();
    if (closes(close)) return After::closed;
    if (p >= end || *p != ',') return After::broken;
    ++p;
    skip_space();
    return After::next;
  }

  bool object(std::span<MemberText>* out, Nested* nested, std::size_t& count) noexcept {
    count = 0;
    if (!enter()) return false;
    if (closes('}')) return true;
    for (;;) {
      if (p >= end || *p != '"') return false;
      const char* key = p + 1;
      if (!string()) return false;
      const std::string_view key_text(key, static_cast<std::size_t>(p - 1 - key));
      skip_space();
      if (p >= end || *p != ':') return false;
      ++p;
      skip_space();
      const char* value = p;
      if (nested && !nested->count && key_text == nested->key && p < end && *p == '{') {
        std::size_t inner = 0;
        std::span<MemberText> inner_out = nested->out;
        if (!object(&inner_out, nullptr, inner)) return false;
        nested->count = inner;
      } else if (!this->value()) {
        return false;
      }
      if (out) {
        if (count == out->size()) return false;
        (*out)[count] =
            MemberText{key_text, std::string_view(value, static_cast<std::size_t>(p - value))};
      }
      ++count;
      const After after = after_element('}');
      if (after != After::next) return after == After::closed;
    }
  }

  bool array() noexcept {
    if (!enter()) return false;
    if (closes(']')) return true;
    for (;;) {
      if (!value()) return false;
      const After after = after_element(']');
      if (after != After::next) return after == After::closed;
    }
  }

  // One value at p (no whitespace before it), p left past it.
  bool value() noexcept {
    if (p >= end) return false;
    switch (*p) {
      case '"':
        return string();
      case '{': {
        std::size_t ignored = 0;
        return object(nullptr, nullptr, ignored);
      }
      case '[':
        return array();
      case 't':
        return literal("true", 4);
      case 'f':
        return literal("false", 5);
      case 'n':
        return literal("null", 4);
      default:
        return number();
    }
  }
};

std::optional<NestedMembers> check_top(std::string_view text, std::size_t max_depth,
                                       std::span<MemberText> out, Checker::Nested* nested) {
  Checker c{text.data(), text.data() + text.size(), max_depth};
  c.skip_space();
  if (c.p >= c.end || *c.p != '{') return std::nullopt;
  std::size_t count = 0;
  if (!c.object(&out, nested, count)) return std::nullopt;
  c.skip_space();
  if (c.p != c.end) return std::nullopt;
  return NestedMembers{count, nested ? nested->count : std::nullopt};
}

}  // namespace

std::optional<std::size_t> checked_object_members(std::string_view text, std::size_t max_depth,
                                                  std::span<MemberText> out) {
  const auto n = check_top(text, max_depth, out, nullptr);
  if (!n) return std::nullopt;
  return n->outer;
}

std::optional<NestedMembers> checked_object_members(std::string_view text, std::size_t max_depth,
                                                    std::span<MemberText> out, std::string_view key,
                                                    std::span<MemberText> inner) {
  Checker::Nested nested{key, inner, std::nullopt};
  return check_top(text, max_depth, out, &nested);
}

}  // namespace escouade::proto
