// The code generated from the schema: the method table, the error codes and the types.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>
#include <cctype>
#include <set>
#include <string>

#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "protocol/gen/types.hpp"

namespace escouade::proto {
namespace {

namespace json = boost::json;

TEST(MethodTable, HoldsTheSchemasDelaysAndDirections) {
  EXPECT_EQ(kProtocolVersion, 1);
  EXPECT_EQ(kDefaultTimeoutMs, 5000u);
  EXPECT_EQ(methods().size(), 32u);

  const MethodInfo* init = find_method("initialize");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->timeout_ms, 10000u);
  EXPECT_TRUE(init->timeout_explicit);
  EXPECT_EQ(init->direction, Direction::to_plugin);
  EXPECT_FALSE(init->notification);

  EXPECT_EQ(find_method("permissions/decide")->timeout_ms, 500u);
  EXPECT_EQ(find_method("shutdown")->timeout_ms, 1000u);
  const MethodInfo* secrets = find_method("secrets/get");
  EXPECT_EQ(secrets->timeout_ms, 5000u);
  EXPECT_FALSE(secrets->timeout_explicit);
  EXPECT_EQ(secrets->direction, Direction::to_escouade);

  EXPECT_TRUE(find_method("events/fact")->notification);
  EXPECT_TRUE(find_method("log")->notification);
  EXPECT_EQ(find_method("log")->check_result, nullptr);
  EXPECT_EQ(find_method("nope"), nullptr);

