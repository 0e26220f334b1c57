#include "policy/decisions.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace escouade::policy {
namespace {

using K = Vote::Kind;
using proto::DecisionDecision;

Vote vote(const char* id, K kind, std::optional<std::string> message = std::nullopt) {
  Vote v;
  v.id = id;
  v.kind = kind;
  v.message = std::move(message);
  return v;
}

TEST(Decision, NobodyTakingPartLeavesItToTheUser) {
  const auto v = combine({});
  EXPECT_EQ(v.decision, DecisionDecision::ask);
  EXPECT_TRUE(v.by.empty());
}

TEST(Decision, ARefusalWinsOverEverything) {
  const auto v = combine({vote("a", K::allow), vote("b", K::timeout), vote("c", K::ask),
                          vote("d", K::deny, "no pushes to main"), vote("e", K::error)});
  EXPECT_EQ(v.decision, DecisionDecision::deny);
  ASSERT_TRUE(v.message);
  EXPECT_EQ(*v.message, "no pushes to main");
  ASSERT_EQ(v.by.size(), 5u);
  EXPECT_EQ(v.by[3].id, "d");
}

TEST(Decision, TheFirstRefusalWithAMessageGivesIt) {
  const auto v =
      combine({vote("a", K::deny), vote("b", K::deny, "second"), vote("c", K::deny, "third")});
  EXPECT_EQ(v.decision, DecisionDecision::deny);
  EXPECT_EQ(v.message.value_or(""), "second");
}

TEST(Decision, AllowedOnlyWhenEveryoneAllows) {
  EXPECT_EQ(combine({vote("a", K::allow), vote("b", K::allow)}).decision, DecisionDecision::allow);
  EXPECT_EQ(combine({vote("a", K::allow), vote("b", K::ask)}).decision, DecisionDecision::ask);
  EXPECT_EQ(combine({vote("a", K::allow), vote("b", K::timeout)}).decision, DecisionDecision::ask);
  EXPECT_EQ(combine({vote("a", K::allow), vote("b", K::error)}).decision, DecisionDecision::ask);
}

TEST(Decision, AnAllowanceCarriesNoMessageToTheAgent) {
  const auto v = combine({vote("a", K::allow, "reads are fine")});
  EXPECT_EQ(v.decision, DecisionDecision::allow);
  EXPECT_FALSE(v.message);
  EXPECT_EQ(v.by[0].message.value_or(""), "reads are fine");
}

TEST(Decision, EachPluginKeepsItsPartInLoadOrder) {
  Vote late = vote("dev.late", K::timeout);
  Vote broken = vote("dev.broken", K::error);
  broken.reason = "it is stopped: stopped after 4 crashes within 5 minutes";
  const auto v = combine({vote("dev.guard", K::deny, "rm -rf is refused"), late, broken});
  EXPECT_EQ(v.decision, DecisionDecision::deny);
  EXPECT_EQ(v.message.value_or(""), "rm -rf is refused");
  ASSERT_EQ(v.by.size(), 3u);
  EXPECT_EQ(v.by[0].id, "dev.guard");
  EXPECT_EQ(to_string(v.by[1].kind), "timeout");
  EXPECT_EQ(to_string(v.by[2].kind), "error");
  EXPECT_EQ(v.by[2].reason, "it is stopped: stopped after 4 crashes within 5 minutes");
}

}  // namespace
}  // namespace escouade::policy
