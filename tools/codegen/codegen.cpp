// escouade-codegen: reads schema/plugin-protocol-1.json and writes the C++ the protocol layer is
// built on: the error codes, the method table, one struct or enum per definition with its JSON
// conversions, and the schema's text. Run by the build; see docs/codegen.md.
//
// It understands the subset of JSON Schema the protocol uses and refuses anything else with the
// JSON path of the construct, so a schema change it cannot express breaks the build loudly.

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

namespace json = boost::json;

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

std::string title_case(std::string_view name) {
  std::string out;
  bool up = true;
  for (char c : name) {
    if (c == '/' || c == '.' || c == '_' || c == '-') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

std::string snake_case(std::string_view name) {
  static const std::set<std::string> kKeywords = {
      "and",     "auto",      "bool",   "break",  "case",  "char",   "class",    "const",
      "default", "delete",    "do",     "double", "else",  "enum",   "false",    "float",
      "for",     "if",        "int",    "long",   "new",   "not",    "operator", "or",
      "private", "protected", "public", "return", "short", "signed", "static",   "struct",
      "switch",  "template",  "this",   "true",   "try",   "union",  "unsigned", "using",
      "virtual", "void",      "while",  "xor"};
  std::string out;
  for (char c : name) {
    if (c == '.' || c == '-' || c == '/') {
      out += '_';
    } else if (std::isupper(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != '_') out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  if (kKeywords.count(out)) out += '_';
  return out;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

const json::object& as_object(const json::value& v, const std::string& where) {
  if (!v.is_object()) fail(where, "expected an object");
  return v.get_object();
}

// How a schema maps to C++.
struct CppType {
  std::string name;       // the C++ type of a value (without the optional<> of an absent field)
  bool nullable = false;  // null is a valid value: the member is std::optional<name>
};

struct Field {
  std::string json_name;
  std::string member;
  CppType type;
  bool required = false;
};

struct Enum {
  std::string name;
  std::vector<std::string> values;
};

struct Struct {
  std::string name;
  std::vector<Field> fields;
  bool keep_unknown = false;  // additionalProperties: true on the definition: unknown fields kept
};

class Generator {
 public:
  explicit Generator(const json::object& root) : root_(root) {}

  void run() {
    const auto& defs = as_object(root_.at("definitions"), "definitions");
    for (const auto& [name, def] : defs)
      definition(std::string(name), def);
    const auto& methods = as_object(root_.at("x-methods"), "x-methods");
    for (const auto& [name, m] : methods)
      method(std::string(name), m);
  }

  std::string errors_hpp() const;
  std::string errors_cpp() const;
  std::string types_hpp() const;
  std::string types_cpp() const;
  std::string methods_hpp() const;
  std::string methods_cpp() const;

 private:
  struct Method {
    std::string name;
    std::string type_name;
    bool to_plugin;
    bool notification;
    std::int64_t timeout_ms;
    bool timeout_explicit;
    std::vector<std::string> errors;
    CppType params;
    CppType result;  // name "void" for a notification
  };

  void definition(const std::string& name, const json::value& v) {
    const std::string where = "definitions." + name;
    const auto& o = as_object(v, where);
    if (o.contains("enum")) {
      enum_type(name, o, where);
    } else if (o.contains("type") && o.at("type") == "object" && o.contains("properties")) {
      struct_type(name, o, where);
    } else {
      fail(where, "a definition must be an enum or an object with properties");
    }
    def_names_.insert(name);
  }

  void enum_type(const std::string& name, const json::object& o, const std::string& where) {
    Enum e{name, {}};
    for (const auto& v : o.at("enum").as_array()) {
      if (!v.is_string()) fail(where, "only enums of strings are supported");
      e.values.emplace_back(v.get_string());
    }
    enums_.push_back(std::move(e));
  }

  void struct_type(const std::string& name, const json::object& o, const std::string& where) {
    Struct s{name, {}, false};
    std::set<std::string> required;
    if (auto* r = o.if_contains("required")) {
      for (const auto& k : r->as_array())
        required.insert(std::string(k.as_string()));
    }
    if (auto* ap = o.if_contains("additionalProperties")) {
      if (!ap->is_bool()) fail(where, "additionalProperties on a definition must be a boolean");
      s.keep_unknown = ap->get_bool();
    }
    for (const auto& [pname, pv] : as_object(o.at("properties"), where + ".properties")) {
      std::string key(pname);
      Field f{key, snake_case(key), map_type(pv, where + "." + key, name + title_case(key)),
              required.count(key) > 0};
      s.fields.push_back(std::move(f));
      required.erase(key);
    }
    if (!required.empty()) fail(where, "required names an unknown property: " + *required.begin());
    structs_.push_back(std::move(s));
  }

  // Maps a property or method schema to a C++ type; `enum_name` names an inline enum.
  CppType map_type(const json::value& v, const std::string& where, const std::string& enum_name) {
    const auto& o = as_object(v, where);
    if (auto* ref = o.if_contains("$ref")) {
      std::string r(ref->as_string());
      const std::string prefix = "#/definitions/";
      if (r.rfind(prefix, 0) != 0) fail(where, "only local #/definitions references are supported");
      return {r.substr(prefix.size()), false};
    }
    if (auto* en = o.if_contains("enum")) {
      Enum e{enum_name, {}};
      for (const auto& x : en->as_array())
        e.values.emplace_back(x.as_string());
      enums_.push_back(std::move(e));
      return {enum_name, false};
    }
    const json::value* t = o.if_contains("type");
    if (!t) fail(where, "a schema needs $ref, enum or type");
    if (t->is_array()) {
      std::vector<std::string> types;
      for (const auto& x : t->as_array())
        types.emplace_back(x.as_string());
      if (types.size() == 2 && types[1] == "null") {
        CppType inner = scalar(types[0], where);
        inner.nullable = true;
        return inner;
      }
      if (types == std::vector<std::string>{"string", "number", "boolean"}) return {"Scalar"};
      fail(where, "unsupported list of types");
    }
    std::string type(t->as_string());
    if (type == "object") {
      const json::value* ap = o.if_contains("additionalProperties");
      if (o.contains("properties")) {
        // An inline object gets a struct of its own, named after where it is.
        struct_type(enum_name, o, where);
        return {enum_name};
      }
      if (!ap || (ap->is_bool() && ap->get_bool())) return {"boost::json::object"};
      if (ap->is_object()) {
        CppType value = map_type(*ap, where + ".additionalProperties", enum_name + "Value");
        if (value.nullable) fail(where, "nullable map values are not supported");
        return {"std::map<std::string, " + value.name + ">"};
      }
      fail(where, "unsupported additionalProperties");
    }
    if (type == "array") {
      CppType item = map_type(o.at("items"), where + ".items", enum_name + "Item");
      if (item.nullable) fail(where, "nullable array items are not supported");
      return {"std::vector<" + item.name + ">"};
    }
    return scalar(type, where);
  }

  CppType scalar(const std::string& type, const std::string& where) {
    if (type == "string") return {"std::string"};
    if (type == "integer") return {"std::int64_t"};
    if (type == "number") return {"double"};
    if (type == "boolean") return {"bool"};
    if (type == "null") return {"std::nullptr_t"};
    fail(where, "unsupported type " + type);
  }

  void method(const std::string& name, const json::value& v) {
    const std::string where = "x-methods." + name;
    const auto& o = as_object(v, where);
    Method m;
    m.name = name;
    m.type_name = title_case(name);
    const auto dir = o.at("direction").as_string();
    if (dir != "toPlugin" && dir != "toEscouade")
      fail(where, "direction must be toPlugin or toEscouade");
    m.to_plugin = dir == "toPlugin";
    m.notification = o.contains("notification") && o.at("notification").as_bool();
    m.timeout_explicit = o.contains("timeoutMs");
    m.timeout_ms = m.timeout_explicit ? o.at("timeoutMs").as_int64()
                                      : root_.at("x-defaultTimeoutMs").as_int64();
    const auto& errs = as_object(root_.at("x-errors"), "x-errors");
    if (auto* e = o.if_contains("errors")) {
      for (const auto& x : e->as_array()) {
        std::string en(x.as_string());
        if (!errs.contains(en)) fail(where, "errors names an unknown error: " + en);
        m.errors.push_back(en);
      }
    }
    m.params = map_type(o.at("params"), where + ".params", m.type_name + "Params");
    if (m.notification) {
      if (o.contains("result")) fail(where, "a notification has no result");
      m.result = {"void"};
    } else {
      m.result = map_type(o.at("result"), where + ".result", m.type_name + "Result");
    }
    methods_.push_back(std::move(m));
  }

  static std::string member_type(const Field& f) {
    if (f.type.nullable || !f.required) return "std::optional<" + f.type.name + ">";
    return f.type.name;
  }
  static std::string value_type(const CppType& t) {
    return t.nullable ? "std::optional<" + t.name + ">" : t.name;
  }

  const json::object& root_;
  std::vector<Enum> enums_;
  std::vector<Struct> structs_;
  std::vector<Method> methods_;
  std::set<std::string> def_names_;
};

const char* kBanner =
    "// Generated by tools/codegen from schema/plugin-protocol-1.json. Do not edit.\n";

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
#include <vector>

#include "protocol/json_read.hpp"

namespace escouade::proto {

)";
  for (const auto& e : enums_) {
    o << "enum class " << e.name << " {\n";
    for (const auto& v : e.values)
      o << "  " << snake_case(v) << ",\n";
    o << "};\nstd::string_view to_string(" << e.name << " v) noexcept;\n"
      << "std::optional<" << e.name << "> " << snake_case(e.name)
      << "_from_string(std::string_view s) noexcept;\n"
      << "bool read_value(const boost::json::value& v, " << e.name << "& out, ReadContext& ctx);\n"
      << "void tag_invoke(boost::json::value_from_tag, boost::json::value& v, " << e.name
      << " e);\n\n";
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
      << s->name << " tag_invoke(boost::json::value_to_tag<" << s->name
      << ">, const boost::json::value& v);\n\n";
  }
  o << "}  // namespace escouade::proto\n";
  return o.str();
}

std::string Generator::types_cpp() const {
  std::ostringstream o;
  o << kBanner << R"(#include "protocol/gen/types.hpp"

#include <boost/json/value_from.hpp>

namespace escouade::proto {

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
      << " e) { v = to_string(e); }\n\n";
  }
  for (const auto& s : structs_) {
    o << "bool read_value(const json::value& v, " << s.name << "& out, ReadContext& ctx) {\n"
      << "  const json::object* o = v.if_object();\n"
      << "  if (!o) return ctx.wrong_type(\"an object\", v);\n";
    if (s.keep_unknown) o << "  out.unknown.clear();\n";
    if (s.keep_unknown) {
      o << "  for (const auto& m : *o) {\n    const auto k = m.key();\n    if (";
      for (std::size_t i = 0; i < s.fields.size(); ++i) {
        o << (i ? " || " : "") << "k == " << quote(s.fields[i].json_name);
      }
      o << ") continue;\n    out.unknown.emplace(k, m.value());\n  }\n";
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
    o << "}\n\n"
      << s.name << " tag_invoke(json::value_to_tag<" << s.name << ">, const json::value& v) {\n"
      << "  " << s.name << " out;\n  ReadContext ctx;\n"
      << "  if (!read_value(v, out, ctx)) throw_read_error(ctx);\n  return out;\n}\n\n";
  }
  o << "}  // namespace escouade::proto\n";
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
#include "protocol/gen/errors.hpp"
#include "protocol/gen/types.hpp"

namespace escouade::proto {

enum class Direction : std::uint8_t { to_plugin, to_escouade };

inline constexpr int kProtocolVersion = )"
    << root_.at("x-protocolVersion").as_int64() << R"(;
inline constexpr std::uint32_t kDefaultTimeoutMs = )"
    << root_.at("x-defaultTimeoutMs").as_int64() << R"(;

// One method of the protocol as the schema states it.
struct MethodInfo {
  std::string_view name;
  Direction direction;
  bool notification;
  // The method's timeoutMs, or x-defaultTimeoutMs when it states none (timeout_explicit false).
  std::uint32_t timeout_ms;
  bool timeout_explicit;
  // The errors the schema lists for it; empty when it lists none.
  std::span<const ErrorCode> errors;
  // Checks params (nullptr: the message had none) against the method's params schema by
  // reading them into the generated type; the error names the field and what was wrong.
  bool (*check_params)(const boost::json::value* params, ReadContext& ctx);
  // Checks a result the same way; nullptr for a notification, which has none.
  bool (*check_result)(const boost::json::value& result, ReadContext& ctx);
};

// Every method, in the schema's order.
std::span<const MethodInfo> methods() noexcept;
// The method named `name`, or nullptr when the protocol has none by that name.
const MethodInfo* find_method(std::string_view name) noexcept;

// One type per method: its name, direction, delay, and its params and result types.
namespace method {
)";
  for (const auto& m : methods_) {
    o << "struct " << m.type_name << " {\n"
      << "  static constexpr std::string_view kName = " << quote(m.name) << ";\n"
      << "  static constexpr Direction kDirection = Direction::"
      << (m.to_plugin ? "to_plugin" : "to_escouade") << ";\n"
      << "  static constexpr bool kNotification = " << (m.notification ? "true" : "false")
      << ";\n  static constexpr std::uint32_t kTimeoutMs = " << m.timeout_ms << ";\n"
      << "  using Params = " << value_type(m.params) << ";\n"
      << "  using Result = " << value_type(m.result) << ";\n};\n";
  }
  o << "}  // namespace method\n\n}  // namespace escouade::proto\n";
  return o.str();
}

std::string Generator::methods_cpp() const {
  std::ostringstream o;
  o << kBanner << R"(#include "protocol/gen/methods.hpp"

#include <array>
#include <boost/json/value.hpp>

namespace escouade::proto {

namespace {

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
    o << "    {" << quote(m.name) << ", Direction::" << (m.to_plugin ? "to_plugin" : "to_escouade")
      << ", " << (m.notification ? "true" : "false") << ", " << m.timeout_ms << ", "
      << (m.timeout_explicit ? "true" : "false") << ", k" << m.type_name << "Errors, &check<"
      << value_type(m.params) << ">, ";
    if (m.notification) {
      o << "nullptr},\n";
    } else {
      o << "&check_result<" << value_type(m.result) << ">},\n";
    }
  }
  o << R"(}};

}  // namespace

std::span<const MethodInfo> methods() noexcept { return kMethods; }

const MethodInfo* find_method(std::string_view name) noexcept {
  for (const auto& m : kMethods) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace escouade::proto
)";
  return o.str();
}

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

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: escouade-codegen <schema.json> <output dir>\n";
    return 2;
  }
  try {
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) fail(argv[1], "cannot read");
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    json::value root = json::parse(text);
    Generator g(as_object(root, "schema"));
    g.run();
    const std::string dir = argv[2];
    write_if_changed(dir + "/errors.hpp", g.errors_hpp());
    write_if_changed(dir + "/errors.cpp", g.errors_cpp());
    write_if_changed(dir + "/types.hpp", g.types_hpp());
    write_if_changed(dir + "/types.cpp", g.types_cpp());
    write_if_changed(dir + "/methods.hpp", g.methods_hpp());
    write_if_changed(dir + "/methods.cpp", g.methods_cpp());
    write_if_changed(dir + "/schema_text.cpp", schema_cpp(text));
  } catch (const std::exception& e) {
    std::cerr << "escouade-codegen: " << argv[1] << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
