// escouade-codegen: reads schema/plugin-protocol-1.json and writes the C++ the protocol layer is
// built on: the error codes, the method table, one struct or enum per definition with its JSON
// conversions, and the schema's text. Run by the build; see docs/codegen.md. With --sdk it
// writes instead the C++ SDK's one self-contained header (sdk_header.hpp); with --ts the
// TypeScript SDK's protocol.ts (ts_types.hpp).
//
// It understands the subset of JSON Schema the protocol uses and refuses anything else with the
// JSON path of the construct, so a schema change it cannot express breaks the build loudly.

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "schema_model.hpp"
#include "sdk_header.hpp"
#include "ts_types.hpp"

namespace json = boost::json;

namespace escouade::codegen {

namespace {

// The generated test of whether the key `k` is one the schema gives `s` a member for: what
// read_value does not keep among the unknown members, and write_json does not write from them.
std::string names_a_member(const Struct& s) {
  if (s.fields.empty()) return "false";
  std::string test;
  for (const auto& f : s.fields)
    test += (test.empty() ? "" : " || ") + std::string("k == ") + quote(f.json_name);
  return test;
}

}  // namespace

std::string Generator::errors_hpp() const {
  std::ostringstream o;
  o << kBanner << R"(#pragma once

#include <boost/system/error_code.hpp>
#include <optional>
#include <string_view>
#include <type_traits>

namespace escouade::proto {

// The protocol's error codes (x-errors).
enum class ErrorCode : int {
)";
  for (const auto& [name, e] : root_.at("x-errors").as_object()) {
    o << "  " << snake_case(name) << " = " << e.at("code").as_int64() << ",\n";
  }
  o << R"(};

// The schema's name of a code ("invalidParams"), or "" for a code the protocol does not name.
std::string_view error_name(ErrorCode code) noexcept;
std::optional<ErrorCode> error_code_from_name(std::string_view name) noexcept;
std::optional<ErrorCode> error_code_from_int(int code) noexcept;

const boost::system::error_category& protocol_category() noexcept;
inline boost::system::error_code make_error_code(ErrorCode e) noexcept {
  return {static_cast<int>(e), protocol_category()};
}

}  // namespace escouade::proto

template <>
struct boost::system::is_error_code_enum<escouade::proto::ErrorCode> : std::true_type {};
)";
  return o.str();
}

std::string Generator::errors_cpp() const {
  std::ostringstream o;
  o << kBanner << "#include \"protocol/gen/errors.hpp\"\n\n#include <string>\n\n"
    << "namespace escouade::proto {\n\nstd::string_view error_name(ErrorCode code) noexcept {\n"
    << "  switch (code) {\n";
  const auto& errs = root_.at("x-errors").as_object();
  for (const auto& [name, e] : errs) {
    o << "    case ErrorCode::" << snake_case(name) << ": return " << quote(name) << ";\n";
  }
  o << "  }\n  return \"\";\n}\n\n"
    << "std::optional<ErrorCode> error_code_from_name(std::string_view name) noexcept {\n";
  for (const auto& [name, e] : errs) {
    o << "  if (name == " << quote(name) << ") return ErrorCode::" << snake_case(name) << ";\n";
  }
  o << "  return std::nullopt;\n}\n\n"
    << "std::optional<ErrorCode> error_code_from_int(int code) noexcept {\n  switch (code) {\n";
  for (const auto& [name, e] : errs) {
    o << "    case " << e.at("code").as_int64() << ": return ErrorCode::" << snake_case(name)
      << ";\n";
  }
  o << R"(  }
  return std::nullopt;
}

namespace {
class Category final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "escouade.protocol"; }
  std::string message(int ev) const override {
    if (auto c = error_code_from_int(ev)) {
      switch (*c) {
)";
  for (const auto& [name, e] : errs) {
    // The error's own description in the schema is its message.
    o << "        case ErrorCode::" << snake_case(name) << ": return "
      << json::serialize(e.at("description")) << ";\n";
  }
  o << R"(      }
    }
    return "error " + std::to_string(ev);
  }
};
}  // namespace

