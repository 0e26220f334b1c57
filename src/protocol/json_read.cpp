#include "protocol/json_read.hpp"

#include <stdexcept>

#include "protocol/message.hpp"

namespace escouade::proto {

namespace json = boost::json;

bool ReadContext::fail(std::string what) {
  failed_ = true;
  what_ = std::move(what);
  reversed_path_.clear();
  return false;
}

bool ReadContext::wrong_type(std::string_view expected, const json::value& got) {
  std::string what = "expected ";
  what += expected;
  what += ", got ";
  what += json_kind_name(got);
  return fail(std::move(what));
}

bool ReadContext::not_one_of(std::string_view got, std::string_view allowed) {
  std::string what = "\"";
  // Quote at most 64 bytes of what came: the message goes to a journal.
  what += got.substr(0, 64);
  if (got.size() > 64) what += "...";
  what += "\" is not one of ";
  what += allowed;
  return fail(std::move(what));
}

bool ReadContext::missing(std::string_view field) {
  fail("required field is missing");
  reversed_path_.emplace_back(field);
  return false;
}

bool ReadContext::in_field(std::string_view field) {
  reversed_path_.emplace_back(field);
  return false;
}

bool ReadContext::in_index(std::size_t index) {
  // Appended piece by piece: GCC 12 at -O3 warns falsely (-Wrestrict) on "[" + s + "]".
  std::string& part = reversed_path_.emplace_back(1, '[');
  part.append(std::to_string(index));
  part.push_back(']');
  return false;
}

std::string ReadContext::path(std::string_view root) const {
  std::string out(root);
  for (auto it = reversed_path_.rbegin(); it != reversed_path_.rend(); ++it) {
    if (!it->empty() && it->front() != '[' && !out.empty()) out += '.';
    out += *it;
  }
  return out;
}

std::string ReadContext::message(std::string_view root) const {
  return path(root) + ": " + what_;
}

std::string_view json_kind_name(const json::value& v) noexcept {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
      return "an integer";
    case json::kind::double_:
      return "a number";
    case json::kind::string:
      return "a string";
    case json::kind::array:
      return "an array";
    case json::kind::object:
      return "an object";
  }
  return "a value";
}

bool read_value(const json::value& v, std::string& out, ReadContext& ctx) {
  const auto* s = v.if_string();
  if (!s) return ctx.wrong_type("a string", v);
  out.assign(s->data(), s->size());
  return true;
}

// "integer" is what Boost.JSON parses as int64: a number without fraction or exponent that
// fits in 64 signed bits. 1.0 is a number, not an integer, as valijson also judges it.
bool read_value(const json::value& v, std::int64_t& out, ReadContext& ctx) {
  if (v.is_uint64()) return ctx.fail("expected an integer of at most 9223372036854775807");
  if (!v.is_int64()) return ctx.wrong_type("an integer", v);
  out = v.get_int64();
  return true;
}

bool read_value(const json::value& v, double& out, ReadContext& ctx) {
  if (!v.is_number()) return ctx.wrong_type("a number", v);
  out = v.to_number<double>();
  return true;
}

bool read_value(const json::value& v, bool& out, ReadContext& ctx) {
  if (!v.is_bool()) return ctx.wrong_type("a boolean", v);
  out = v.get_bool();
  return true;
}

bool read_value(const json::value& v, std::nullptr_t& out, ReadContext& ctx) {
  if (!v.is_null()) return ctx.wrong_type("null", v);
  out = nullptr;
  return true;
}

bool read_value(const json::value& v, json::value& out, ReadContext& ctx) {
  if (ctx.takes_values()) {
    // The caller owns `v` (not const: a message being served) and gives it up.
    adopt(out, std::move(const_cast<json::value&>(v)));
    return true;
  }
  // Copied into the memory `v` lives in (a decoded line's arena: no allocation of the heap per
  // key and string, none to free), then taken over by `out` as it is.
  adopt(out, json::value(v, v.storage()));
  return true;
}

bool read_value(const json::value& v, json::object& out, ReadContext& ctx) {
  const auto* o = v.if_object();
  if (!o) return ctx.wrong_type("an object", v);
  out = *o;
  return true;
}

bool read_value(const json::value& v, Scalar& out, ReadContext& ctx) {
  switch (v.kind()) {
    case json::kind::string:
      out = std::string(v.get_string());
      return true;
    case json::kind::int64:
      out = v.get_int64();
      return true;
    case json::kind::uint64:
    case json::kind::double_:
      out = v.to_number<double>();
      return true;
    case json::kind::bool_:
      out = v.get_bool();
      return true;
    default:
      return ctx.wrong_type("a string, a number or a boolean", v);
  }
}

void throw_read_error(const ReadContext& ctx) {
  throw std::invalid_argument(ctx.message("value"));
}

}  // namespace escouade::proto
