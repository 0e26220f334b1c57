// libFuzzer target for the codec, on the path a plugin's bytes take: LineFramer, Decoder, the
// params checks, encode. It traps when
// - the framer hands out a line that is empty, too long or holds a '\n';
// - the generated params check and valijson's disagree on whether a call's params are valid;
// - a valid message does not come back equal from encode then decode, or its line is not one
//   line ended by one '\n', or its params as write_json writes them are not the serializer's
//   bytes;
// - the error reply owed to an invalid entry cannot be encoded, or does not round-trip;
// - json_text (what escouade-host forwards without building it) takes a line the decoder
//   refuses as not JSON, refuses one Boost.JSON parses, misses an object's member, or gives a
//   member's value or an integer other than the decoder's.

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "protocol/decode.hpp"
#include "protocol/encode.hpp"
#include "protocol/framing.hpp"
#include "protocol/gen/methods.hpp"
#include "protocol/json_read.hpp"
#include "protocol/json_text.hpp"
#include "protocol/json_write.hpp"
#include "protocol/message.hpp"
#include "protocol/params_check.hpp"
#include "protocol/schema_validator.hpp"
#include "support/json_number_bound.hpp"

namespace {

namespace json = boost::json;
namespace proto = escouade::proto;

// Small, so that inputs of -max_len=4096 also reach the too-long path; the seeds' lines are
// shorter.
constexpr std::size_t kMaxLineBytes = 1024;

// Boost.JSON 1.81 parses decimal text into a double without correct rounding: the shortest
// text its serializer writes for a double may parse back a few units in the last place away
// (1.2345678901234567e-300 comes back as 1.2345678901234571e-300). Doubles this close count
// as equal; anything else that differs after a round trip is a finding.
constexpr std::uint64_t kMaxUlpDrift = 8;

// Parsed once: compiling the schema costs far more than one input.
const proto::SchemaValidator& schema_validator() {
  static const proto::SchemaValidator validator;
  return validator;
}

// valijson's Boost.JSON adapter reads string values through c_str(), so it sees "a\0b" as "a":
// a known difference with the generated check, which sees every byte. Keys are read whole by
// both, so a NUL in a key is not excused.
bool has_string_with_nul(const json::value& v) {
  return proto::any_scalar(v, [](const json::value& x) {
    return x.is_string() && x.get_string().find('\0') != json::string::npos;
  });
}

// Boost.JSON 1.81 writes an infinite double (which its parser makes of 1e400) as "Infinity",
// which is not JSON. The decoder refuses such lines, so no decoded message may hold one.
bool has_non_finite(const json::value& v) {
  return proto::any_scalar(
      v, [](const json::value& x) { return x.is_double() && !std::isfinite(x.get_double()); });
}

bool has_non_finite(const proto::Message& m) {
  return has_non_finite(m.id) || (m.params && has_non_finite(*m.params)) ||
         has_non_finite(m.result) || (m.error.data && has_non_finite(*m.error.data));
}

bool close_doubles(double a, double b) {
  if (a == b) return true;
  if (!std::isfinite(a) || !std::isfinite(b) || std::signbit(a) != std::signbit(b)) return false;
  std::uint64_t ia = 0;
  std::uint64_t ib = 0;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  return (ia > ib ? ia - ib : ib - ia) <= kMaxUlpDrift;
}

// Equality that lets doubles drift by kMaxUlpDrift; everything else must be equal.
bool same_json(const json::value& a, const json::value& b) {
  if (a.is_double() && b.is_double()) return close_doubles(a.get_double(), b.get_double());
  if (a.kind() != b.kind()) return a == b;
  if (const auto* x = a.if_array()) {
    const auto& y = b.get_array();
    if (x->size() != y.size()) return false;
    for (std::size_t i = 0; i < x->size(); ++i) {
      if (!same_json((*x)[i], y[i])) return false;
    }
    return true;
  }
  if (const auto* x = a.if_object()) {
    const auto& y = b.get_object();
    if (x->size() != y.size()) return false;
    for (const auto& m : *x) {
      const json::value* other = y.if_contains(m.key());
      if (!other || !same_json(m.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

bool same_optional_json(const std::optional<json::value>& a, const std::optional<json::value>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || same_json(*a, *b);
}

bool same_message(const proto::Message& a, const proto::Message& b) {
  if (a == b) return true;
  return a.kind == b.kind && a.method == b.method && same_json(a.id, b.id) &&
         same_optional_json(a.params, b.params) && same_json(a.result, b.result) &&
         a.error.code == b.error.code && a.error.message == b.error.message &&
         same_optional_json(a.error.data, b.error.data);
}

// valijson's Boost.JSON adapter counts only int64 and double values as numbers: an integer of
// 2^63 or more (Boost.JSON's uint64) is no number to it, while it is one to JSON Schema and to
// the generated check. A known difference of the reference, excused here.
bool has_big_unsigned(const json::value& v) {
  return proto::any_scalar(v, [](const json::value& x) { return x.is_uint64(); });
}

// The generated check and valijson must agree on whether a known method's params are valid.
void check_params_agree(const proto::Message& m) {
  const proto::MethodInfo* info = proto::find_method(m.method);
  if (!info) return;
  const json::value* params = m.params ? &*m.params : nullptr;
  if (params && (has_string_with_nul(*params) || has_big_unsigned(*params))) return;
  const auto generated = proto::check_params(*info, params);
  const auto reference = schema_validator().check_params(m.method, params);
  if (generated.has_value() != reference.has_value()) {
    std::fprintf(stderr, "params checks disagree on %s %s\n  generated: %s\n  valijson: %s\n",
                 m.method.c_str(), params ? json::serialize(*params).c_str() : "(none)",
                 generated ? "valid" : generated.error().message.c_str(),
                 reference ? "valid" : reference.error().message.c_str());
    __builtin_trap();
  }
}

// encode then decode gives the message back, on one line ended by one '\n'. Returns false
// when the message cannot be encoded.
bool round_trip(const proto::Message& m) {
  // The params as encode writes them are the bytes Boost.JSON's serializer gives.
  if (m.params) {
    std::string written;
    proto::write_json(written, *m.params);
    if (written != json::serialize(*m.params)) {
      std::fprintf(stderr, "write_json differs from the serializer: %s\n", written.c_str());
      __builtin_trap();
    }
  }
  const auto line = proto::encode(m);
  if (!line) return false;
  const std::string& text = *line;
  if (text.empty() || text.back() != '\n') __builtin_trap();
  if (text.find('\n') != text.size() - 1) __builtin_trap();
  if (has_non_finite(m)) __builtin_trap();

  proto::Decoder decoder;
  proto::Parsed again = decoder.decode(std::string_view(text).substr(0, text.size() - 1));
  if (again.batch || again.entries.size() != 1) __builtin_trap();
  const auto* back = std::get_if<proto::Message>(&again.entries.front());
  if (!back || !same_message(m, *back)) __builtin_trap();
  return true;
}

// The one-pass check against is_json_text (Boost.JSON's parser) and object_members: it never
// takes a line that parser refuses, finds the same members, and refuses an object that parser
// takes only when it holds a number it does not vouch for.
void check_one_pass(std::string_view line, bool checked) {
  std::array<proto::MemberText, kMaxLineBytes / 4> one, two;
  const auto got = proto::checked_object_members(line, proto::DecodeOptions{}.max_depth, one);
  if (!got) {
    if (checked && !escouade::testing::may_hold_a_number_past_1e300(line) &&
        proto::object_members(line, two)) {
      std::fprintf(stderr, "checked_object_members refuses an object Boost.JSON takes\n");
      __builtin_trap();
    }
    return;
  }
  if (!checked) {
    std::fprintf(stderr, "checked_object_members takes a line Boost.JSON refuses\n");
    __builtin_trap();
  }
  const auto want = proto::object_members(line, two);
  if (want != got) __builtin_trap();
  for (std::size_t i = 0; i < *got; ++i) {
    if (one[i].key != two[i].key || one[i].value != two[i].value) __builtin_trap();
  }
}

// json_text's view of the line against the decoder's and Boost.JSON's.
void check_text(std::string_view line, const proto::Parsed& parsed) {
  const auto* only = parsed.batch ? nullptr : std::get_if<proto::Invalid>(&parsed.entries.front());
  const bool not_json = only && only->code == -32700;
  const bool checked = proto::is_json_text(line, proto::DecodeOptions{}.max_depth);
  check_one_pass(line, checked);
  json::parse_options options;
  options.max_depth = proto::DecodeOptions{}.max_depth;
  if (checked && not_json) {
    std::fprintf(stderr, "is_json_text takes a line the decoder refuses: %s\n",
                 only->reason.c_str());
    __builtin_trap();
  }
  if (!checked) {
    // It may refuse what the decoder takes for one reason only: a number too large for a
    // double that a later member of the same name hides from the decoder's DOM. Such a line
    // goes the decoder's way. Anything else (grammar, depth, UTF-8) is the same parser's.
    json::error_code ec;
    json::parse(line, ec, {}, options);
    if (!not_json && ec) __builtin_trap();
    return;
  }
  const json::value whole = json::parse(line, {}, options);
  std::array<proto::MemberText, kMaxLineBytes / 4> found;  // more than a line can hold
  const auto n = proto::object_members(line, found);
  const json::object* object = whole.if_object();
  if (!object) {
    if (n) __builtin_trap();
    return;
  }
  if (!n || *n < object->size()) __builtin_trap();
  const std::span<const proto::MemberText> members(found.data(), *n);
  // Keys are compared as written: one written with an escape may be another's name to the
  // decoder ("r\u0065sult" is "result"), which is why the users of json_text leave such lines
  // to the decoder. Their members are not compared.
  if (proto::has_escaped_key(members)) return;
  for (const auto& m : members) {
    const auto value = proto::member(members, m.key);
    if (!value) continue;  // given twice
    const json::value* decoded = object->if_contains(m.key);
    if (!decoded || !same_json(json::parse(*value, {}, options), *decoded)) __builtin_trap();
    if (const auto i = proto::integer_text(*value);
        i && (!decoded->is_int64() || *i != decoded->get_int64())) {
      __builtin_trap();
    }
  }
}

void check_line(proto::Decoder& decoder, std::string_view line) {
  if (line.empty() || line.size() > kMaxLineBytes) __builtin_trap();
  if (line.find('\n') != std::string_view::npos) __builtin_trap();
  proto::Parsed parsed = decoder.decode(line);
  if (parsed.entries.empty()) __builtin_trap();
  check_text(line, parsed);
  for (const proto::Entry& entry : parsed.entries) {
    if (const auto* m = std::get_if<proto::Message>(&entry)) {
      if (m->is_call()) check_params_agree(*m);
      round_trip(*m);
    } else {
      const auto& invalid = std::get<proto::Invalid>(entry);
      // The reason is ASCII and the id came from valid UTF-8 JSON: the reply always encodes.
      if (invalid.answer_due && !round_trip(proto::error_reply(invalid))) __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  proto::LineFramer framer(kMaxLineBytes);
  proto::Decoder decoder;

  // Four reads cut where the first byte says: the second is 1 to 4 bytes long, so cuts fall
  // inside "\r\n", inside a UTF-8 character, between a line and the next.
  const unsigned first = size ? data[0] : 0u;
  const std::size_t a = first % (size + 1);
  const std::size_t b = std::min(size, a + 1 + (first >> 6));
  const std::size_t c = b + (size - b) * ((first >> 3) & 7u) / 8;
  const std::size_t cuts[] = {0, a, b, c, size};

  auto on_line = [&](std::string_view line) { check_line(decoder, line); };
  auto on_too_long = [](std::size_t limit) {
    if (limit != kMaxLineBytes) __builtin_trap();
  };
  for (std::size_t i = 0; i + 1 < std::size(cuts); ++i) {
    framer.feed(input.substr(cuts[i], cuts[i + 1] - cuts[i]), on_line, on_too_long);
    if (framer.pending_bytes() > kMaxLineBytes) __builtin_trap();
  }
  const std::string rest = framer.finish();
  if (!rest.empty()) check_line(decoder, rest);
  if (framer.pending_bytes() != 0 || framer.skipping()) __builtin_trap();
  return 0;
}