const boost::system::error_category& protocol_category() noexcept {
  static const Category category;
  return category;
}

}  // namespace escouade::proto
)";
  return o.str();
}

std::string Generator::types_hpp() const {
  std::ostringstream o;
  o << kBanner << R"(#pragma once

#include <boost/json/fwd.hpp>
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

#include "protocol/json_read.hpp"
#include "protocol/json_write.hpp"
)";
  if (options_.other) o << "#include \"protocol/gen/types.hpp\"\n";
  o << "\nnamespace " << options_.ns << " {\n\n";
  for (const auto& e : enums_) {
    o << "enum class " << e.name << " {\n";
    for (const auto& v : e.values)
      o << "  " << snake_case(v) << ",\n";
    o << "};\nstd::string_view to_string(" << e.name << " v) noexcept;\n"
      << "std::optional<" << e.name << "> " << snake_case(e.name)
      << "_from_string(std::string_view s) noexcept;\n"
      << "bool read_value(const boost::json::value& v, " << e.name << "& out, ReadContext& ctx);\n"
      << "void tag_invoke(boost::json::value_from_tag, boost::json::value& v, " << e.name
      << " e);\n"
      << "void write_json(std::string& out, " << e.name << " e);\n\n";
  }
  // Declare every struct first: definitions may refer to each other in any order.
  for (const auto& s : structs_)
    o << "struct " << s.name << ";\n";
  o << "\n";
  // Emit structs after the definitions they hold by value.
  std::set<std::string> done;
  std::vector<const Struct*> order;
  std::function<void(const Struct&)> visit = [&](const Struct& s) {
    if (done.count(s.name)) return;
    done.insert(s.name);
    for (const auto& f : s.fields) {
      for (const auto& t : structs_) {
        if (f.type.name.find(t.name) != std::string::npos && t.name != s.name) visit(t);
      }
    }
    order.push_back(&s);
  };
  for (const auto& s : structs_)
    visit(s);
  for (const Struct* s : order) {
    o << "struct " << s->name << " {\n";
    for (const auto& f : s->fields)
      o << "  " << member_type(f) << " " << f.member << "{};\n";
    if (s->keep_unknown)
      o << "  // Members the schema does not name, kept as they came.\n"
        << "  boost::json::object unknown;\n";
    o << "\n  friend bool operator==(const " << s->name << "&, const " << s->name
      << "&) = default;\n};\n"
      << "bool read_value(const boost::json::value& v, " << s->name << "& out, ReadContext& ctx);\n"
      << "void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const " << s->name
      << "& s);\n"
      << "// The bytes of json::serialize(json::value_from(s)), without making the value.\n"
      << "void write_json(std::string& out, const " << s->name << "& s);\n"
      << s->name << " tag_invoke(boost::json::value_to_tag<" << s->name
      << ">, const boost::json::value& v);\n\n";
  }
  o << "}  // namespace " << options_.ns << "\n";
  return o.str();
}

