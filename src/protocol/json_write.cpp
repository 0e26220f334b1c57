#include "protocol/json_write.hpp"

#include <array>
#include <boost/json/serializer.hpp>
#include <boost/json/value.hpp>
#include <charconv>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace escouade::proto {

namespace json = boost::json;

namespace {

// What Boost.JSON's serializer writes of the value it was reset to, appended to `out`: through a
// buffer on the stack, so the cost is linear in what is written, however long `out` already is
// (a batch of 200,000 answers is appended to one string).
void drain_into(json::serializer& sr, std::string& out) {
  char buffer[1024];
  while (!sr.done()) {
    const auto written = sr.read(buffer, sizeof buffer);
    out.append(written.data(), written.size());
  }
}

// One serializer a thread, reset for each value: a new one allocated its stack at the first
// object or array of every message (callgrind, bench_host call: an allocation a call).
json::serializer& serializer() {
  thread_local json::serializer sr;
  return sr;
}

template <class T>
void serialize_into(std::string& out, const T& v) {
  json::serializer& sr = serializer();
  sr.reset(&v);
  drain_into(sr, out);
}

// memcpy of `n` bytes, inline for up to 16 of them (keys and most strings of a message): two
// fixed-size copies that may overlap, where a call to memcpy would cost more than the copy.
inline void copy_short(char* to, const char* from, std::size_t n) {
  if (n >= 8 && n <= 16) {
    std::memcpy(to, from, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(to, from, 4);
    std::memcpy(to + n - 4, from + n - 4, 4);
  } else if (n < 4) {
    for (std::size_t i = 0; i < n; ++i)
      to[i] = from[i];
  } else {
    std::memcpy(to, from, n);
  }
}

// What the writers below append to: a buffer on the stack, moved to `out` when full and when the
// sink goes. A string's append costs a capacity test and a call; a byte put here costs a test.
class Sink {
 public:
  explicit Sink(std::string& out) : out_(out) {}
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;
  ~Sink() { flush(); }

  void put(char c) {
    if (used_ == sizeof buffer_) flush();
    buffer_[used_++] = c;
  }
  void put(const char* p, std::size_t n) {
    if (n > sizeof buffer_ - used_) {
      flush();
      if (n > sizeof buffer_) {
        out_.append(p, n);
        return;
      }
    }
    std::memcpy(buffer_ + used_, p, n);
    used_ += n;
  }
  void put(std::string_view s) { put(s.data(), s.size()); }
  // `s` between quotes, as it is.
  void put_quoted(std::string_view s) {
    if (s.size() + 2 > sizeof buffer_ - used_) {
      put('"');
      put(s);
      return put('"');
    }
    buffer_[used_] = '"';
    copy_short(buffer_ + used_ + 1, s.data(), s.size());
    used_ += s.size() + 2;
    buffer_[used_ - 1] = '"';
  }
  // What is held so far, in `out`: before something else appends to it.
  std::string& flushed() {
    flush();
    return out_;
  }

 private:
  void flush() {
    out_.append(buffer_, used_);
    used_ = 0;
  }
  std::string& out_;
  std::size_t used_ = 0;
  char buffer_[1024];
};

// `n` in decimal, written into `digits`.
template <class Int>
std::string_view digits_of(Int n, char (&digits)[24]) {
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  return {digits, static_cast<std::size_t>(end - digits)};
}

// Whether any of the 8 bytes of `w` is one the serializer escapes: a quote, a backslash or a
// control character (it writes DEL and the bytes past ASCII as they are). A subtraction borrows
// only from a byte that matched, so the answer is exact for the word; which byte it was is
// found one at a time.
constexpr bool may_need_escape(std::uint64_t w) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t highs = 0x8080808080808080ULL;
  const std::uint64_t quote = w ^ (ones * '"');
  const std::uint64_t backslash = w ^ (ones * '\\');
  const std::uint64_t found =
      ((w - ones * 0x20) & ~w) | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash);
  return (found & highs) != 0;
}

// The bytes the serializer escapes, as a table: one load a byte.
constexpr auto kEscaped = [] {
  std::array<bool, 256> t{};
  for (int b = 0; b < 0x20; ++b)
    t[b] = true;
  t['"'] = t['\\'] = true;
  return t;
}();

bool escaped(char c) noexcept {
  return kEscaped[static_cast<unsigned char>(c)];
}

