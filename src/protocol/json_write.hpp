#pragma once

// Writing the generated protocol types as JSON text directly, without building a value first:
// the twin of json_read.hpp. The generated types each have `write_json(out, s)`, which appends
// the same bytes as json::serialize(json::value_from(s)): the same members in the same order,
// strings escaped as Boost.JSON's serializer escapes them, doubles formatted by it. What follows
// are the overloads for the members' own types, which the generated ones call; the one for a
// json::value writes it without the serializer too (but for its doubles), for a fifth fewer
// instructions (docs/codec.md).
//
// Made for the host's hot requests: a decision's params built as values and then serialised
// cost 10k instructions of the 25k the host spends on a decision of 5 before its lines leave
// (callgrind, bench_host decide 5; docs/PERFORMANCE.md). Like the serializer, they check
// nothing: text that is not valid UTF-8 is written as it is, and the line that carries it is
// refused where every line is (protocol/encode.cpp).

#include <boost/json/fwd.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace escouade::proto {

// A JSON string: `s` between quotes, escaped.
void write_json(std::string& out, std::string_view s);
// A literal is not a value of the protocol's types: refused rather than taken as a bool.
void write_json(std::string& out, const char* s) = delete;
void write_json(std::string& out, bool b);
void write_json(std::string& out, std::int64_t n);
void write_json(std::string& out, double d);
void write_json(std::string& out, const boost::json::value& v);
void write_json(std::string& out, const boost::json::object& o);
void write_json(std::string& out, std::nullptr_t);
// `"key":`, the key escaped.
void write_json_key(std::string& out, std::string_view key);

// Templates in an order that lets each hold the ones before it (a map of scalars).
// An optional value: null when it holds none (a result that may be null: secrets/get's).
template <class T>
void write_json(std::string& out, const std::optional<T>& v) {
  if (v) {
    write_json(out, *v);
  } else {
    out += "null";
  }
}

template <class... Ts>
void write_json(std::string& out, const std::variant<Ts...>& v) {
  std::visit([&](const auto& alternative) { write_json(out, alternative); }, v);
}

template <class T>
void write_json(std::string& out, const std::map<std::string, T>& members) {
  char separator = '{';
  for (const auto& [key, value] : members) {
    out += separator;
    separator = ',';
    write_json_key(out, key);
    write_json(out, value);
  }
  if (separator == '{') out += '{';
  out += '}';
}

template <class T>
void write_json(std::string& out, const std::vector<T>& items) {
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    write_json(out, items[i]);
  }
  out += ']';
}

}  // namespace escouade::proto
