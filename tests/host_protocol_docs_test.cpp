// Every example of docs/host-protocol.md held to schema/host-protocol-1.json, by valijson: the
// params of each request (-->), the result of each answer (<--) against the method of the
// request with its id, the params of each notification. The docs cannot drift from the schema
// the host is generated from. Each method of the schema has at least one example.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/gen/errors.hpp"
#include "protocol/schema_validator.hpp"

namespace {

namespace json = boost::json;
namespace proto = escouade::proto;
using escouade::Result;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The host schema with the plugin schema's definitions beside its own, and its references to
// them made local, so that one document holds every definition it names.
std::string merged_schema() {
  json::object host = json::parse(read(ESCOUADE_HOST_PROTOCOL_SCHEMA)).as_object();
  const json::object plugin = json::parse(read(ESCOUADE_PROTOCOL_SCHEMA)).as_object();
  json::object& defs = host["definitions"].as_object();
  for (const auto& d : plugin.at("definitions").as_object()) {
    EXPECT_FALSE(defs.contains(d.key())) << "a definition of both schemas: " << d.key();
    defs[d.key()] = d.value();
  }
  std::string text = json::serialize(host);
  const std::string from = "plugin-protocol-1.json#/definitions/";
  for (std::size_t at; (at = text.find(from)) != std::string::npos;)
    text.replace(at, from.size(), "#/definitions/");
  return text;
}

struct Example {
  int line;
  bool to_host;  // --> (a request or notification of the app), else <-- (the host's)
  json::value message;
};

std::vector<Example> examples() {
  std::vector<Example> out;
  std::istringstream in(read(ESCOUADE_HOST_PROTOCOL_DOC));
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    const bool to_host = line.rfind("--> ", 0) == 0;
    if (!to_host && line.rfind("<-- ", 0) != 0) continue;
    boost::system::error_code ec;
    json::value v = json::parse(line.substr(4), ec);
    EXPECT_FALSE(ec) << "docs/host-protocol.md:" << n << ": not JSON: " << line;
    if (!ec) out.push_back({n, to_host, std::move(v)});
  }
  return out;
}

TEST(HostProtocolDocs, EveryExampleHoldsToTheSchema) {
  const proto::SchemaValidator schema(merged_schema());
  const auto all = examples();
  ASSERT_FALSE(all.empty());
  // The requests waiting for their answer, by id: an example of a refusal (-32602, -32601)
  // must be refused by the schema too, any other must hold to it.
  struct Asked {
    std::string method;
    Result<void> checked;
    std::string where;
  };
  std::map<std::string, Asked> asked;
  std::set<std::string> shown;
  for (const auto& e : all) {
    const json::object& m = e.message.as_object();
    const std::string where = "docs/host-protocol.md:" + std::to_string(e.line);
    ASSERT_EQ(m.at("jsonrpc"), "2.0") << where;
    if (const json::value* method = m.if_contains("method")) {
      const std::string name(method->as_string());
      shown.insert(name);
      // Params left out read as an empty object, as the host reads them (Session::serve).
      static const json::value kNone = json::object();
      const json::value* params = m.if_contains("params");
      auto checked = schema.check_params(name, params ? params : &kNone);
      if (const json::value* id = m.if_contains("id")) {
        asked.insert_or_assign(json::serialize(*id), Asked{name, checked, where});
      } else {
        EXPECT_TRUE(checked) << where << ": " << checked.error().message;
      }
      continue;
    }
    ASSERT_FALSE(e.to_host) << where << ": the app sends no answer in these examples";
    const auto it = asked.find(json::serialize(m.at("id")));
    ASSERT_NE(it, asked.end()) << where << ": an answer to no request above it";
    const Asked request = it->second;
    asked.erase(it);
    if (const json::value* result = m.if_contains("result")) {
      EXPECT_TRUE(request.checked) << request.where << ": " << request.checked.error().message;
      auto checked = schema.check_result(request.method, *result);
      EXPECT_TRUE(checked) << where << ": " << checked.error().message;
      continue;
    }
    const json::object& error = m.at("error").as_object();
    const auto code = proto::error_code_from_int(static_cast<int>(error.at("code").as_int64()));
    ASSERT_TRUE(code) << where << ": not one of the protocol's codes";
    EXPECT_TRUE(error.at("message").is_string()) << where;
    // A refusal of the params ("params.<field>: ...") or of the method is the schema's; another
    // -32602 (a manifest that does not hold) is the host's, on params that do hold.
    const std::string message(error.at("message").as_string());
    const bool schema_refusal =
        *code == proto::ErrorCode::method_not_found ||
        (*code == proto::ErrorCode::invalid_params && message.rfind("params.", 0) == 0);
    if (schema_refusal) {
      EXPECT_FALSE(request.checked) << request.where << ": refused in the docs, held by the schema";
    } else {
      EXPECT_TRUE(request.checked) << request.where << ": " << request.checked.error().message;
    }
  }
  for (const auto& [id, request] : asked)
    ADD_FAILURE() << request.where << ": a request without its answer";
  const json::object host = json::parse(read(ESCOUADE_HOST_PROTOCOL_SCHEMA)).as_object();
  for (const auto& m : host.at("x-methods").as_object()) {
    EXPECT_TRUE(shown.count(std::string(m.key()))) << m.key() << " has no example in the docs";
  }
}

// The check can fail: a request whose params break the schema is caught.
TEST(HostProtocolDocs, AnExampleThatBreaksTheSchemaIsCaught) {
  const proto::SchemaValidator schema(merged_schema());
  const json::value bad = json::parse(R"({"id":"dev.example.guard","project":{"id":"p-7"}})");
  auto checked = schema.check_params("host/enable", &bad);
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error().message.find("project"), std::string::npos) << checked.error().message;
}

}  // namespace
