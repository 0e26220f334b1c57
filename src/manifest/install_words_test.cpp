#include "manifest/install_words.hpp"

#include <gtest/gtest.h>

namespace escouade::manifest {
namespace {

TEST(InstallWords, HowItRunsIsTheSpecsSentenceForEachKind) {
  Manifest m;
  m.run.kind = RunKind::js;
  EXPECT_EQ(runs_as(m), "Runs inside Escouade, isolated");
  m.run.kind = RunKind::wasm;
  EXPECT_EQ(runs_as(m), "Runs inside Escouade, isolated");
  m.run.kind = RunKind::command;
  EXPECT_EQ(runs_as(m), "Runs a program on your computer, with your rights");
  m.run.kind = RunKind::none;
  EXPECT_EQ(runs_as(m), "Runs nothing: it only declares what it adds");
}

TEST(InstallWords, EachCapabilityAskedIsOneSentence) {
  Manifest m;
  EXPECT_TRUE(capabilities_asked(m).empty());
  Permissions& p = m.permissions;
  p.events = {{"agent.status", false}, {"ticket.*", true}};
  p.decide = true;
  p.secrets = {"token", "account:*"};
  p.network.hosts = {"slack.com"};
  p.network.account = true;
  p.network.local_shared = true;
  p.files = {{FsRoot::agent_repo, FileAccess::write}, {FsRoot::temp, FileAccess::read}};
  p.commands = {{"npm test *", {"npm", "test"}, true}, {"git status", {"git", "status"}, false}};
  EXPECT_EQ(capabilities_asked(m), (std::vector<std::string>{
                                       "Sees the facts agent.status, ticket.*",
                                       "Answers the agents' permission requests",
                                       "Reads its secrets token, account:*",
                                       "Connects to slack.com and its subdomains",
                                       "Connects to the server you enter for one of its accounts",
                                       "Connects to the local server of the program it starts",
                                       "Reads and writes the files of the agent's repository",
                                       "Reads the files of a temporary folder of its own",
                                       "Runs the program npm test *",
                                       "Runs the program git status",
                                   }));
}

}  // namespace
}  // namespace escouade::manifest
