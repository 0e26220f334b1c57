#include "protocol/json_write.hpp"

#include <boost/json/serializer.hpp>
#include <boost/json/value.hpp>
#include <charconv>

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

// Whether the serializer would write a byte of `s` otherwise than as it is: a quote, a
// backslash or a control character (it leaves DEL and bytes past ASCII alone).
bool needs_escape(std::string_view s) noexcept {
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == '"' || b == '\\') return true;
  }
  return false;
}

}  // namespace

void write_json(std::string& out, std::string_view s) {
  if (!needs_escape(s)) {
    out += '"';
    out += s;
    out += '"';
    return;
  }
  json::serializer& sr = serializer();
  sr.reset(json::string_view(s.data(), s.size()));
  drain_into(sr, out);
}

void write_json(std::string& out, bool b) {
  out += b ? "true" : "false";
}

void write_json(std::string& out, std::int64_t n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, end);
}

void write_json(std::string& out, double d) {
  const json::value v(d);
  serialize_into(out, v);
}

void write_json(std::string& out, const json::value& v) {
  serialize_into(out, v);
}

void write_json(std::string& out, const json::object& o) {
  serialize_into(out, o);
}

void write_json(std::string& out, std::nullptr_t) {
  out += "null";
}

void write_json_key(std::string& out, std::string_view key) {
  write_json(out, key);
  out += ':';
}

}  // namespace escouade::proto