// A struct written as text member by member, in the order and with the bytes its value_from
// and json::serialize give: absent optional members left out, a null where a nullable one is
// required, unknown members last, and none of them under a name the schema gives a member (an
// object keeps the first of two members of one name, which value_from emplaces first).
//
// What comes before a member's value (`{` or `,`, then its key) is appended as one literal of
// known size wherever it is known here: once a member that is always written went before, it is
// a comma; before the first member, a brace. A separator held in a variable is used only while
// every member before may have been absent (callgrind, bench_host facts: a separator and a key
// appended apart, the key's length counted: a fact's writing 2,345 -> 2,014 instructions).
void Generator::write_json_of(std::ostream& o, const Struct& s) {
  o << "void write_json(std::string& out, const " << s.name << "& s) {\n";
  if (s.fields.empty() && !s.keep_unknown) {
    o << "  (void)s;\n  out += \"{}\";\n}\n\n";
    return;
  }
  // The overloads for strings, numbers and values, which a namespace of generated types of its
  // own would hide.
  o << "  using ::escouade::proto::write_json;\n";
  // What precedes the next member, when it is known here: '{' while nothing was written, ','
  // once something was; 0 while that depends on members that may be absent (then `separator`
  // holds it).
  char known = '{';
  auto literal = [](const std::string& text) {
    return "out.append(" + quote(text) + ", " + std::to_string(text.size()) + ");";
  };
  // The statements that put what precedes a member whose key, with its colon, is `key`.
  auto before = [&](const std::string& key) -> std::string {
    if (known != 0) return literal(std::string(1, known) + key);
    return "out += separator;\n    separator = ',';\n    " + literal(key);
  };
  // Before a member that may be absent: from here, whether anything was written is known at
  // run time only, unless something surely was.
  auto may_be_absent = [&] {
    if (known != '{') return;
    o << "  char separator = '{';\n";
    known = 0;
  };
  for (const auto& f : s.fields) {
    const std::string key = json::serialize(json::string(f.json_name)) + ":";
    const std::string member = "s." + f.member;
    if (f.type.nullable && f.required) {
      o << "  {\n    " << before(key) << "\n    if (" << member << ") write_json(out, *" << member
        << ");\n    else out += \"null\";\n  }\n";
      known = ',';
    } else if (f.type.nullable || !f.required) {
      may_be_absent();
      o << "  if (" << member << ") {\n    " << before(key) << "\n    write_json(out, *" << member
        << ");\n  }\n";
    } else {
      o << "  {\n    " << before(key) << "\n    write_json(out, " << member << ");\n  }\n";
      known = ',';
    }
  }
  if (s.keep_unknown) {
    may_be_absent();
    o << "  for (const auto& m : s.unknown) {\n    const auto k = m.key();\n"
      << "    if (" << names_a_member(s) << ") continue;\n"
      << (known == ',' ? "    out += ',';\n" : "    out += separator;\n    separator = ',';\n")
      << "    write_json_key(out, std::string_view(k.data(), k.size()));\n"
      << "    write_json(out, m.value());\n  }\n";
  }
  if (known == '{') {
    o << "  out += \"{}\";\n}\n\n";
  } else if (known == ',') {
    o << "  out += '}';\n}\n\n";
  } else {
    o << "  if (separator == '{') out += '{';\n  out += '}';\n}\n\n";
  }
}

std::string Generator::types_cpp() const {
  std::ostringstream o;
  o << kBanner << "#include \"protocol/gen/" << options_.file_prefix << R"(types.hpp"

#include <boost/json/value_from.hpp>

)"
    << "namespace " << options_.ns << R"( {

