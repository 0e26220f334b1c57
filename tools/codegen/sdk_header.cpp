#include "sdk_header.hpp"

#include <algorithm>
#include <sstream>

namespace escouade::codegen {

namespace {

// What the header holds before the generated types: the reader's context and the readers of
// plain JSON types. Written here once, in the header's own words.
const char* kPrelude = R"(
// Where a read failed and why: the path of the field ("params.request.kind") and the reason.
// Built only on the way back from a failure, so reading what holds costs nothing more.
class ReadContext {
 public:
  // Notes the failure at the value being read; returns false for `return ctx.fail(...)`.
  bool fail(std::string why) {
    failed_ = true;
    why_ = std::move(why);
    path_.clear();
    return false;
  }
  bool wrong_type(std::string_view expected, const boost::json::value& got) {
    std::string why = "expected ";
    why += expected;
    why += ", got ";
    why += kind_name(got);
    return fail(std::move(why));
  }
  bool not_one_of(std::string_view got, std::string_view allowed) {
    std::string why = "\"";
    why += got.substr(0, 64);
    if (got.size() > 64) why += "...";
    why += "\" is not one of ";
    why += allowed;
    return fail(std::move(why));
  }
  bool missing(std::string_view field) {
    fail("required field is missing");
    path_.emplace_back(field);
    return false;
  }
  // Called on the way back from a member or an element that failed.
  bool in_field(std::string_view field) {
    path_.emplace_back(field);
    return false;
  }
  bool in_index(std::size_t index) {
    std::string& part = path_.emplace_back(1, '[');
    part += std::to_string(index);
    part += ']';
    return false;
  }

  bool failed() const noexcept { return failed_; }
  // "params.request.kind: expected a string, got an integer".
  std::string message(std::string_view root = "params") const {
    std::string out(root);
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
      if (it->front() != '[' && !out.empty()) out += '.';
      out += *it;
    }
    return out + ": " + why_;
  }

  static std::string_view kind_name(const boost::json::value& v) noexcept {
    switch (v.kind()) {
      case boost::json::kind::null: return "null";
      case boost::json::kind::bool_: return "a boolean";
      case boost::json::kind::int64:
      case boost::json::kind::uint64: return "an integer";
      case boost::json::kind::double_: return "a number";
      case boost::json::kind::string: return "a string";
      case boost::json::kind::array: return "an array";
      case boost::json::kind::object: return "an object";
    }
    return "a value";
  }

 private:
  bool failed_ = false;
  std::string why_;
  std::vector<std::string> path_;  // innermost first
};

inline bool read_value(const boost::json::value& v, std::string& out, ReadContext& ctx) {
  const auto* s = v.if_string();
  if (!s) return ctx.wrong_type("a string", v);
  out.assign(s->data(), s->size());
  return true;
}
// An integer is what fits a signed 64-bit number with no fraction: 1.0 is not one.
inline bool read_value(const boost::json::value& v, std::int64_t& out, ReadContext& ctx) {
  if (const auto* i = v.if_int64()) {
    out = *i;
    return true;
  }
  if (v.is_uint64()) return ctx.fail("expected an integer of at most 9223372036854775807");
  return ctx.wrong_type("an integer", v);
}
inline bool read_value(const boost::json::value& v, double& out, ReadContext& ctx) {
  if (const auto* d = v.if_double()) out = *d;
  else if (const auto* i = v.if_int64()) out = static_cast<double>(*i);
  else if (const auto* u = v.if_uint64()) out = static_cast<double>(*u);
  else return ctx.wrong_type("a number", v);
  return true;
}
inline bool read_value(const boost::json::value& v, bool& out, ReadContext& ctx) {
  const auto* b = v.if_bool();
  if (!b) return ctx.wrong_type("a boolean", v);
  out = *b;
  return true;
}
inline bool read_value(const boost::json::value& v, std::nullptr_t& out, ReadContext& ctx) {
  if (!v.is_null()) return ctx.wrong_type("null", v);
  out = nullptr;
  return true;
}
inline bool read_value(const boost::json::value& v, boost::json::object& out, ReadContext& ctx) {
  const auto* o = v.if_object();
  if (!o) return ctx.wrong_type("an object", v);
  out = *o;
  return true;
}
inline bool read_value(const boost::json::value& v, boost::json::value& out, ReadContext&) {
  out = v;
  return true;
}
// A value that may be null: null is std::nullopt.
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
  for (const auto& member : *o) {
    if (!read_value(member.value(), out[std::string(member.key())], ctx))
      return ctx.in_field(member.key());
  }
  return true;
}

