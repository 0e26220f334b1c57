#include "protocol/json_text.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parser.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "protocol/decode.hpp"

namespace escouade::proto {

namespace json = boost::json;

namespace {

// Boost.JSON's parser with nothing built: it checks the grammar, the depth and the UTF-8 as
// json::parser does for the Decoder; a number too large for a double (read as infinity, which
// no JSON can carry back out) stops it, as the Decoder refuses such a line.
struct CheckOnly {
  static constexpr std::size_t max_object_size = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t max_array_size = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t max_key_size = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t max_string_size = std::numeric_limits<std::size_t>::max();

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_array_begin(json::error_code&) { return true; }
  bool on_array_end(std::size_t, json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return true; }
  bool on_object_end(std::size_t, json::error_code&) { return true; }
  bool on_string_part(json::string_view, std::size_t, json::error_code&) { return true; }
  bool on_string(json::string_view, std::size_t, json::error_code&) { return true; }
  bool on_key_part(json::string_view, std::size_t, json::error_code&) { return true; }
  bool on_key(json::string_view, std::size_t, json::error_code&) { return true; }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t, json::string_view, json::error_code&) { return true; }
  bool on_uint64(std::uint64_t, json::string_view, json::error_code&) { return true; }
  bool on_double(double d, json::string_view, json::error_code& ec) {
    if (std::isfinite(d)) return true;
    ec = json::error::exponent_overflow;
    return false;
  }
  bool on_bool(bool, json::error_code&) { return true; }
  bool on_null(json::error_code&) { return true; }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }
};

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// A cursor over text that may not be JSON at all: every step checks the end first.
struct Cursor {
  const char* p;
  const char* end;

  bool at_end() const noexcept { return p >= end; }
  void skip_space() noexcept {
    while (p < end && is_space(*p))
      ++p;
  }
  // At a '"': past the string's closing quote. False when the text ends first. The quote that
  // closes it is the first one after an even run of backslashes; memchr finds each candidate.
  bool skip_string() noexcept {
    const char* const inside = ++p;
    while (p < end) {
      const auto* quote =
          static_cast<const char*>(std::memchr(p, '"', static_cast<std::size_t>(end - p)));
      if (!quote) break;
      const char* run = quote;
      while (run > inside && run[-1] == '\\')
        --run;
      p = quote + 1;
      if ((quote - run) % 2 == 0) return true;
    }
    p = end;
    return false;
  }
  // Past one value: a string, an object or array with everything in it, or a literal.
  bool skip_value() noexcept {
    if (at_end()) return false;
    if (*p == '"') return skip_string();
    if (*p == '{' || *p == '[') {
      std::size_t depth = 0;
      while (p < end) {
        const char c = *p;
        if (c == '"') {
          if (!skip_string()) return false;
          continue;
        }
        ++p;
        if (c == '{' || c == '[') {
          ++depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
          return true;  // the first bracket met is the value's own: depth was 1 or more
        }
      }
      return false;
    }
    const char* start = p;
    while (p < end && *p != ',' && *p != '}' && *p != ']' && !is_space(*p))
      ++p;
    return p > start;
  }
};

}  // namespace

bool is_json_text(std::string_view text, std::size_t max_depth) {
  json::parse_options options;
  options.max_depth = max_depth;
  json::basic_parser<CheckOnly> parser(options);
  json::error_code ec;
  const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
  return !ec && used == text.size();
}

namespace {

// The object whose '{' is at the cursor, its members into `out`, the cursor left past its '}'.
std::optional<std::size_t> scan_object(Cursor& c, std::span<MemberText> out) {
  if (c.at_end() || *c.p != '{') return std::nullopt;
  ++c.p;
  c.skip_space();
  if (!c.at_end() && *c.p == '}') {
    ++c.p;
    return 0;
  }
  std::size_t n = 0;
  while (!c.at_end()) {
    if (n == out.size() || *c.p != '"') return std::nullopt;
    const char* key = c.p + 1;
    if (!c.skip_string()) return std::nullopt;
    out[n].key = std::string_view(key, static_cast<std::size_t>(c.p - 1 - key));
    c.skip_space();
    if (c.at_end() || *c.p != ':') return std::nullopt;
    ++c.p;
    c.skip_space();
    const char* value = c.p;
    if (!c.skip_value()) return std::nullopt;
    out[n].value = std::string_view(value, static_cast<std::size_t>(c.p - value));
    ++n;
    c.skip_space();
    if (c.at_end()) return std::nullopt;
    if (*c.p == '}') {
      ++c.p;
      return n;
    }
    if (*c.p != ',') return std::nullopt;
    ++c.p;
    c.skip_space();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> object_members(std::string_view text, std::span<MemberText> out) {
  Cursor c{text.data(), text.data() + text.size()};
  c.skip_space();
  return scan_object(c, out);
}

json::value parse_checked(std::string_view text, json::storage_ptr storage) {
  // The parser's stack of values under construction, for the few levels a short text has; a
  // deeper or longer one takes more from the heap.
  alignas(std::max_align_t) unsigned char work[1024];
  json::parse_options options;
  options.max_depth = DecodeOptions{}.max_depth;
  json::parser parser(json::storage_ptr(), options, work, sizeof work);
  parser.reset(std::move(storage));
  json::error_code ec;
  parser.write(text.data(), text.size(), ec);
  if (ec) return nullptr;
  return parser.release();
}

bool has_escaped_key(std::span<const MemberText> members) {
  for (const MemberText& m : members) {
    if (m.key.find('\\') != std::string_view::npos) return true;
  }
  return false;
}

std::optional<std::string_view> member(std::span<const MemberText> members, std::string_view key) {
  std::optional<std::string_view> found;
  for (const MemberText& m : members) {
    if (m.key != key) continue;
    if (found) return std::nullopt;
    found = m.value;
  }
  return found;
}

std::optional<std::int64_t> integer_text(std::string_view value) {
  const std::string_view digits = value.substr(value.starts_with('-') ? 1 : 0);
  // No sign but '-', no leading zero ("-0" is read as a double by some parsers): a plain integer.
  if (digits.empty() || (digits[0] == '0' && value.size() > 1)) return std::nullopt;
  for (char d : digits) {
    if (d < '0' || d > '9') return std::nullopt;
  }
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return n;
}

}  // namespace escouade::proto
