#include "policy/grants.hpp"

#include <gtest/gtest.h>

namespace escouade::policy {
namespace {

manifest::EventSelector selector(std::string text) {
  const bool pattern = !text.empty() && text.back() == '*';
  return manifest::EventSelector{std::move(text), pattern};
}

manifest::Manifest plugin() {
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
  const manifest::Manifest m = plugin();
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
  auto m = std::make_unique<manifest::Manifest>(plugin());
  const Grants grants(*m);
  m->permissions.secrets.clear();
  m->permissions.decide = false;
  m.reset();
  EXPECT_FALSE(grants.secret_refusal("token"));
  EXPECT_TRUE(grants.asked_to_decide(true));
}

}  // namespace
}  // namespace escouade::policy