// Reads `v` into `out`; on failure, returns the message, its path under `root`.
template <class T>
std::optional<std::string> read(const boost::json::value& v, T& out,
                                std::string_view root = "params") {
  ReadContext ctx;
  if (read_value(v, out, ctx)) return std::nullopt;
  return ctx.message(root);
}
)";

// The identifiers a C++ type name is made of ("std::vector<FsEntry>": std, vector, FsEntry).
std::vector<std::string> identifiers(const std::string& type) {
  std::vector<std::string> out;
  std::string word;
  for (char c : type) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word += c;
    } else if (!word.empty()) {
      out.push_back(word);
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

// How the SDK spells a method's params or result: a map of typed values is handed over as an
// object (settings/get: its values are the plugin's to interpret).
std::string sdk_value_type(const CppType& t) {
  if (t.name.rfind("std::map<", 0) == 0) return "boost::json::object";
  return Generator::value_type(t);
}

class SdkWriter {
 public:
  explicit SdkWriter(const Generator& g) : g_(g) {
    for (const auto& e : g_.enums())
      all_.insert(e.name);
    for (const auto& s : g_.structs())
      all_.insert(s.name);
    for (const auto& name : sdk_definitions())
      take(name);
  }

  std::string text() const {
    std::ostringstream o;
    o << kBanner << header_comment() << "#pragma once\n\n"
      << "#include <boost/json/object.hpp>\n#include <boost/json/value.hpp>\n"
      << "#include <boost/json/value_from.hpp>\n#include <cstddef>\n"
      << "#include <cstdint>\n#include <map>\n#include <optional>\n#include <string>\n#include "
         "<string_view>\n"
      << "#include <utility>\n#include <vector>\n\nnamespace escouade {\n\n"
      << "inline constexpr int kProtocolVersion = " << g_.root().at("x-protocolVersion").as_int64()
      << ";\n// The delay of a method whose schema gives none.\n"
      << "inline constexpr std::uint32_t kDefaultTimeoutMs = "
      << g_.root().at("x-defaultTimeoutMs").as_int64() << ";\n\n";
    errors(o);
    o << kPrelude << "\n";
    for (const auto& e : g_.enums()) {
      if (taken_.count(e.name)) enum_type(o, e);
    }
    for (const Struct* s : ordered_structs())
      o << "struct " << s->name << ";\n";
    for (const Struct* s : ordered_structs())
      o << "bool read_value(const boost::json::value& v, " << s->name
        << "& out, ReadContext& ctx);\n"
        << "void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const " << s->name
        << "& s);\n";
    o << "\n";
    for (const Struct* s : ordered_structs())
      struct_type(o, *s);
    methods(o);
    o << "}  // namespace escouade\n";
    return o.str();
  }

 private:
  static std::string header_comment() {
    return "//\n"
           "// The types of protocol 1 that a plugin written with the C++ SDK needs, their JSON\n"
           "// conversions and the traits of the methods it serves or calls. Self-contained: the\n"
           "// standard library and Boost.JSON only. Nothing here throws: a read returns the\n"
           "// message of what does not hold, naming the field; unknown fields are ignored\n"
           "// (Fact keeps them in `unknown`). Regenerate with\n"
           "//   escouade-codegen --sdk schema/plugin-protocol-1.json "
           "sdk/cpp/include/escouade/protocol.hpp\n"
           "// clang-format off\n\n";
  }

  // Takes a definition and, through its members' types, every definition it refers to.
  void take(const std::string& name) {
    if (!all_.count(name)) fail("sdk", "no definition named " + name);
    if (!taken_.insert(name).second) return;
    for (const auto& s : g_.structs()) {
      if (s.name != name) continue;
      for (const auto& f : s.fields) {
        for (const auto& id : identifiers(f.type.name)) {
          if (all_.count(id)) take(id);
        }
      }
    }
  }

  bool uses_only_taken(const std::string& type) const {
    for (const auto& id : identifiers(type)) {
      if (all_.count(id) && !taken_.count(id)) return false;
    }
    return true;
  }

  // The structs taken, each after those it holds.
  std::vector<const Struct*> ordered_structs() const {
    std::vector<const Struct*> order;
    std::set<std::string> done;
    std::function<void(const Struct&)> visit = [&](const Struct& s) {
      if (!done.insert(s.name).second) return;
      for (const auto& f : s.fields) {
        for (const auto& id : identifiers(f.type.name)) {
          for (const auto& t : g_.structs()) {
            if (t.name == id && taken_.count(id)) visit(t);
          }
        }
      }
      order.push_back(&s);
    };
    for (const auto& s : g_.structs()) {
      if (taken_.count(s.name)) visit(s);
    }
    return order;
  }

  void errors(std::ostringstream& o) const {
    o << "// The protocol's error codes (x-errors).\nenum class ErrorCode : int {\n";
    for (const auto& [name, e] : g_.root().at("x-errors").as_object())
      o << "  " << snake_case(name) << " = " << e.at("code").as_int64() << ",\n";
    o << "};\n\n// The schema's name of a code (\"invalidParams\").\n"
      << "inline std::string_view to_string(ErrorCode code) noexcept {\n  switch (code) {\n";
    for (const auto& [name, e] : g_.root().at("x-errors").as_object())
      o << "    case ErrorCode::" << snake_case(name) << ": return " << quote(name) << ";\n";
    o << "  }\n  return {};\n}\n";
  }

  static void enum_type(std::ostringstream& o, const Enum& e) {
    const std::string from = snake_case(e.name) + "_from_string";
    o << "enum class " << e.name << " {\n";
    for (const auto& v : e.values)
      o << "  " << snake_case(v) << ",\n";
    o << "};\n\ninline std::string_view to_string(" << e.name << " v) noexcept {\n"
      << "  switch (v) {\n";
    for (const auto& v : e.values)
      o << "    case " << e.name << "::" << snake_case(v) << ": return " << quote(v) << ";\n";
    o << "  }\n  return {};\n}\n\n"
      << "inline std::optional<" << e.name << "> " << from << "(std::string_view s) noexcept {\n";
    for (const auto& v : e.values)
      o << "  if (s == " << quote(v) << ") return " << e.name << "::" << snake_case(v) << ";\n";
    o << "  return std::nullopt;\n}\n\n"
      << "inline bool read_value(const boost::json::value& v, " << e.name
      << "& out, ReadContext& ctx) {\n  static constexpr std::string_view kAllowed = \"";
    for (std::size_t i = 0; i < e.values.size(); ++i)
      o << (i ? ", " : "") << e.values[i];
    o << "\";\n  const auto* s = v.if_string();\n"
      << "  if (!s) return ctx.wrong_type(\"a string\", v);\n"
      << "  auto parsed = " << from << "(*s);\n"
      << "  if (!parsed) return ctx.not_one_of(*s, kAllowed);\n"
      << "  out = *parsed;\n  return true;\n}\n\n"
      << "inline void tag_invoke(boost::json::value_from_tag, boost::json::value& v, " << e.name
      << " e) {\n  v = to_string(e);\n}\n\n";
  }

  static void struct_type(std::ostringstream& o, const Struct& s) {
    o << "struct " << s.name << " {\n";
    for (const auto& f : s.fields)
      o << "  " << Generator::member_type(f) << " " << f.member << "{};\n";
    if (s.keep_unknown)
      o << "  // The members the schema does not name, kept as they came.\n"
        << "  boost::json::object unknown;\n";
    o << "\n  friend bool operator==(const " << s.name << "&, const " << s.name
      << "&) = default;\n};\n\n";

    o << "inline bool read_value(const boost::json::value& v, " << s.name
      << "& out, ReadContext& ctx) {\n"
      << "  const boost::json::object* o = v.if_object();\n"
      << "  if (!o) return ctx.wrong_type(\"an object\", v);\n";
    if (s.keep_unknown) {
      o << "  out.unknown.clear();\n  for (const auto& m : *o) {\n    const auto k = m.key();\n"
        << "    if (";
      for (std::size_t i = 0; i < s.fields.size(); ++i)
        o << (i ? " || " : "") << "k == " << quote(s.fields[i].json_name);
      o << ") continue;\n    out.unknown.emplace(k, m.value());\n  }\n";
    }
    for (const auto& f : s.fields) {
      const std::string key = quote(f.json_name);
      o << "  if (const boost::json::value* m = o->if_contains(" << key << ")) {\n";
      if (f.type.nullable) {
        o << "    if (m->is_null()) out." << f.member << ".reset();\n"
          << "    else if (!read_value(*m, out." << f.member
          << ".emplace(), ctx)) return ctx.in_field(" << key << ");\n";
      } else if (!f.required) {
        o << "    if (!read_value(*m, out." << f.member << ".emplace(), ctx)) return ctx.in_field("
          << key << ");\n";
      } else {
        o << "    if (!read_value(*m, out." << f.member << ", ctx)) return ctx.in_field(" << key
          << ");\n";
      }
      if (f.required) {
        o << "  } else {\n    return ctx.missing(" << key << ");\n  }\n";
      } else {
        o << "  } else {\n    out." << f.member << ".reset();\n  }\n";
      }
    }
    o << "  return true;\n}\n\n";

    o << "inline void tag_invoke(boost::json::value_from_tag, boost::json::value& v, const "
      << s.name << "& s) {\n  boost::json::object& o = v.emplace_object();\n";
    for (const auto& f : s.fields) {
      const std::string key = quote(f.json_name);
      const std::string from = "boost::json::value_from(";
      if (f.type.nullable && f.required) {
        o << "  if (s." << f.member << ") o.emplace(" << key << ", " << from << "*s." << f.member
          << ", o.storage()));\n  else o.emplace(" << key << ", nullptr);\n";
      } else if (f.type.nullable || !f.required) {
        o << "  if (s." << f.member << ") o.emplace(" << key << ", " << from << "*s." << f.member
          << ", o.storage()));\n";
      } else {
        o << "  o.emplace(" << key << ", " << from << "s." << f.member << ", o.storage()));\n";
      }
    }
    if (s.keep_unknown) o << "  for (const auto& m : s.unknown) o.emplace(m.key(), m.value());\n";
    o << "}\n\n";
  }

  void methods(std::ostringstream& o) const {
    o << "// The methods of protocol 1 a plugin run by a command serves (to_plugin) or calls:\n"
      << "// each one's name, whether it is a notification, its delay, its params and result.\n"
      << "namespace method {\n\n";
    for (const auto& m : g_.methods()) {
      const std::string params = sdk_value_type(m.params);
      const std::string result = m.notification ? "void" : sdk_value_type(m.result);
      if (!uses_only_taken(params) || !uses_only_taken(result)) continue;
      o << "struct " << m.type_name << " {\n"
        << "  static constexpr std::string_view kName = " << quote(m.name) << ";\n"
        << "  static constexpr bool kToPlugin = " << (m.to_peer ? "true" : "false") << ";\n"
        << "  static constexpr bool kNotification = " << (m.notification ? "true" : "false")
        << ";\n  static constexpr std::uint32_t kTimeoutMs = " << m.timeout_ms << ";\n"
        << "  using Params = " << params << ";\n  using Result = " << result << ";\n};\n\n";
    }
    o << "}  // namespace method\n\n";
  }

  const Generator& g_;
  std::set<std::string> all_;
  std::set<std::string> taken_;
};

}  // namespace

std::string sdk_header(const Generator& g) {
  return SdkWriter(g).text();
}

}  // namespace escouade::codegen
