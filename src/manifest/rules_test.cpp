#include "manifest/rules.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "manifest/manifest.hpp"

namespace escouade::manifest {
namespace {

TEST(EventMatches, ExactPrefixAndAll) {
  EXPECT_TRUE(event_matches("ticket.column", "ticket.column"));
  EXPECT_FALSE(event_matches("ticket.column", "ticket.created"));
  EXPECT_TRUE(event_matches("ticket.*", "ticket.column"));
  EXPECT_TRUE(event_matches("workflow.*", "workflow.step_entered"));
  EXPECT_TRUE(event_matches("workflow.step.*", "workflow.step.a"));
  EXPECT_FALSE(event_matches("ticket.*", "ticket"));
  EXPECT_FALSE(event_matches("ticket.*", "ticket."));
  EXPECT_FALSE(event_matches("ticket.*", "tickets.column"));
  EXPECT_FALSE(event_matches("tick*", "ticket.column"));
  EXPECT_TRUE(event_matches("*", "agent.status"));
  EXPECT_TRUE(event_matches("*", ""));
  EXPECT_FALSE(event_matches("", "agent.status"));
  EXPECT_FALSE(event_matches(".*", "agent.status"));
}

TEST(EventSelector, MatchesLikeEventMatches) {
  const EventSelector all{"ticket.*", true};
  EXPECT_TRUE(all.matches("ticket.merged"));
  EXPECT_FALSE(all.matches("agent.status"));
}

TEST(FactNames, AreTheProtocolsEnum) {
  const auto& names = fact_names();
  ASSERT_EQ(names.size(), 39u);
  EXPECT_EQ(names.front(), "agent.created");
  EXPECT_EQ(names.back(), "workflow.changed");
  EXPECT_NE(std::find(names.begin(), names.end(), "ticket.column"), names.end());
}

TEST(Rules, AcceptWhatTheDesignsExampleHolds) {
  EXPECT_EQ(id_problem("dev.example.guard"), std::nullopt);
  EXPECT_EQ(id_problem("io.x-y.z9"), std::nullopt);
  EXPECT_EQ(version_problem("1.2.0"), std::nullopt);
  EXPECT_EQ(version_problem("0.0.0"), std::nullopt);
  EXPECT_EQ(version_problem("1.0.0-alpha.1+sha.5114f85"), std::nullopt);
  EXPECT_EQ(version_problem("1.0.0-0.3.7"), std::nullopt);
  EXPECT_EQ(version_problem("1.0.0-x-y-z.--"), std::nullopt);
  EXPECT_EQ(version_problem("1.0.0+001"), std::nullopt);  // build identifiers may lead with 0
  EXPECT_EQ(activation_problem("event:agent.status"), std::nullopt);
  EXPECT_EQ(activation_problem("event:ticket.*"), std::nullopt);
  EXPECT_EQ(activation_problem("event:*"), std::nullopt);
  EXPECT_EQ(event_problem("workflow.step_entered"), std::nullopt);
  EXPECT_EQ(secret_key_problem("token"), std::nullopt);
  EXPECT_EQ(secret_key_problem("account:*"), std::nullopt);
  EXPECT_EQ(secret_key_problem("*"), std::nullopt);
  EXPECT_EQ(network_problem("slack.com"), std::nullopt);
  EXPECT_EQ(network_problem("api.eu-1.example.org"), std::nullopt);
  EXPECT_EQ(network_problem("xn--80ak6aa92e.com"), std::nullopt);
  EXPECT_EQ(network_problem("{account}"), std::nullopt);
  EXPECT_EQ(network_problem("local:shared"), std::nullopt);
  EXPECT_EQ(command_grant_problem("git status"), std::nullopt);
  EXPECT_EQ(command_grant_problem("npm test *"), std::nullopt);
  EXPECT_EQ(command_grant_problem("git log --format=%h -n 5"), std::nullopt);
  EXPECT_EQ(command_grant_problem("cat data/words.txt"), std::nullopt);  // a path as an argument
  EXPECT_EQ(command_grant_problem("git log --oneline"), std::nullopt);
  // After an option, a star is the shell's glob of every file, not the spec's wildcard.
  EXPECT_EQ(command_grant_problem("rm -rf *"), "a command may not be a path or use a shell");
  EXPECT_EQ(setting_name_problem("channel"), std::nullopt);
  EXPECT_EQ(setting_name_problem("max-items_2"), std::nullopt);
  EXPECT_EQ(relative_path_problem("dist/plugin.mjs"), std::nullopt);
}

TEST(Rules, RefuseWithAReason) {
  EXPECT_EQ(id_problem("dev..guard"), "an id is reverse-DNS in lower case, like dev.example.guard");
  EXPECT_EQ(id_problem("dev.guard-"), "an id is reverse-DNS in lower case, like dev.example.guard");
  EXPECT_EQ(id_problem("dev.gu_ard"), "an id is reverse-DNS in lower case, like dev.example.guard");
  EXPECT_EQ(id_problem(std::string(64, 'a') + "." + std::string(64, 'b')),
            "an id is at most 128 characters");
  EXPECT_EQ(version_problem("1.2.3.4"), "a version is semver, like 1.2.0");
  EXPECT_EQ(version_problem("v1.2.3"), "a version is semver, like 1.2.0");
  EXPECT_EQ(version_problem("1.2.3-01"), "a version is semver, like 1.2.0");
  EXPECT_EQ(version_problem("1.2.3+"), "a version is semver, like 1.2.0");
  EXPECT_EQ(version_problem("1.2.3-"), "a version is semver, like 1.2.0");
  EXPECT_EQ(event_problem("*.column"),
            "an event is a fact name or a pattern, like ticket.column or ticket.*");
  EXPECT_EQ(event_problem("ticket*"),
            "an event is a fact name or a pattern, like ticket.column or ticket.*");
  EXPECT_EQ(event_problem("agent.status.*"), "no fact matches this pattern");
  EXPECT_EQ(event_problem("launch.gone"),
            "no such fact; the facts launch.* are launch.started, launch.ready, launch.stopped");
  EXPECT_EQ(network_problem("1.2.3"), "an IP address; name its host, like slack.com");
  EXPECT_EQ(network_problem("[::1]"), "an IP address; name its host, like slack.com");
  EXPECT_EQ(network_problem("slack.com."),
            "a host name is labels of a-z, 0-9 and '-' joined by dots, like slack.com");
  EXPECT_EQ(network_problem("example.3com"),
            "the last label of a host name starts with a letter, like slack.com");
  EXPECT_EQ(network_problem("{acount}"), "the special entries are {account} and local:shared");
  EXPECT_EQ(command_grant_problem(""), "a command may not be empty");
  EXPECT_EQ(command_grant_problem(" git status"),
            "the words of a command are separated by single spaces");
  EXPECT_EQ(command_grant_problem("git\tstatus"),
            "the words of a command are separated by single spaces");
  EXPECT_EQ(command_grant_problem("*"), "* stands alone as the last word, like npm test *");
  EXPECT_EQ(command_grant_problem("git status\n"), "a command may not be a path or use a shell");
  EXPECT_EQ(command_grant_problem("echo 'hi'"), "a command may not be a path or use a shell");
  EXPECT_EQ(secret_key_problem("tab\tkey"), "a key has no whitespace nor control character");
  EXPECT_EQ(setting_name_problem("2fast"),
            "a setting's name is letters, digits, '_' and '-', starting with a letter, at most 64");
  EXPECT_EQ(relative_path_problem("dist\\plugin.mjs"), "use '/' between folders, not '\\'");
}

}  // namespace
}  // namespace escouade::manifest