  const MethodInfo* files = find_method("files/read");
  std::set<ErrorCode> errs(files->errors.begin(), files->errors.end());
  EXPECT_EQ(errs, (std::set<ErrorCode>{ErrorCode::invalid_params, ErrorCode::refused,
                                       ErrorCode::not_found, ErrorCode::failed}));
  EXPECT_TRUE(find_method("initialize")->errors.empty());
}

// find_method searches an index of the table sorted by name: every method finds its own row,
// and a name near it (a prefix, a longer name, another case) finds only a method of that very
// name (ws/close is ws/closed without its last letter), or none.
TEST(MethodTable, EveryMethodIsFoundByItsNameAndNothingElseIs) {
  auto finds_itself_or_none = [](const std::string& probe) {
    const MethodInfo* m = find_method(probe);
    return m == nullptr || m->name == probe;
  };
  for (const MethodInfo& m : methods()) {
    EXPECT_EQ(find_method(m.name), &m) << m.name;
    const std::string name(m.name);
    EXPECT_TRUE(finds_itself_or_none(name + "x")) << name;
    EXPECT_TRUE(finds_itself_or_none(name.substr(0, name.size() - 1))) << name;
    std::string upper = name;
    for (auto& c : upper)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(find_method(upper), nullptr) << name;
  }
  EXPECT_EQ(find_method("ws/clos"), nullptr);
  EXPECT_EQ(find_method(""), nullptr);
  EXPECT_EQ(find_method("~"), nullptr);  // after every name
  EXPECT_EQ(find_method("!"), nullptr);  // before every name
}

// The delivery rule (protocol/delivery.hpp): of what the host sends a plugin, facts alone may be
// dropped when it does not read; every other notification (timer/fired, net/chunk, net/end,
// ws/message, ws/closed, proc/out, proc/exit), every request and every answer is kept.
TEST(MethodTable, OnlyFactsMayBeDroppedOnTheWayToAPlugin) {
  std::set<std::string> kept_notifications;
  for (const MethodInfo& m : methods()) {
    const bool fact = m.name == "events/fact";
    EXPECT_EQ(m.delivery, fact ? Delivery::droppable : Delivery::kept) << m.name;
    EXPECT_EQ(delivery_of(m.name), m.delivery) << m.name;
    if (m.notification && m.direction == Direction::to_plugin && !fact)
      kept_notifications.emplace(m.name);
  }
  EXPECT_EQ(kept_notifications,
            (std::set<std::string>{"proc/out", "proc/exit", "net/chunk", "net/end", "ws/message",
                                   "ws/closed", "timer/fired"}));
  EXPECT_EQ(delivery_of("no/such-method"), Delivery::kept);
  static_assert(method::EventsFact::kDelivery == Delivery::droppable);
  static_assert(method::TimerFired::kDelivery == Delivery::kept);
  static_assert(method::NetChunk::kDelivery == Delivery::kept);
  static_assert(method::PermissionsDecide::kDelivery == Delivery::kept);
}

TEST(MethodTypes, CarryTheirNameParamsAndResult) {
  static_assert(method::PermissionsDecide::kName == "permissions/decide");
  static_assert(method::PermissionsDecide::kTimeoutMs == 500);
  static_assert(std::is_same_v<method::PermissionsDecide::Params, DecideParams>);
  static_assert(std::is_same_v<method::PermissionsDecide::Result, Decision>);
  static_assert(std::is_same_v<method::SecretsGet::Result, std::optional<std::string>>);
  static_assert(std::is_same_v<method::Shutdown::Params, std::nullptr_t>);
  static_assert(std::is_same_v<method::EventsFact::Result, void>);
  static_assert(method::EventsFact::kNotification);
  SUCCEED();
}

TEST(ErrorCodes, MatchTheSchema) {
  EXPECT_EQ(static_cast<int>(ErrorCode::parse), -32700);
  EXPECT_EQ(static_cast<int>(ErrorCode::invalid_request), -32600);
  EXPECT_EQ(static_cast<int>(ErrorCode::method_not_found), -32601);
  EXPECT_EQ(static_cast<int>(ErrorCode::invalid_params), -32602);
  EXPECT_EQ(static_cast<int>(ErrorCode::internal), -32603);
  EXPECT_EQ(static_cast<int>(ErrorCode::not_yours), -32001);
  EXPECT_EQ(static_cast<int>(ErrorCode::keychain), -32002);
  EXPECT_EQ(static_cast<int>(ErrorCode::refused), -32003);
  EXPECT_EQ(static_cast<int>(ErrorCode::failed), -32004);
  EXPECT_EQ(static_cast<int>(ErrorCode::not_found), -32005);
  EXPECT_EQ(error_name(ErrorCode::not_yours), "notYours");
  EXPECT_EQ(error_code_from_name("notFound"), ErrorCode::not_found);
  EXPECT_EQ(error_code_from_int(-32002), ErrorCode::keychain);
  EXPECT_FALSE(error_code_from_int(-1));
  boost::system::error_code ec = ErrorCode::refused;
  EXPECT_EQ(ec.category().name(), std::string("escouade.protocol"));
  EXPECT_FALSE(ec.message().empty());
}

TEST(GeneratedTypes, DecideParamsRoundTrip) {
  const json::value in = json::parse(
      R"({"request":{"id":"r1","kind":"command","tool":"Bash","input":{"command":"rm -rf /"}},)"
      R"("project":{"id":"p","name":"P","private":false},"agent":{"id":"a","name":"Ada"}})");
  auto p = json::value_to<DecideParams>(in);
  EXPECT_EQ(p.request.kind, "command");
  ASSERT_TRUE(p.request.tool);
  EXPECT_EQ(*p.request.tool, "Bash");
  EXPECT_FALSE(p.ticket);
  ASSERT_TRUE(p.agent);
  EXPECT_EQ(p.agent->name, "Ada");
  EXPECT_EQ(json::value_from(p), in);
}

TEST(GeneratedTypes, FactKeepsUnknownMembers) {
  const json::value in =
      json::parse(R"({"name":"agent.status","version":2,"seq":9,"at":"2026-11-29T10:00:00Z",)"
                  R"("data":{"status":"idle","was":"working","new":[1]},"future":{"x":true}})");
  auto f = json::value_to<Fact>(in);
  EXPECT_EQ(f.name, FactName::agent_status);
  EXPECT_EQ(f.seq, 9);
  ASSERT_TRUE(f.unknown.contains("future"));
  EXPECT_EQ(json::value_from(f), in);
}

TEST(GeneratedTypes, NullableRequiredFieldIsWrittenAsNull) {
  ProcExitParams exit{3, std::nullopt};
  EXPECT_EQ(json::value_from(exit), json::parse(R"({"proc":3,"code":null})"));
  EXPECT_EQ(json::value_to<ProcExitParams>(json::parse(R"({"proc":3,"code":137})")).code, 137);
}

TEST(GeneratedTypes, EnumsUseTheSchemasSpelling) {
  EXPECT_EQ(to_string(FsPathRoot::agent_repo), "agentRepo");
  EXPECT_EQ(to_string(FactName::workflow_step_entered), "workflow.step_entered");
  EXPECT_EQ(json::value_from(DecisionDecision::deny), json::value("deny"));
  EXPECT_EQ(fact_name_from_string("ticket.column"), FactName::ticket_column);
  EXPECT_FALSE(fact_name_from_string("ticket.*"));
}

TEST(GeneratedTypes, ValueToThrowsWithTheField) {
  try {
    (void)json::value_to<SecretsGetParams>(json::parse(R"({"key":1})"));
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "value.key: expected a string, got an integer");
  }
}

TEST(GeneratedTypes, ReadContextGivesPathsIntoArrays) {
  FsListResult r;
  ReadContext ctx;
  EXPECT_FALSE(read_value(
      json::parse(
          R"({"entries":[{"name":"a","kind":"file","bytes":1},{"name":"b","kind":"sock","bytes":0}],"truncated":false})"),
      r, ctx));
  EXPECT_EQ(ctx.message("result"),
            "result.entries[1].kind: \"sock\" is not one of file, dir, link, other");
}

}  // namespace
}  // namespace escouade::proto
