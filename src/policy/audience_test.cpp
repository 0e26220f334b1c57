#include "policy/audience.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "policy/grants.hpp"

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

// --- Grants: the same rules, asked of what one manifest grants, built once.

// Hears agent.status and ticket.*, decides, may ask for token and account:*.
manifest::Manifest granting() {
  manifest::Manifest m;
  m.id = "dev.test.grants";
  m.permissions.events = {selector("agent.status"), selector("ticket.*")};
  m.permissions.decide = true;
  m.permissions.secrets = {"token", "account:*"};
  m.activation = {selector("ticket.column")};
  return m;
}

// Made from nothing, it grants nothing, wherever the plugin is on.
TEST(Grants, NothingGrantsNothing) {
  const Grants none;
  const OnFor everywhere{true, true};
  for (const char* fact : {"agent.status", "ticket.column", "turn.ended"}) {
    const FactAudience a = none.fact_audience(everywhere, fact, true);
    EXPECT_FALSE(a.hears) << fact;
    EXPECT_FALSE(a.activates) << fact;
  }
  EXPECT_FALSE(none.asked_to_decide(true));
  ASSERT_TRUE(none.secret_refusal("token"));
  EXPECT_EQ(*none.secret_refusal("token"), "not a key of permissions.secrets, which names none");
}

// Made from a manifest, its verdicts are the rules' on that manifest.
TEST(Grants, ItsVerdictsAreTheRulesOfItsManifest) {
  const manifest::Manifest m = granting();
  const Grants grants(m);
  for (const OnFor on : {OnFor{false, false}, OnFor{true, false}, OnFor{true, true}}) {
    for (const char* fact : {"agent.status", "ticket.column", "ticket.merged", "turn.ended"}) {
      for (const bool names_project : {false, true}) {
        const FactAudience want = fact_audience(m, on, fact, names_project);
        const FactAudience got = grants.fact_audience(on, fact, names_project);
        EXPECT_EQ(got.hears, want.hears) << fact;
        EXPECT_EQ(got.activates, want.activates) << fact;
      }
    }
  }
  EXPECT_TRUE(grants.asked_to_decide(true));
  EXPECT_FALSE(grants.asked_to_decide(false));
  EXPECT_FALSE(grants.secret_refusal("token"));
  EXPECT_FALSE(grants.secret_refusal("account:work"));
  EXPECT_TRUE(grants.secret_refusal("account:"));
  EXPECT_TRUE(grants.secret_refusal("plugin:dev.test.grants:token"));
}

// Built once: the manifest it came from may change or go, its verdicts do not.
TEST(Grants, ItOutlivesAndIgnoresItsManifest) {
  auto m = std::make_unique<manifest::Manifest>(granting());
  const Grants grants(*m);
  m->permissions.secrets.clear();
  m->permissions.decide = false;
  m.reset();
  EXPECT_FALSE(grants.secret_refusal("token"));
  EXPECT_TRUE(grants.asked_to_decide(true));
}

}  // namespace
}  // namespace escouade::policy