namespace json = boost::json;

)";
  for (const auto& e : enums_) {
    o << "std::string_view to_string(" << e.name << " v) noexcept {\n  switch (v) {\n";
    for (const auto& v : e.values) {
      o << "    case " << e.name << "::" << snake_case(v) << ": return " << quote(v) << ";\n";
    }
    o << "  }\n  return {};\n}\n\n"
      << "std::optional<" << e.name << "> " << snake_case(e.name)
      << "_from_string(std::string_view s) noexcept {\n";
    for (const auto& v : e.values) {
      o << "  if (s == " << quote(v) << ") return " << e.name << "::" << snake_case(v) << ";\n";
    }
    o << "  return std::nullopt;\n}\n\n"
      << "bool read_value(const json::value& v, " << e.name << "& out, ReadContext& ctx) {\n"
      << "  static constexpr std::string_view kAllowed = \"";
    for (std::size_t i = 0; i < e.values.size(); ++i) {
      o << (i ? ", " : "") << e.values[i];
    }
    o << "\";\n  if (!v.is_string()) return ctx.wrong_type(\"a string\", v);\n"
      << "  auto parsed = " << snake_case(e.name) << "_from_string(v.get_string());\n"
      << "  if (!parsed) return ctx.not_one_of(v.get_string(), kAllowed);\n"
      << "  out = *parsed;\n  return true;\n}\n\n"
      << "void tag_invoke(json::value_from_tag, json::value& v, " << e.name
      << " e) { v = to_string(e); }\n\n"
      << "void write_json(std::string& out, " << e.name << " e) {\n"
      << "  ::escouade::proto::write_json(out, to_string(e));\n}\n\n";
  }
  for (const auto& s : structs_) {
    o << "bool read_value(const json::value& v, " << s.name << "& out, ReadContext& ctx) {\n"
      << "  const json::object* o = v.if_object();\n"
      << "  if (!o) return ctx.wrong_type(\"an object\", v);\n";
    if (s.fields.empty() && !s.keep_unknown) o << "  (void)out;\n";
    if (s.keep_unknown) o << "  out.unknown.clear();\n";
    if (s.keep_unknown) {
      o << "  for (const auto& m : *o) {\n    const auto k = m.key();\n"
        << "    if (" << names_a_member(s) << ") continue;\n"
        << "    out.unknown.emplace(k, m.value());\n  }\n";
    }
    for (const auto& f : s.fields) {
      const std::string key = quote(f.json_name);
      o << "  if (const json::value* m = o->if_contains(" << key << ")) {\n";
      if (f.type.nullable || !f.required) {
        if (f.type.nullable) {
          o << "    if (m->is_null()) {\n      out." << f.member << ".reset();\n    } else {\n";
        } else {
          o << "    {\n";
        }
        o << "      if (!read_value(*m, out." << f.member
          << ".emplace(), ctx)) return ctx.in_field(" << key << ");\n    }\n";
      } else {
        o << "    if (!read_value(*m, out." << f.member << ", ctx)) return ctx.in_field(" << key
          << ");\n";
      }
      o << "  }";
      if (f.required) {
        o << " else {\n    return ctx.missing(" << key << ");\n  }\n";
      } else {
        o << " else {\n    out." << f.member << ".reset();\n  }\n";
      }
    }
    o << "  return true;\n}\n\n";

    o << "void tag_invoke(json::value_from_tag, json::value& v, const " << s.name << "& s) {\n"
      << "  json::object& o = v.emplace_object();\n";
    if (s.fields.empty() && !s.keep_unknown) o << "  (void)o;\n  (void)s;\n";
    // Room for every member at once: grown one emplace at a time, an object of 4 members was
    // allocated 3 times (callgrind, bench_host decide: 7.4k instructions a decision's params).
    if (s.keep_unknown) {
      o << "  o.reserve(" << s.fields.size() << " + s.unknown.size());\n";
    } else if (s.fields.size() > 1) {
      o << "  o.reserve(" << s.fields.size() << ");\n";
    }
    for (const auto& f : s.fields) {
      const std::string key = quote(f.json_name);
      if (f.type.nullable && f.required) {
        o << "  if (s." << f.member << ") o.emplace(" << key << ", json::value_from(*s." << f.member
          << ", o.storage()));\n  else o.emplace(" << key << ", nullptr);\n";
      } else if (f.type.nullable || !f.required) {
        o << "  if (s." << f.member << ") o.emplace(" << key << ", json::value_from(*s." << f.member
          << ", o.storage()));\n";
      } else {
        o << "  o.emplace(" << key << ", json::value_from(s." << f.member << ", o.storage()));\n";
      }
    }
    if (s.keep_unknown) {
      o << "  for (const auto& m : s.unknown) o.emplace(m.key(), m.value());\n";
    }
    o << "}\n\n";
    write_json_of(o, s);
    o << s.name << " tag_invoke(json::value_to_tag<" << s.name << ">, const json::value& v) {\n"
      << "  " << s.name << " out;\n  ReadContext ctx;\n"
      << "  if (!read_value(v, out, ctx)) throw_read_error(ctx);\n  return out;\n}\n\n";
  }
  o << "}  // namespace " << options_.ns << "\n";
  return o.str();
}

