// The only translation unit of src/manifest that includes valijson.
#include "manifest/schema_check.hpp"

#include <boost/json/parse.hpp>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "manifest/fields.hpp"
#include "manifest/manifest.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/json_read.hpp"

namespace escouade::manifest::detail {

namespace json = boost::json;

namespace {

// The embedded schema, as JSON (read again to word the refusals) and compiled by valijson.
struct CompiledSchema {
  json::value document;
  std::unique_ptr<valijson::Schema> schema;
  std::string load_error;  // empty when it loaded
};

const CompiledSchema& compiled_schema() {
  static const CompiledSchema kSchema = [] {
    CompiledSchema c;
    try {
      c.document = json::parse(manifest_schema_text());
      c.schema = std::make_unique<valijson::Schema>();
      valijson::SchemaParser parser;
      valijson::adapters::BoostJsonAdapter adapter(c.document);
      parser.populateSchema(adapter, *c.schema);
    } catch (const std::exception& e) {
      c.schema.reset();
      c.load_error = e.what();
    }
    return c;
  }();
  return kSchema;
}

// valijson's context ["<root>", "[permissions]", "[commands]", "[2]"] as a path into `doc`:
// whether "[2]" is an index or a member's name depends on what the document holds there.
FieldPath field_path_of(const std::vector<std::string>& context, const json::value& doc) {
  FieldPath path;
  const json::value* v = &doc;
  for (std::size_t i = 1; i < context.size(); ++i) {
    std::string_view part = context[i];
    if (part.size() >= 2 && part.front() == '[' && part.back() == ']') {
      part = part.substr(1, part.size() - 2);
    }
    if (v && v->is_array()) {
      std::size_t index = 0;
      for (char c : part)
        index = index * 10 + static_cast<std::size_t>(c - '0');
      path.push_back(PathPart{{}, index, true});
      v = index < v->get_array().size() ? &v->get_array()[index] : nullptr;
    } else {
      path.push_back(PathPart{std::string(part), 0, false});
      v = v && v->is_object() ? v->get_object().if_contains(part) : nullptr;
    }
  }
  return path;
}

// Follows "$ref": "#/definitions/X" inside the schema.
const json::object* resolve(const json::object* node, const json::object& root) {
  constexpr std::string_view kPrefix = "#/definitions/";
  for (int hops = 0; node && hops < 8; ++hops) {
    const json::value* ref = node->if_contains("$ref");
    if (!ref || !ref->is_string()) return node;
    const std::string_view target = ref->get_string();
    if (target.substr(0, kPrefix.size()) != kPrefix) return nullptr;
    const json::value* defs = root.if_contains("definitions");
    const json::value* def = defs && defs->is_object()
                                 ? defs->get_object().if_contains(target.substr(kPrefix.size()))
                                 : nullptr;
    node = def && def->is_object() ? &def->get_object() : nullptr;
  }
  return nullptr;
}

const json::object* member_schema(const json::object& node, std::string_view name,
                                  std::string_view where) {
  const json::value* map = node.if_contains(where);
  if (!map || !map->is_object()) return nullptr;
  if (where == "patternProperties") {
    // The manifest's schema has one pattern wherever it has any.
    const auto it = map->get_object().begin();
    return it != map->get_object().end() && it->value().is_object() ? &it->value().get_object()
                                                                    : nullptr;
  }
  const json::value* sub = map->get_object().if_contains(name);
  return sub && sub->is_object() ? &sub->get_object() : nullptr;
}

// The schema that applies at `path`, or null where the walk cannot tell.
const json::object* schema_at(const json::object& root, const FieldPath& path) {
  const json::object* node = resolve(&root, root);
  for (const auto& part : path) {
    if (!node) return nullptr;
    if (part.is_index) {
      const json::value* items = node->if_contains("items");
      node = items && items->is_object() ? &items->get_object() : nullptr;
    } else {
      const json::object* next = member_schema(*node, part.key, "properties");
      if (!next) next = member_schema(*node, part.key, "patternProperties");
      if (!next) {
        const json::value* extra = node->if_contains("additionalProperties");
        next = extra && extra->is_object() ? &extra->get_object() : nullptr;
      }
      node = next;
    }
    node = resolve(node, root);
  }
  return node;
}

std::string_view type_phrase(std::string_view type) {
  if (type == "string") return "a string";
  if (type == "integer") return "an integer";
  if (type == "number") return "a number";
  if (type == "boolean") return "a boolean";
  if (type == "object") return "an object";
  if (type == "array") return "an array";
  return "null";
}

// "a string", "a string, a number or a boolean" from the schema's "type".
std::string expected_types(const json::object* node) {
  if (!node) return {};
  const json::value* type = node->if_contains("type");
  if (!type) return {};
  if (type->is_string()) return std::string(type_phrase(type->get_string()));
  std::string out;
  if (type->is_array()) {
    const json::array& types = type->get_array();
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (!types[i].is_string()) continue;
      if (i > 0) out += i + 1 == types.size() ? " or " : ", ";
      out += type_phrase(types[i].get_string());
    }
  }
  return out;
}

// The quoted name in valijson's "Missing required property 'x'." and the like.
std::string quoted_name(std::string_view description) {
  const std::size_t last = description.rfind('\'');
  if (last == std::string_view::npos || last == 0) return {};
  const std::size_t first = description.rfind('\'', last - 1);
  if (first == std::string_view::npos) return {};
  return std::string(description.substr(first + 1, last - first - 1));
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// valijson's error at `context`, worded as a refusal of this manifest.
std::string word(const std::vector<std::string>& context, std::string_view description,
                 const json::value& doc, const json::object& schema_root) {
  const FieldPath path = field_path_of(context, doc);
  if (auto why = explain_field(doc, path)) return *why;
  const json::value* value = value_at(doc, path);
  const json::object* node = schema_at(schema_root, path);
  const std::string where = path_string(path);
  const auto with_value = [&](std::string_view why) {
    if (value && !value->is_object() && !value->is_array()) {
      return where + ": " + shown(*value) + ": " + std::string(why);
    }
    return where + ": " + std::string(why);
  };

  if (starts_with(description, "Missing required property")) {
    return path_string(child(path, quoted_name(description))) + ": required, and missing";
  }
  if (starts_with(description, "Object contains a property that could not be validated")) {
    const FieldPath member = child(path, quoted_name(description));
    if (auto why = explain_field(doc, member)) return *why;
    std::string members;
    const json::value* props = node ? node->if_contains("properties") : nullptr;
    if (props && props->is_object()) {
      for (const auto& p : props->get_object()) {
        if (p.key() == "$schema") continue;
        members += members.empty() ? "" : ", ";
        members += p.key();
      }
    }
    std::string message = path_string(member) + ": unknown member (a typo?)";
    if (!members.empty()) {
      message += path.empty() ? "; a manifest has " : "; " + where + " has ";
      message += members;
    }
    return message;
  }
  if (starts_with(description, "Value type not permitted")) {
    const std::string expected = expected_types(node);
    if (value && !expected.empty()) {
      return with_value("expected " + expected + ", got " +
                        std::string(proto::json_kind_name(*value)));
    }
  }
  if (starts_with(description, "Failed to match against any enum values")) {
    const json::value* allowed = node ? node->if_contains("enum") : nullptr;
    if (allowed && allowed->is_array()) {
      std::string list;
      for (const auto& a : allowed->get_array()) {
        list += list.empty() ? "" : ", ";
        list += shown(a);
      }
      return with_value("expected one of " + list);
    }
  }
  if (starts_with(description, "String should be no fewer than 1 ") ||
      starts_with(description, "Array should contain no fewer than 1 ")) {
    return with_value("may not be empty");
  }
  if (starts_with(description, "String should be no more than ")) {
    const std::string_view rest = description.substr(30);
    return with_value("at most " + std::string(rest.substr(0, rest.find(' '))) + " characters");
  }
  return with_value(description);
}

}  // namespace

Result<void> check_schema(const json::value& doc) {
  const CompiledSchema& compiled = compiled_schema();
  if (!compiled.schema) {
    return Error{proto::ErrorCode::internal,
                 "schema/manifest-1.json as embedded does not load: " + compiled.load_error};
  }
  // The validator keeps the std::regex it compiles for each `pattern` of the schema: made once
  // a thread, not at every load (callgrind: compiling them was 8M instructions, 2-3 ms, of each
  // host/load).
  thread_local valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::BoostJsonAdapter target(doc);
  try {
    if (validator.validate(*compiled.schema, target, &results)) return {};
  } catch (const std::exception& e) {
    return Error{proto::ErrorCode::internal,
                 std::string("the manifest's schema check failed: ") + e.what()};
  }
  // The deepest error says the most precisely what was wrong.
  const valijson::ValidationResults::Error* best = nullptr;
  for (const auto& e : results) {
    if (!best || e.context.size() > best->context.size()) best = &e;
  }
  if (!best) {
    return refusal(std::string(kRootName) + ": does not hold to schema/manifest-1.json");
  }
  return refusal(word(best->context, best->description, doc, compiled.document.get_object()));
}

}  // namespace escouade::manifest::detail
