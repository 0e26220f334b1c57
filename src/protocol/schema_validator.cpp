// The only translation unit that includes valijson.
#include "protocol/schema_validator.hpp"

#include <boost/json/parse.hpp>
#include <cctype>
#include <map>
#include <string>
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "protocol/gen/errors.hpp"

namespace escouade::proto {

namespace json = boost::json;

struct SchemaValidator::Impl {
  struct MethodSchemas {
    // The documents the schemas were parsed from must outlive nothing: valijson copies.
    std::unique_ptr<valijson::Schema> params;
    std::unique_ptr<valijson::Schema> result;  // null for a notification
  };
  std::map<std::string, MethodSchemas, std::less<>> methods;
};

namespace {

// A schema document for one method's params or result: its own schema with the definitions
// beside it, so that "#/definitions/X" resolves inside it.
std::unique_ptr<valijson::Schema> compile(const json::object& sub, const json::value& definitions) {
  json::object doc = sub;
  doc["definitions"] = definitions;
  json::value v(std::move(doc));
  auto schema = std::make_unique<valijson::Schema>();
  valijson::SchemaParser parser;
  valijson::adapters::BoostJsonAdapter adapter(v);
  parser.populateSchema(adapter, *schema);
  return schema;
}

// valijson's context ["<root>", "[request]", "[kind]"] as "params.request.kind".
std::string path_of(const std::vector<std::string>& context, std::string_view root) {
  std::string out(root);
  for (std::size_t i = 1; i < context.size(); ++i) {
    std::string_view part = context[i];
    if (part.size() >= 2 && part.front() == '[' && part.back() == ']') {
      part = part.substr(1, part.size() - 2);
    }
    bool index = !part.empty();
    for (char c : part)
      index = index && std::isdigit(static_cast<unsigned char>(c));
    if (index) {
      out += '[';
      out += part;
      out += ']';
    } else {
      out += '.';
      out += part;
    }
  }
  return out;
}

Result<void> run(const valijson::Schema& schema, const json::value& value, std::string_view root) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::BoostJsonAdapter target(value);
  if (validator.validate(schema, target, &results)) return {};
  // The deepest error says the most precisely what was wrong.
  const valijson::ValidationResults::Error* best = nullptr;
  for (const auto& e : results) {
    if (!best || e.context.size() > best->context.size()) best = &e;
  }
  std::string message = best ? path_of(best->context, root) + ": " + best->description
                             : std::string(root) + ": does not hold to the schema";
  return Error{ErrorCode::invalid_params, std::move(message)};
}

}  // namespace

SchemaValidator::SchemaValidator() : SchemaValidator(schema_text()) {}

SchemaValidator::SchemaValidator(std::string_view schema_json) : impl_(std::make_unique<Impl>()) {
  const json::value root = json::parse(schema_json);
  const json::value& definitions = root.at("definitions");
  for (const auto& [name, m] : root.at("x-methods").as_object()) {
    Impl::MethodSchemas s;
    s.params = compile(m.at("params").as_object(), definitions);
    if (const json::value* r = m.as_object().if_contains("result")) {
      s.result = compile(r->as_object(), definitions);
    }
    impl_->methods.emplace(std::string(name), std::move(s));
  }
}

SchemaValidator::~SchemaValidator() = default;

Result<void> SchemaValidator::check_params(std::string_view method,
                                           const json::value* params) const {
  auto it = impl_->methods.find(method);
  if (it == impl_->methods.end()) {
    return Error{ErrorCode::method_not_found, "the protocol has no method " + std::string(method)};
  }
  static const json::value kNull;
  return run(*it->second.params, params ? *params : kNull, "params");
}

Result<void> SchemaValidator::check_result(std::string_view method,
                                           const json::value& result) const {
  auto it = impl_->methods.find(method);
  if (it == impl_->methods.end()) {
    return Error{ErrorCode::method_not_found, "the protocol has no method " + std::string(method)};
  }
  if (!it->second.result) {
    return Error{ErrorCode::invalid_params, std::string(method) + " is a notification: no result"};
  }
  return run(*it->second.result, result, "result");
}

}  // namespace escouade::proto
