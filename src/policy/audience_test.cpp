#include "policy/audience.hpp"

#include <gtest/gtest.h>

namespace escouade::policy {
namespace {

// As the manifest reads them: a pattern keeps its star.
manifest::EventSelector selector(std::string text) {
  const bool pattern = !text.empty() && text.back() == '*';
  return manifest::EventSelector{std::move(text), pattern};
}

// Hears agent.status and every ticket fact; started by ticket.column only.
manifest::Manifest plugin() {
  manifest::Manifest m;
  m.id = "dev.test.audience";
  m.permissions.events = {selector("agent.status"), selector("ticket.*")};
  m.activation = {selector("ticket.column")};
  return m;
}

TEST(FactAudience, APluginOnNowhereGetsNothing) {
  const FactAudience a = fact_audience(plugin(), OnFor{false, false}, "agent.status", false);
  EXPECT_FALSE(a.hears);
  EXPECT_FALSE(a.activates);
}

TEST(FactAudience, AFactOfAProjectReachesOnlyThePluginsOnForIt) {
  const FactAudience other = fact_audience(plugin(), OnFor{true, false}, "ticket.column", true);
  EXPECT_FALSE(other.hears);
  EXPECT_FALSE(other.activates);
  const FactAudience own = fact_audience(plugin(), OnFor{true, true}, "ticket.column", true);
  EXPECT_TRUE(own.hears);
  EXPECT_TRUE(own.activates);
}

TEST(FactAudience, AFactOfNoProjectReachesThePluginsOnAnywhere) {
  const FactAudience a = fact_audience(plugin(), OnFor{true, false}, "agent.status", false);
  EXPECT_TRUE(a.hears);
  EXPECT_FALSE(a.activates);
}

TEST(FactAudience, OnlyTheFactsOfPermissionsEventsAreHeard) {
  const FactAudience a = fact_audience(plugin(), OnFor{true, true}, "agent.created", true);
  EXPECT_FALSE(a.hears);
  EXPECT_FALSE(a.activates);
  EXPECT_TRUE(fact_audience(plugin(), OnFor{true, true}, "ticket.merged", true).hears);
}

TEST(FactAudience, AnActivationAloneStartsItButGivesNoFact) {
  manifest::Manifest m = plugin();
  m.permissions.events = {selector("agent.status")};
  const FactAudience a = fact_audience(m, OnFor{true, true}, "ticket.column", true);
  EXPECT_FALSE(a.hears);
  EXPECT_TRUE(a.activates);
}

TEST(AskedToDecide, OnlyThePluginsThatDecideAndAreOnForTheRequestsProject) {
  manifest::Manifest m = plugin();
  EXPECT_FALSE(asked_to_decide(m, true));  // it does not declare permissions.decide
  m.permissions.decide = true;
  EXPECT_TRUE(asked_to_decide(m, true));
  EXPECT_FALSE(asked_to_decide(m, false));
}

}  // namespace
}  // namespace escouade::policy
