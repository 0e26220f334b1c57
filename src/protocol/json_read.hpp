#pragma once

// Reading JSON values into the generated protocol types: exact about required members and
// types, tolerant of members it does not know, and never throwing. A failure leaves a
// ReadContext that names the field (params.request.kind) and what was wrong with it.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace escouade::proto {

// Where a read failed and why. Cheap while nothing fails: the path is built only on the way
// back up from a failure.
class ReadContext {
 public:
  // Records a failure at the current value; returns false so callers can `return ctx.fail(..)`.
  bool fail(std::string what);
  bool wrong_type(std::string_view expected, const boost::json::value& got);
  bool not_one_of(std::string_view got, std::string_view allowed);
  bool missing(std::string_view field);
  // Called on the way back from a failed member or element: prefixes its name to the path.
  bool in_field(std::string_view field);
  bool in_index(std::size_t index);

  // The value being read is the reader's to take (a decoded message being served, read once):
  // its free-form members (json::value fields, such as host/call's params) are moved into the
  // result instead of copied. Never for a value anything reads again.
  void take_values() noexcept { takes_values_ = true; }
  bool takes_values() const noexcept { return takes_values_; }

  bool failed() const noexcept { return failed_; }
  // "request.kind: expected a string, got a number", the path under `root` ("params").
  std::string message(std::string_view root = "params") const;
  std::string path(std::string_view root = "params") const;
  const std::string& what() const noexcept { return what_; }

 private:
  bool failed_ = false;
  bool takes_values_ = false;
  std::string what_;
  std::vector<std::string> reversed_path_;
};

// How a value's JSON kind is named in messages: "a string", "an integer", "null"...
std::string_view json_kind_name(const boost::json::value& v) noexcept;

// A string, a number or a boolean: a setting's value.
using Scalar = std::variant<std::string, std::int64_t, double, bool>;

bool read_value(const boost::json::value& v, std::string& out, ReadContext& ctx);
bool read_value(const boost::json::value& v, std::int64_t& out, ReadContext& ctx);
bool read_value(const boost::json::value& v, double& out, ReadContext& ctx);
bool read_value(const boost::json::value& v, bool& out, ReadContext& ctx);
bool read_value(const boost::json::value& v, std::nullptr_t& out, ReadContext& ctx);
bool read_value(const boost::json::value& v, boost::json::object& out, ReadContext& ctx);
bool read_value(const boost::json::value& v, Scalar& out, ReadContext& ctx);

// Any JSON value, as it came (a plugin's params or result passed on by the host).
bool read_value(const boost::json::value& v, boost::json::value& out, ReadContext& ctx);

// A string, or another value of another JSON kind (an object): "a project or its id".
template <class T>
bool read_value(const boost::json::value& v, std::variant<std::string, T>& out, ReadContext& ctx) {
  if (v.is_string()) {
    out.template emplace<std::string>(v.get_string());
    return true;
  }
  return read_value(v, out.template emplace<T>(), ctx);
}

// For a method whose params or result may be null: null is std::nullopt.
template <class T>
bool read_value(const boost::json::value& v, std::optional<T>& out, ReadContext& ctx) {
  if (v.is_null()) {
    out.reset();
    return true;
  }
  return read_value(v, out.emplace(), ctx);
}

template <class T>
bool read_value(const boost::json::value& v, std::vector<T>& out, ReadContext& ctx) {
  const auto* a = v.if_array();
  if (!a) return ctx.wrong_type("an array", v);
  out.clear();
  out.reserve(a->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    if (!read_value((*a)[i], out.emplace_back(), ctx)) return ctx.in_index(i);
  }
  return true;
}

template <class T>
bool read_value(const boost::json::value& v, std::map<std::string, T>& out, ReadContext& ctx) {
  const auto* o = v.if_object();
  if (!o) return ctx.wrong_type("an object", v);
  out.clear();
  for (const auto& m : *o) {
    if (!read_value(m.value(), out[std::string(m.key())], ctx)) return ctx.in_field(m.key());
  }
  return true;
}

// Whether `pred` holds for any scalar (string, number, boolean, null) inside `v`, at any depth.
template <class Pred>
bool any_scalar(const boost::json::value& v, Pred&& pred) {
  if (const auto* a = v.if_array()) {
    for (const auto& x : *a) {
      if (any_scalar(x, pred)) return true;
    }
    return false;
  }
  if (const auto* o = v.if_object()) {
    for (const auto& m : *o) {
      if (any_scalar(m.value(), pred)) return true;
    }
    return false;
  }
  return pred(v);
}

// Throws std::invalid_argument with ctx.message("value"): for boost::json::value_to users.
[[noreturn]] void throw_read_error(const ReadContext& ctx);

}  // namespace escouade::proto