std::string Generator::methods_hpp() const {
  std::ostringstream o;
  o << kBanner << R"(#pragma once

#include <boost/json/fwd.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/result.hpp"
#include "protocol/delivery.hpp"
#include "protocol/gen/errors.hpp"
)"
    << "#include \"protocol/gen/" << options_.file_prefix << "types.hpp\"\n\n"
    << "namespace " << options_.ns << " {\n\n"
    << "enum class Direction : std::uint8_t { " << snake_case(options_.to_peer) << ", "
    << snake_case(options_.from_peer) << R"( };

inline constexpr int kProtocolVersion = )"
    << root_.at("x-protocolVersion").as_int64() << R"(;
inline constexpr std::uint32_t kDefaultTimeoutMs = )"
    << root_.at("x-defaultTimeoutMs").as_int64() << R"(;

// One method of the protocol as the schema states it.
struct MethodInfo {
  std::string_view name;
  Direction direction;
  bool notification;
  // Whether the host may drop it, sent, when the peer does not read (protocol/delivery.hpp).
  ::escouade::proto::Delivery delivery;
  // The method's timeoutMs, or x-defaultTimeoutMs when it states none (timeout_explicit false).
  std::uint32_t timeout_ms;
  bool timeout_explicit;
  // The errors the schema lists for it; empty when it lists none.
  std::span<const ::escouade::proto::ErrorCode> errors;
  // Checks params (nullptr: the message had none) against the method's params schema by
  // reading them into the generated type; the error names the field and what was wrong.
  bool (*check_params)(const boost::json::value* params, ::escouade::proto::ReadContext& ctx);
  // Checks a result the same way; nullptr for a notification, which has none.
  bool (*check_result)(const boost::json::value& result, ::escouade::proto::ReadContext& ctx);
};

// Every method, in the schema's order.
std::span<const MethodInfo> methods() noexcept;
// The method named `name`, or nullptr when the protocol has none by that name.
const MethodInfo* find_method(std::string_view name) noexcept;
// How a message of the method named `name` goes: kept for a name the protocol does not have.
::escouade::proto::Delivery delivery_of(std::string_view name) noexcept;

// One type per method: its name, direction, delay, and its params and result types.
namespace method {
)";
  for (const auto& m : methods_) {
    o << "struct " << m.type_name << " {\n"
      << "  static constexpr std::string_view kName = " << quote(m.name) << ";\n"
      << "  static constexpr Direction kDirection = Direction::"
      << snake_case(m.to_peer ? options_.to_peer : options_.from_peer) << ";\n"
      << "  static constexpr bool kNotification = " << (m.notification ? "true" : "false")
      << ";\n  static constexpr ::escouade::proto::Delivery kDelivery = "
      << "::escouade::proto::Delivery::" << (m.droppable ? "droppable" : "kept")
      << ";\n  static constexpr std::uint32_t kTimeoutMs = " << m.timeout_ms << ";\n"
      << "  using Params = " << value_type(m.params) << ";\n"
      << "  using Result = " << value_type(m.result) << ";\n};\n";
  }
  o << "}  // namespace method\n\n}  // namespace " << options_.ns << "\n";
  return o.str();
}

std::string Generator::methods_cpp() const {
  std::ostringstream o;
  o << kBanner << "#include \"protocol/gen/" << options_.file_prefix << R"(methods.hpp"

#include <algorithm>
#include <array>
#include <boost/json/value.hpp>
#include <cstdint>

)"
    << "namespace " << options_.ns << R"( {