#if defined(__SSE2__)
// The bytes of the sixteen at `v` that need escaping, a bit each: control characters (the three
// high bits clear), quotes and backslashes.
inline unsigned escape_mask(__m128i v) {
  const __m128i control =
      _mm_cmpeq_epi8(_mm_and_si128(v, _mm_set1_epi8(static_cast<char>(0xe0))), _mm_setzero_si128());
  const __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
  const __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
  return static_cast<unsigned>(
      _mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash))));
}
#endif

// Whether the serializer would write a byte of `s` otherwise than as it is: sixteen bytes at a
// time with SSE2, else eight, the last ones in a block that may overlap the one before; a string
// shorter than a word byte by byte (a word made of its bytes costs as much, callgrind).
bool needs_escape(std::string_view s) noexcept {
  const char* p = s.data();
  const std::size_t n = s.size();
  if (n < 8) {
    for (std::size_t i = 0; i < n; ++i)
      if (escaped(p[i])) return true;
    return false;
  }
#if defined(__SSE2__)
  // callgrind, bench_host facts 1 (a fact whose data holds 200 bytes of text): 5,590 -> 5,090
  // instructions to publish it.
  if (n >= 16) {
    for (std::size_t i = 0; i + 16 <= n; i += 16) {
      if (escape_mask(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))) != 0) return true;
    }
    return escape_mask(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16))) != 0;
  }
#endif
  std::uint64_t w;
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    std::memcpy(&w, p + i, sizeof w);
    if (may_need_escape(w)) return true;
  }
  std::memcpy(&w, p + n - 8, sizeof w);
  return may_need_escape(w);
}

void put_escape(Sink& out, unsigned char b) {
  // Those with a letter of their own; the other control characters as \u00XX, lower-case hex.
  static constexpr std::string_view kBytes = "\"\\\b\f\n\r\t";
  static constexpr std::string_view kLetters = "\"\\bfnrt";
  if (const auto i = kBytes.find(static_cast<char>(b)); i != std::string_view::npos) {
    const char e[] = {'\\', kLetters[i]};
    return out.put(e, sizeof e);
  }
  static constexpr char hex[] = "0123456789abcdef";
  const char u[] = {'\\', 'u', '0', '0', hex[b >> 4], hex[b & 0xf]};
  out.put(u, sizeof u);
}

// The escape of byte `b` written at `to`; where it ends.
char* write_escape(char* to, unsigned char b) {
  static constexpr char hex[] = "0123456789abcdef";
  char letter = 0;
  switch (b) {
    case '"':
      letter = '"';
      break;
    case '\\':
      letter = '\\';
      break;
    case '\b':
      letter = 'b';
      break;
    case '\f':
      letter = 'f';
      break;
    case '\n':
      letter = 'n';
      break;
    case '\r':
      letter = 'r';
      break;
    case '\t':
      letter = 't';
      break;
    default:
      break;
  }
  *to++ = '\\';
  if (letter != 0) {
    *to++ = letter;
    return to;
  }
  *to++ = 'u';
  *to++ = '0';
  *to++ = '0';
  *to++ = hex[b >> 4];
  *to++ = hex[b & 0xf];
  return to;
}

// Past this size an escaped string is written straight into the output: a long text (a file
// fs/read gives, a piece of a stream) has an escape every few dozen bytes (its line breaks, its
// quotes, its tabs), and writing it run by run through the sink, a copy a run, cost about 16
// instructions a byte (callgrind: 4.3M for a 256 KiB source file); eight bytes at a time, about
// 9.5 (most words of such a text hold an escape); sixteen at a time with SSE2, as below, 2.5.
constexpr std::size_t kLongString = 512;

// The output grows ahead of the writing by what one step can write at most: sixteen bytes
// stored whole (of which some may be written again), then one escape.
void put_long_escaped(std::string& out, std::string_view s) {
  constexpr std::size_t kStepAtMost = 16 + 6;
  const std::size_t at = out.size();
  out.resize(at + s.size() + s.size() / 8 + kStepAtMost + 2);
  char* to = out.data() + at;
  char* limit = out.data() + out.size();
  auto room = [&] {
    if (static_cast<std::size_t>(limit - to) >= kStepAtMost + 1) return;
    const std::size_t written = static_cast<std::size_t>(to - out.data());
    out.resize(out.size() * 2);
    to = out.data() + written;
    limit = out.data() + out.size();
  };
  *to++ = '"';
  const char* p = s.data();
  const char* const end = p + s.size();
#if defined(__SSE2__)
  // Sixteen bytes stored as they are, then `to` and `p` moved past those before the first byte
  // to escape (all sixteen when there is none), and that byte escaped.
  while (end - p >= 16) {
    room();
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to), v);
    const unsigned mask = escape_mask(v);
    if (mask == 0) {
      p += 16;
      to += 16;
      continue;
    }
    const int clean = __builtin_ctz(mask);
    p += clean;
    to = write_escape(to + clean, static_cast<unsigned char>(*p++));
  }
