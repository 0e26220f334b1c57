#include "protocol/params_check.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>

#include "protocol/schema_validator.hpp"

namespace escouade::proto {
namespace {

namespace json = boost::json;

const SchemaValidator& validator() {
  static const SchemaValidator v;
  return v;
}

struct Case {
  const char* method;
  const char* params;  // nullptr: no params
  const char* error;   // nullptr: valid; else the message the compiled check gives
};

// Each case is checked by both engines: the compiled check must give `error` exactly, and
// valijson must agree on whether the params hold.
const Case kCases[] = {
    {"initialize",
     R"({"protocolVersion":1,"escouade":{"version":"2.1.1"},"plugin":{"id":"dev.x","version":"1.0.0"},"lang":"en","capabilities":{"batch":true}})",
     nullptr},
    {"initialize",
     R"({"protocolVersion":1,"escouade":{},"plugin":{"id":"a","version":"1"},"capabilities":{}})",
     "params.escouade.version: required field is missing"},
    {"initialize",
     R"({"protocolVersion":"1","escouade":{"version":"2"},"plugin":{"id":"a","version":"1"},"capabilities":{}})",
     "params.protocolVersion: expected an integer, got a string"},
    {"initialize",
     R"({"protocolVersion":1.0,"escouade":{"version":"2"},"plugin":{"id":"a","version":"1"},"capabilities":{}})",
     "params.protocolVersion: expected an integer, got a number"},
    {"shutdown", nullptr, nullptr},
    {"shutdown", R"({})", "params: expected null, got an object"},
    {"events/fact",
     R"({"name":"ticket.column","version":1,"seq":4,"at":"2026-11-29T10:00:00Z","data":{"from":"todo","to":"doing"},"project":{"id":"p","name":"P","private":false},"extra":{"kept":true}})",
     nullptr},
    {"events/fact", R"({"name":"ticket.unknown","version":1,"seq":4,"at":"t","data":{}})",
     "params.name: \"ticket.unknown\" is not one of agent.created, agent.renamed, agent.status, "
     "agent.stopped, agent.handover, turn.ended, request.permission, request.question, "
     "request.answered, ticket.created, ticket.column, ticket.report, ticket.approved, "
     "ticket.rejected, ticket.merged, ticket.conflict, project.added, project.closed, "
     "worktree.created, worktree.removed, launch.started, launch.ready, launch.stopped, "
     "tests.result, app.started, docs.written, docs.filed, docs.gaps, memory.written, "
     "memory.forgotten, decision.proposed, decision.accepted, pr.opened, account.switched, "
     "workflow.step_entered, workflow.step_left, workflow.looped_back, workflow.left, "
     "workflow.changed"},
    {"events/fact", R"({"name":"agent.status","version":1,"seq":4,"at":"t","data":[]})",
     "params.data: expected an object, got an array"},
    {"events/fact",
     R"({"name":"agent.status","version":1,"seq":4,"at":"t","data":{},"project":{"id":"p","name":"P"}})",
     "params.project.private: required field is missing"},
    {"permissions/decide",
     R"({"request":{"id":"r1","kind":"command","tool":"Bash","input":{"command":"npm test"}},"project":{"id":"p","name":"P","private":true},"agent":{"id":"a","name":"Ada"}})",
     nullptr},
    {"permissions/decide",
     R"({"request":{"id":"r1","kind":7},"project":{"id":"p","name":"P","private":true}})",
     "params.request.kind: expected a string, got an integer"},
    {"permissions/decide", R"({"request":{"id":"r1","kind":"edit"}})",
     "params.project: required field is missing"},
    {"permissions/decide", nullptr,
     "permissions/decide needs params: expected an object, got null"},
    {"permissions/decide", R"([1,2])", "params: expected an object, got an array"},
    {"secrets/get", R"({"key":"token"})", nullptr},
    {"secrets/get", R"({"key":null})", "params.key: expected a string, got null"},
    {"settings/get", R"({})", nullptr},
    {"settings/get", R"({"project":"p1"})", nullptr},
    {"settings/get", R"({"project":false})", "params.project: expected a string, got a boolean"},
    {"files/read", R"({"path":"data/words.txt"})", nullptr},
    {"files/read", R"({"path":["a"]})", "params.path: expected a string, got an array"},
    {"log", R"({"level":"warn","message":"disk almost full"})", nullptr},
    {"log", R"({"level":"fatal","message":"x"})",
     "params.level: \"fatal\" is not one of debug, info, warn, error"},
    {"net/fetch", R"({"url":"https://api.slack.com","headers":{"a":"b"},"body":null})", nullptr},
    {"net/fetch", R"({"url":"https://x","headers":{"a":1}})",
     "params.headers.a: expected a string, got an integer"},
    {"fs/list", R"({"path":"src","root":"agentRepo","agent":"k"})", nullptr},
    {"fs/list", R"({"path":"src","root":"home"})",
     "params.root: \"home\" is not one of plugin, agent, agentRepo, agentHome, temp"},
    {"proc/spawn", R"({"command":"git","args":["status",1]})",
     "params.args[1]: expected a string, got an integer"},
    {"proc/exit", R"({"proc":3,"code":null})", nullptr},
    {"proc/exit", R"({"proc":3})", "params.code: required field is missing"},
    {"timer/set", R"({"ms":12.5})", nullptr},
    {"timer/set", R"({"ms":"12"})", "params.ms: expected a number, got a string"},
    {"ws/closed", R"({"socket":1,"code":1006,"reason":""})", nullptr},
    {"net/credit", R"({"stream":1,"bytes":18446744073709551615})",
     "params.bytes: expected an integer of at most 9223372036854775807"},
};

TEST(ParamsCheck, CompiledChecksNameTheFieldAndAgreeWithValijson) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(std::string(c.method) + " " + (c.params ? c.params : "(none)"));
    std::optional<json::value> params;
    if (c.params) params = json::parse(c.params);
    const json::value* p = params ? &*params : nullptr;
    auto compiled = check_params(c.method, p);
    auto reference = validator().check_params(c.method, p);
    if (c.error) {
      ASSERT_FALSE(compiled);
      EXPECT_EQ(compiled.error().code, ErrorCode::invalid_params);
      EXPECT_EQ(compiled.error().message, c.error);
      ASSERT_FALSE(reference) << "valijson accepts what the compiled check refuses";
      EXPECT_EQ(reference.error().code, ErrorCode::invalid_params);
    } else {
      EXPECT_TRUE(compiled) << compiled.error().message;
      EXPECT_TRUE(reference) << reference.error().message;
    }
  }
}

TEST(ParamsCheck, ValijsonMessageNamesTheField) {
  json::value bad = json::parse(
      R"({"request":{"id":"r","kind":7},"project":{"id":"p","name":"P","private":true}})");
  auto deep = validator().check_params("permissions/decide", &bad);
  ASSERT_FALSE(deep);
  EXPECT_NE(deep.error().message.find("params.request.kind"), std::string::npos)
      << deep.error().message;
}

TEST(ParamsCheck, UnknownMethodIsMethodNotFound) {
  EXPECT_EQ(check_params("agent/attach", nullptr).error().code, ErrorCode::method_not_found);
  EXPECT_EQ(validator().check_params("agent/attach", nullptr).error().code,
            ErrorCode::method_not_found);
}

TEST(ResultCheck, ResultsAreCheckedToo) {
  const MethodInfo* decide = find_method("permissions/decide");
  ASSERT_NE(decide, nullptr);
  EXPECT_TRUE(check_result(*decide, json::parse(R"({"decision":"deny","message":"no"})")));
  auto bad = check_result(*decide, json::parse(R"({"decision":"maybe"})"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "result.decision: \"maybe\" is not one of allow, deny, ask");
  EXPECT_FALSE(
      validator().check_result("permissions/decide", json::parse(R"({"decision":"maybe"})")));

  const MethodInfo* secrets = find_method("secrets/get");
  EXPECT_TRUE(check_result(*secrets, json::value(nullptr)));
  EXPECT_TRUE(check_result(*secrets, json::value("s3cret")));
  EXPECT_FALSE(check_result(*secrets, json::value(1)));
  EXPECT_TRUE(validator().check_result("secrets/get", json::value(nullptr)));
  EXPECT_FALSE(validator().check_result("secrets/get", json::value(1)));

  const MethodInfo* settings = find_method("settings/get");
  EXPECT_TRUE(check_result(*settings, json::parse(R"({"a":"x","b":2,"c":1.5,"d":true})")));
  auto nested = check_result(*settings, json::parse(R"({"a":{"x":1}})"));
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().message,
            "result.a: expected a string, a number or a boolean, got an object");
  EXPECT_FALSE(validator().check_result("settings/get", json::parse(R"({"a":{"x":1}})")));

  const MethodInfo* log = find_method("log");
  EXPECT_FALSE(check_result(*log, json::value(nullptr)));  // a notification has no result
}

}  // namespace
}  // namespace escouade::proto