namespace {

using ::escouade::proto::ErrorCode;
using ::escouade::proto::ReadContext;

template <class Params>
bool check(const boost::json::value* params, ReadContext& ctx) {
  static const boost::json::value kNull;
  Params p{};
  return read_value(params ? *params : kNull, p, ctx);
}

template <class Result>
bool check_result(const boost::json::value& result, ReadContext& ctx) {
  Result r{};
  return read_value(result, r, ctx);
}

)";
  for (const auto& m : methods_) {
    o << "constexpr std::array<ErrorCode, " << m.errors.size() << "> k" << m.type_name << "Errors{";
    for (std::size_t i = 0; i < m.errors.size(); ++i) {
      o << (i ? ", " : "") << "ErrorCode::" << snake_case(m.errors[i]);
    }
    o << "};\n";
  }
  o << "\nconstexpr std::array<MethodInfo, " << methods_.size() << "> kMethods{{\n";
  for (const auto& m : methods_) {
    o << "    {" << quote(m.name)
      << ", Direction::" << snake_case(m.to_peer ? options_.to_peer : options_.from_peer) << ", "
      << (m.notification ? "true" : "false")
      << ", ::escouade::proto::Delivery::" << (m.droppable ? "droppable" : "kept") << ", "
      << m.timeout_ms << ", " << (m.timeout_explicit ? "true" : "false") << ", k" << m.type_name
      << "Errors, &check<" << value_type(m.params) << ">, ";
    if (m.notification) {
      o << "nullptr},\n";
    } else {
      o << "&check_result<" << value_type(m.result) << ">},\n";
    }
  }
  // find_method looks a name up in this index of kMethods, in the order of their names: every
  // call the host makes and every request it reads asks it (a scan compared every name for a
  // method of none: 416 instructions under callgrind for 32 methods).
  std::vector<std::size_t> by_name(methods_.size());
  for (std::size_t i = 0; i < by_name.size(); ++i)
    by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(),
            [&](std::size_t a, std::size_t b) { return methods_[a].name < methods_[b].name; });
  o << "}};\n\nconstexpr std::array<std::uint8_t, " << by_name.size() << "> kByName{";
  for (std::size_t i = 0; i < by_name.size(); ++i)
    o << (i ? ", " : "") << by_name[i];
  o << R"(};
static_assert(kMethods.size() <= 256);

}  // namespace

std::span<const MethodInfo> methods() noexcept { return kMethods; }

const MethodInfo* find_method(std::string_view name) noexcept {
  const auto* it = std::lower_bound(kByName.begin(), kByName.end(), name,
                                    [](std::uint8_t i, std::string_view n) { return kMethods[i].name < n; });
  if (it == kByName.end() || kMethods[*it].name != name) return nullptr;
  return &kMethods[*it];
}

::escouade::proto::Delivery delivery_of(std::string_view name) noexcept {
  const MethodInfo* m = find_method(name);
  return m ? m->delivery : ::escouade::proto::Delivery::kept;
}

)"
    << "}  // namespace " << options_.ns << "\n";
  return o.str();
}

}  // namespace escouade::codegen

namespace {

using escouade::codegen::as_object;
using escouade::codegen::fail;
using escouade::codegen::Generator;
using escouade::codegen::kBanner;

std::string schema_cpp(const std::string& text) {
  std::ostringstream o;
  o << kBanner << "#include <string_view>\n\nnamespace escouade::proto {\n\n"
    << "// The schema's text, for the checks that interpret it (valijson).\n"
    << "std::string_view schema_text() noexcept {\n  static constexpr char kText[] = {";
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i % 24 == 0) o << "\n      ";
    o << static_cast<int>(static_cast<signed char>(text[i])) << ",";
  }
  o << "0};\n  return {kText, sizeof(kText) - 1};\n}\n\n}  // namespace escouade::proto\n";
  return o.str();
}

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot read");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Writes only when the content changed, so an unchanged schema triggers no rebuild.
void write_if_changed(const std::string& path, const std::string& content) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::stringstream old;
    old << in.rdbuf();
    if (old.str() == content) return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) fail(path, "cannot write");
}

}  // namespace