#endif
  for (; p != end; ++p) {
    room();
    const auto b = static_cast<unsigned char>(*p);
    if (kEscaped[b])
      to = write_escape(to, b);
    else
      *to++ = static_cast<char>(b);
  }
  *to++ = '"';
  out.resize(static_cast<std::size_t>(to - out.data()));
}

// `s` between quotes, in runs between the bytes that need escaping. Kept out of put_string,
// whose nearly every call it would otherwise burden with saving its registers.
[[gnu::noinline]] void put_escaped(Sink& out, std::string_view s) {
  if (s.size() >= kLongString) return put_long_escaped(out.flushed(), s);
  const char* p = s.data();
  const char* const end = p + s.size();
  const char* run = p;
  out.put('"');
  for (; p != end; ++p) {
    if (!escaped(*p)) continue;
    out.put(run, static_cast<std::size_t>(p - run));
    put_escape(out, static_cast<unsigned char>(*p));
    run = p + 1;
  }
  out.put(run, static_cast<std::size_t>(p - run));
  out.put('"');
}

// `s` between quotes, escaped: whole when nothing in it needs escaping, as nearly always.
inline void put_string(Sink& out, std::string_view s) {
  if (needs_escape(s)) return put_escaped(out, s);
  out.put_quoted(s);
}

// Deeper than this, a value is handed to Boost.JSON's serializer, whose stack is on the heap:
// what this file writes itself recurses, and a value built in code has no depth bound.
constexpr int kMaxRecursion = 64;

void put_value(Sink& out, const json::value& v, int depth);

void put_members(Sink& out, const json::object& o, int depth) {
  char separator = '{';
  for (const auto& member : o) {
    out.put(separator);
    separator = ',';
    put_string(out, std::string_view(member.key().data(), member.key().size()));
    out.put(':');
    put_value(out, member.value(), depth);
  }
  if (separator == '{') out.put('{');
  out.put('}');
}

void put_value(Sink& out, const json::value& v, int depth) {
  switch (v.kind()) {
    case json::kind::null:
      return out.put("null");
    case json::kind::bool_:
      return out.put(v.get_bool() ? "true" : "false");
    case json::kind::int64: {
      char digits[24];
      return out.put(digits_of(v.get_int64(), digits));
    }
    case json::kind::uint64: {
      char digits[24];
      return out.put(digits_of(v.get_uint64(), digits));
    }
    case json::kind::double_:
      return serialize_into(out.flushed(), v);
    case json::kind::string: {
      const json::string& s = v.get_string();
      return put_string(out, std::string_view(s.data(), s.size()));
    }
    case json::kind::array: {
      if (depth >= kMaxRecursion) return serialize_into(out.flushed(), v);
      out.put('[');
      bool first = true;
      for (const json::value& item : v.get_array()) {
        if (!first) out.put(',');
        first = false;
        put_value(out, item, depth + 1);
      }
      return out.put(']');
    }
    case json::kind::object:
      if (depth >= kMaxRecursion) return serialize_into(out.flushed(), v);
      return put_members(out, v.get_object(), depth + 1);
  }
}

}  // namespace

void write_json(std::string& out, std::string_view s) {
  Sink sink(out);
  put_string(sink, s);
}

void write_json(std::string& out, bool b) {
  out += b ? "true" : "false";
}

void write_json(std::string& out, std::int64_t n) {
  char digits[24];
  out += digits_of(n, digits);
}

void write_json(std::string& out, double d) {
  const json::value v(d);
  serialize_into(out, v);
}

void write_json(std::string& out, const json::value& v) {
  Sink sink(out);
  put_value(sink, v, 0);
}

void write_json(std::string& out, const json::object& o) {
  Sink sink(out);
  put_members(sink, o, 1);
}

void write_json(std::string& out, std::nullptr_t) {
  out += "null";
}

void write_json_key(std::string& out, std::string_view key) {
  write_json(out, key);
  out += ':';
}

}  // namespace escouade::proto