// The host protocol's files: host_types and host_methods, in escouade::proto::host, from
// schema/host-protocol-1.json, which refers to the plugin protocol's definitions and codes.
int host_files(const char* host_path, const char* plugin_path, const std::string& dir) {
  try {
    const json::value plugin = json::parse(read_file(plugin_path));
    const json::value host = json::parse(read_file(host_path));
    escouade::codegen::GeneratorOptions options;
    options.ns = "escouade::proto::host";
    options.file_prefix = "host_";
    options.to_peer = "toApp";
    options.from_peer = "toHost";
    options.other = &as_object(plugin, "the plugin schema");
    options.other_file = "plugin-protocol-1.json";
    options.other_ns = "escouade::proto";
    // A status change is news a later one makes old (protocol/delivery.hpp).
    options.droppable = {"host/statusChanged"};
    Generator g(as_object(host, "schema"), options);
    g.run();
    const auto banner = [](std::string text) {
      const std::string from = "schema/plugin-protocol-1.json";
      text.replace(text.find(from), from.size(), "schema/host-protocol-1.json");
      return text;
    };
    write_if_changed(dir + "/host_types.hpp", banner(g.types_hpp()));
    write_if_changed(dir + "/host_types.cpp", banner(g.types_cpp()));
    write_if_changed(dir + "/host_methods.hpp", banner(g.methods_hpp()));
    write_if_changed(dir + "/host_methods.cpp", banner(g.methods_cpp()));
  } catch (const std::exception& e) {
    std::cerr << "escouade-codegen: " << host_path << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  // escouade-codegen <schema> <dir>: the protocol layer's files into <dir>.
  // escouade-codegen --sdk <schema> <file>: the SDK's one header
  // (sdk/cpp/include/escouade/protocol.hpp).
  // escouade-codegen --ts <schema> <file>: the TypeScript SDK's types and checkers
  // (sdk/typescript/src/protocol.ts).
  // escouade-codegen --host <host schema> <plugin schema> <dir>: the host protocol's files.
  if (argc == 5 && std::string_view(argv[1]) == "--host")
    return host_files(argv[2], argv[3], argv[4]);
  const bool sdk = argc == 4 && std::string_view(argv[1]) == "--sdk";
  const bool ts = argc == 4 && std::string_view(argv[1]) == "--ts";
  if (argc != 3 && !sdk && !ts) {
    std::cerr << "usage: escouade-codegen <schema.json> <output dir>\n"
              << "       escouade-codegen --sdk <schema.json> <output header>\n"
              << "       escouade-codegen --ts <schema.json> <output .ts>\n"
              << "       escouade-codegen --host <host schema.json> <plugin schema.json> <dir>\n";
    return 2;
  }
  const char* schema_path = argv[sdk || ts ? 2 : 1];
  const std::string target = argv[sdk || ts ? 3 : 2];
  try {
    std::ifstream in(schema_path, std::ios::binary);
    if (!in) fail(schema_path, "cannot read");
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    json::value root = json::parse(text);
    if (ts) {
      // The TypeScript emitter reads the schema itself; the C++ model has no part in it.
      write_if_changed(target, escouade::codegen::typescript_protocol(as_object(root, "schema")));
      return 0;
    }
    // A fact is news a later one makes old; every other message to a plugin is kept
    // (protocol/delivery.hpp).
    escouade::codegen::GeneratorOptions options;
    options.droppable = {"events/fact"};
    Generator g(as_object(root, "schema"), options);
    g.run();
    if (sdk) {
      write_if_changed(target, escouade::codegen::sdk_header(g));
      return 0;
    }
    const std::string& dir = target;
    write_if_changed(dir + "/errors.hpp", g.errors_hpp());
    write_if_changed(dir + "/errors.cpp", g.errors_cpp());
    write_if_changed(dir + "/types.hpp", g.types_hpp());
    write_if_changed(dir + "/types.cpp", g.types_cpp());
    write_if_changed(dir + "/methods.hpp", g.methods_hpp());
    write_if_changed(dir + "/methods.cpp", g.methods_cpp());
    write_if_changed(dir + "/schema_text.cpp", schema_cpp(text));
  } catch (const std::exception& e) {
    std::cerr << "escouade-codegen: " << schema_path << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
