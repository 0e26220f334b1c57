#include "policy/fs_roots.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "protocol/gen/errors.hpp"

namespace escouade::policy {
namespace {

using manifest::FileAccess;
using manifest::FsRoot;

constexpr auto kInvalid = proto::ErrorCode::invalid_params;
constexpr auto kRefused = proto::ErrorCode::refused;

const PluginPlaces kPlaces{"/p/plugin", "/p/temp"};
constexpr ProjectFence kPublic{false, false};

// The plugin of most tests: the agent's folder in write, its repository in read, its own folder
// in read, its temporary folder in write; agentHome not declared.
const std::map<FsRoot, FileAccess> kFiles = {{FsRoot::agent, FileAccess::write},
                                             {FsRoot::agent_repo, FileAccess::read},
                                             {FsRoot::plugin, FileAccess::read},
                                             {FsRoot::temp, FileAccess::write}};

Agent agent_k() {
  return Agent{"k", "proj", "/work/agents/k", "/work/repos/r", "/home/k", {}};
}

FsRequest at(std::optional<FsRoot> root, std::string path, bool write = false) {
  return FsRequest{"k", root, std::move(path), write};
}

FsRequest absolute(std::string path, bool write = false) {
  return FsRequest{"k", std::nullopt, std::move(path), write};
}

// Judged as the host would: the agent "k" is the only one the app set.
Result<FsTarget> judge(const FsRoots& roots, const FsRequest& request, const Agent& known,
                       ProjectFence fence = kPublic) {
  const Agent* agent = request.agent && *request.agent == known.key ? &known : nullptr;
  return roots.judge(request, agent, fence, kPlaces);
}

Result<FsTarget> judge(const FsRequest& request, ProjectFence fence = kPublic) {
  return judge(FsRoots(kFiles), request, agent_k(), fence);
}

struct RefusalCase {
  const char* name;
  FsRequest request;
  proto::ErrorCode code;
  std::string reason;
};

void PrintTo(const RefusalCase& c, std::ostream* out) {
  *out << c.name;
}

class FsRootsRefuse : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(FsRootsRefuse, WithItsCodeAndReason) {
  const RefusalCase& c = GetParam();
  const auto target = judge(c.request);
  ASSERT_FALSE(target) << "accepted: " << target->relative;
  EXPECT_EQ(target.error().code, c.code);
  EXPECT_EQ(target.error().message, c.reason);
}

const std::string kEmpty = "an empty path";
const std::string kTooLong = "a path longer than 4096 bytes";
const std::string kNul = "a NUL character in the path";
const std::string kNotUtf8 = "a path that is not UTF-8";
const std::string kPartTooLong = "a part longer than 255 bytes";
const std::string kAbsoluteWithRoot = "an absolute path with a root: give it relative to the root";
const std::string kDriveWithRoot =
    "a Windows drive with a root: give the path relative to the root";
const std::string kDrive = "a Windows drive (an absolute path begins with '/')";
const std::string kNeedsRoot = "a relative path needs a root";
const std::string kBackslash = "a backslash ('/' is the only separator between parts)";
const std::string kTilde = "a ~ is never expanded";
const std::string kClimb = "a '..' part (a path may not climb, even within its root)";
const std::string kUnderNone = "is under no root of agent \"k\" that its permissions.files declare";

INSTANTIATE_TEST_SUITE_P(
    Rules, FsRootsRefuse,
    ::testing::Values(
        // invalidParams, the text.
        RefusalCase{"EmptyWithoutRoot", absolute(""), kInvalid, kEmpty},
        RefusalCase{"EmptyWithoutAgentNorRoot", FsRequest{{}, {}, ""}, kInvalid, kEmpty},
        RefusalCase{"TooLong", at(FsRoot::agent, std::string(4097, 'a')), kInvalid, kTooLong},
        RefusalCase{"Nul", at(FsRoot::agent, std::string("a\0b", 3)), kInvalid, kNul},
        RefusalCase{"NotUtf8", at(FsRoot::agent, "a/\xFF"), kInvalid, kNotUtf8},
        RefusalCase{"Overlong", at(FsRoot::agent, "\xC0\xAF"), kInvalid, kNotUtf8},
        RefusalCase{"PartTooLong", at(FsRoot::agent, "a/" + std::string(256, 'b')), kInvalid,
                    kPartTooLong},
        // invalidParams, the shape.
        RefusalCase{"AgentWithoutAgent", FsRequest{{}, FsRoot::agent, "x"}, kInvalid,
                    "the root agent without an agent (whose agent is it?)"},
        RefusalCase{"AgentRepoWithoutAgent", FsRequest{{}, FsRoot::agent_repo, "x"}, kInvalid,
                    "the root agentRepo without an agent (whose agentRepo is it?)"},
        RefusalCase{"AgentHomeWithoutAgent", FsRequest{{}, FsRoot::agent_home, "x"}, kInvalid,
                    "the root agentHome without an agent (whose agentHome is it?)"},
        RefusalCase{"AbsoluteWithoutAgentNorRoot", FsRequest{{}, {}, "/work/agents/k/x"}, kInvalid,
                    "an absolute path without an agent (it is judged by an agent's roots)"},
        // refused, the text.
        RefusalCase{"AbsoluteWithRoot", at(FsRoot::agent, "/work/agents/k/x"), kRefused,
                    kAbsoluteWithRoot},
        RefusalCase{"SlashWithRoot", at(FsRoot::plugin, "/"), kRefused, kAbsoluteWithRoot},
        RefusalCase{"DriveWithRoot", at(FsRoot::agent, "C:x"), kRefused, kDriveWithRoot},
        RefusalCase{"DriveBackslashWithRoot", at(FsRoot::agent, "c:\\x"), kRefused, kDriveWithRoot},
        RefusalCase{"DriveWithoutRoot", absolute("C:/work/agents/k/x"), kRefused, kDrive},
        RefusalCase{"RelativeWithoutRoot", absolute("work/agents/k/x"), kRefused, kNeedsRoot},
        RefusalCase{"RelativeWithoutRootNorAgent", FsRequest{{}, {}, "x"}, kRefused, kNeedsRoot},
        RefusalCase{"DotWithoutRoot", absolute("."), kRefused, kNeedsRoot},
        RefusalCase{"Backslash", at(FsRoot::agent, "a\\b"), kRefused, kBackslash},
        RefusalCase{"BackslashAbsolute", absolute("/work/agents/k\\x"), kRefused, kBackslash},
        RefusalCase{"TildeAlone", at(FsRoot::agent, "~"), kRefused, kTilde},
        RefusalCase{"TildeStart", at(FsRoot::agent, "~/x"), kRefused, kTilde},
        RefusalCase{"TildeUser", at(FsRoot::agent, "~root/x"), kRefused, kTilde},
        RefusalCase{"TildePart", at(FsRoot::agent, "a/~/b"), kRefused, kTilde},
        RefusalCase{"TildePartAbsolute", absolute("/work/agents/k/~"), kRefused, kTilde},
        RefusalCase{"DotDotInside", at(FsRoot::agent, "a/../b"), kRefused, kClimb},
        RefusalCase{"DotDotAlone", at(FsRoot::agent, ".."), kRefused, kClimb},
        RefusalCase{"DotDotLast", at(FsRoot::agent, "a/.."), kRefused, kClimb},
        RefusalCase{"DotDotOnPlugin", at(FsRoot::plugin, "../x"), kRefused, kClimb},
        RefusalCase{"DotDotAbsolute", absolute("/work/agents/k/../k/x"), kRefused, kClimb},
        // refused, the grant.
        RefusalCase{"RootNotDeclared", at(FsRoot::agent_home, "x"), kRefused,
                    "the root agentHome is not in its permissions.files"},
        RefusalCase{"WriteOnReadRoot", at(FsRoot::agent_repo, "x", true), kRefused,
                    "agentRepo is given for reading only"},
        RefusalCase{"WriteOnPluginRead", at(FsRoot::plugin, "x", true), kRefused,
                    "plugin is given for reading only"},
        // refused, the agent.
        RefusalCase{"AgentNotSet", FsRequest{"z", FsRoot::agent, "x"}, kRefused,
                    "no agent \"z\": the app has not set it"},
        RefusalCase{"AbsoluteAgentNotSet", FsRequest{"z", {}, "/work/agents/k/x"}, kRefused,
                    "no agent \"z\": the app has not set it"},
        // refused, an absolute path.
        RefusalCase{"UnderNoRoot", absolute("/etc/passwd"), kRefused, kUnderNone},
        RefusalCase{"SiblingOfRepo", absolute("/work/repos/r2/x"), kRefused, kUnderNone},
        RefusalCase{"SiblingPrefixOfAgent", absolute("/work/agents/kk"), kRefused, kUnderNone},
        RefusalCase{"ParentOfRoot", absolute("/work/agents"), kRefused, kUnderNone},
        RefusalCase{"RootOfTheDisk", absolute("/"), kRefused, kUnderNone},
        RefusalCase{"UnderUndeclaredHome", absolute("/home/k/.ssh/id_ed25519"), kRefused,
                    kUnderNone},
        RefusalCase{"UnderThePluginFolder", absolute("/p/plugin/x"), kRefused, kUnderNone},
        RefusalCase{"WriteUnderReadRoot", absolute("/work/repos/r/x", true), kRefused,
                    "lands in agentRepo, which is given for reading only"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(FsRoots, GrantsNothingMadeFromNothing) {
  const FsRoots none;
  const Agent k = agent_k();
  for (FsRoot root :
       {FsRoot::plugin, FsRoot::agent, FsRoot::agent_repo, FsRoot::agent_home, FsRoot::temp}) {
    EXPECT_FALSE(none.declares(root));
    const auto target = judge(none, at(root, "x"), k);
    ASSERT_FALSE(target);
    EXPECT_EQ(target.error().code, kRefused);
    EXPECT_EQ(target.error().message, "the root " + std::string(manifest::to_string(root)) +
                                          " is not in its permissions.files");
  }
  const auto target = judge(none, absolute("/work/agents/k/x"), k);
  ASSERT_FALSE(target);
  EXPECT_EQ(target.error().message, kUnderNone);
}

TEST(FsRoots, DeclaresWhatPermissionsFilesName) {
  const FsRoots roots(kFiles);
  EXPECT_TRUE(roots.declares(FsRoot::agent));
  EXPECT_TRUE(roots.declares(FsRoot::agent_repo));
  EXPECT_TRUE(roots.declares(FsRoot::plugin));
  EXPECT_TRUE(roots.declares(FsRoot::temp));
  EXPECT_FALSE(roots.declares(FsRoot::agent_home));
}

TEST(FsRoots, EmptyDotAndSlashDotWithARootAreTheRootItself) {
  for (const char* path : {"", ".", "./", ".//.", "./."}) {
    const auto target = judge(at(FsRoot::agent, path));
    ASSERT_TRUE(target) << path << ": " << target.error().message;
    EXPECT_EQ(target->root, FsRoot::agent);
    EXPECT_EQ(target->relative, "") << path;
  }
}

TEST(FsRoots, DotAndEmptyPartsAreDropped) {
  for (const char* path : {"a/b/c", "a//b/c", "./a/b/c", "a/./b/c/", "a/b/c/.", "a///./b//c//"}) {
    const auto target = judge(at(FsRoot::agent, path));
    ASSERT_TRUE(target) << path << ": " << target.error().message;
    EXPECT_EQ(target->relative, "a/b/c") << path;
  }
}

TEST(FsRoots, NothingIsDecodedAndControlCharactersAreNames) {
  for (const std::string path :
       {"%2e%2e/x", "a\nb", "a\tb\x7F", "é/ü", "a~b", "x~", "...", "..a", " leading space"}) {
    const auto target = judge(at(FsRoot::agent, path));
    ASSERT_TRUE(target) << path << ": " << target.error().message;
    EXPECT_EQ(target->relative, path);
  }
}

TEST(FsRoots, APathOfTheLongestLengthAndPartIsJudged) {
  std::string path;
  while (path.size() + 256 <= 4096)
    path += std::string(255, 'a') + "/";
  path += std::string(4096 - path.size(), 'b');
  ASSERT_EQ(path.size(), 4096u);
  EXPECT_TRUE(judge(at(FsRoot::agent, path)));
}

TEST(FsRoots, PluginAndTempNeedNoAgentAndKeepLinksInThemselves) {
  const auto plugin = judge(FsRequest{{}, FsRoot::plugin, "data/words.txt"});
  ASSERT_TRUE(plugin) << plugin.error().message;
  EXPECT_EQ(plugin->root, FsRoot::plugin);
  EXPECT_EQ(plugin->relative, "data/words.txt");
  EXPECT_EQ(plugin->roots, (std::vector<RootGrant>{{FsRoot::plugin, "/p/plugin", false}}));

  const auto temp = judge(FsRequest{{}, FsRoot::temp, "out.txt", true});
  ASSERT_TRUE(temp) << temp.error().message;
  EXPECT_EQ(temp->roots, (std::vector<RootGrant>{{FsRoot::temp, "/p/temp", true}}));
}

TEST(FsRoots, AnAgentGivenWithPluginOrTempIsIgnored) {
  // Neither set by the app nor behind its fence: neither matters.
  const ProjectFence fenced{true, false};
  for (const char* key : {"k", "z"}) {
    const auto target = judge(FsRequest{key, FsRoot::temp, "x", true}, fenced);
    ASSERT_TRUE(target) << key << ": " << target.error().message;
    EXPECT_EQ(target->roots, (std::vector<RootGrant>{{FsRoot::temp, "/p/temp", true}}));
  }
}

TEST(FsRoots, AnAgentRootLinksToTheOtherDeclaredRootsOfThatAgent) {
  const auto repo = judge(at(FsRoot::agent_repo, "src/main.cpp"));
  ASSERT_TRUE(repo) << repo.error().message;
  EXPECT_EQ(repo->root, FsRoot::agent_repo);
  EXPECT_EQ(repo->relative, "src/main.cpp");
  // agentHome is set but not declared: not a place a link may lead.
  EXPECT_EQ(repo->roots, (std::vector<RootGrant>{{FsRoot::agent_repo, "/work/repos/r", false},
                                                 {FsRoot::agent, "/work/agents/k", true}}));

  const auto agent = judge(at(FsRoot::agent, "notes.md", true));
  ASSERT_TRUE(agent) << agent.error().message;
  EXPECT_EQ(agent->roots, (std::vector<RootGrant>{{FsRoot::agent, "/work/agents/k", true},
                                                  {FsRoot::agent_repo, "/work/repos/r", false}}));
}

TEST(FsRoots, TheStartRootComesFirstThenTheOthersInOrder) {
  const FsRoots all({{FsRoot::agent, FileAccess::read},
                     {FsRoot::agent_repo, FileAccess::read},
                     {FsRoot::agent_home, FileAccess::write}});
  const auto home = judge(all, at(FsRoot::agent_home, ".config/x"), agent_k());
  ASSERT_TRUE(home) << home.error().message;
  EXPECT_EQ(home->roots, (std::vector<RootGrant>{{FsRoot::agent_home, "/home/k", true},
                                                 {FsRoot::agent, "/work/agents/k", false},
                                                 {FsRoot::agent_repo, "/work/repos/r", false}}));
}

TEST(FsRoots, ARootTheAgentHasNotIsRefusedAndNotLinked) {
  const FsRoots all({{FsRoot::agent, FileAccess::read}, {FsRoot::agent_home, FileAccess::read}});
  Agent no_home = agent_k();
  no_home.agent_home.reset();

  const auto home = judge(all, at(FsRoot::agent_home, "x"), no_home);
  ASSERT_FALSE(home);
  EXPECT_EQ(home.error().code, kRefused);
  EXPECT_EQ(home.error().message, "agent \"k\" has no agentHome");

  const auto agent = judge(all, at(FsRoot::agent, "x"), no_home);
  ASSERT_TRUE(agent) << agent.error().message;
  EXPECT_EQ(agent->roots, (std::vector<RootGrant>{{FsRoot::agent, "/work/agents/k", false}}));
}

TEST(FsRoots, AnAbsolutePathStartsAtTheRootThatHoldsIt) {
  struct Case {
    const char* path;
    FsRoot root;
    const char* relative;
  };
  for (const Case& c :
       {Case{"/work/agents/k/src/a.c", FsRoot::agent, "src/a.c"},
        Case{"/work/agents/k", FsRoot::agent, ""}, Case{"/work/agents/k/", FsRoot::agent, ""},
        Case{"//work//agents/./k/x/", FsRoot::agent, "x"},
        Case{"/work/repos/r/README", FsRoot::agent_repo, "README"}}) {
    const auto target = judge(absolute(c.path));
    ASSERT_TRUE(target) << c.path << ": " << target.error().message;
    EXPECT_EQ(target->root, c.root) << c.path;
    EXPECT_EQ(target->relative, c.relative) << c.path;
    EXPECT_EQ(target->roots.front().root, c.root) << c.path;
    EXPECT_EQ(target->roots.size(), 2u) << c.path;
  }
}

// The repository inside the agent's folder, as a worktree often is.
Agent nested_agent() {
  return Agent{"k", "proj", "/w", "/w/repo", std::nullopt, {}};
}

const FsRoots kNested({{FsRoot::agent, FileAccess::write}, {FsRoot::agent_repo, FileAccess::read}});

TEST(FsRoots, TheDeepestRootHoldingAnAbsolutePathWins) {
  const auto in_repo = judge(kNested, absolute("/w/repo/src/x"), nested_agent());
  ASSERT_TRUE(in_repo) << in_repo.error().message;
  EXPECT_EQ(in_repo->root, FsRoot::agent_repo);
  EXPECT_EQ(in_repo->relative, "src/x");

  const auto beside = judge(kNested, absolute("/w/repo2/x"), nested_agent());
  ASSERT_TRUE(beside) << beside.error().message;
  EXPECT_EQ(beside->root, FsRoot::agent);
  EXPECT_EQ(beside->relative, "repo2/x");
}

TEST(FsRoots, AWriteGoesByTheDeepestDeclaredRootWhateverTheSpelling) {
  const Agent k = nested_agent();
  const std::string read_only = "lands in agentRepo, which is given for reading only";
  for (const FsRequest& r :
       {absolute("/w/repo/x", true), absolute("/w/repo", true), at(FsRoot::agent, "repo/x", true),
        at(FsRoot::agent, "./repo//x", true), at(FsRoot::agent, "repo", true)}) {
    const auto target = judge(kNested, r, k);
    ASSERT_FALSE(target) << r.path << " written";
    EXPECT_EQ(target.error().code, kRefused);
    EXPECT_EQ(target.error().message, read_only) << r.path;
  }
  for (const FsRequest& r : {absolute("/w/repo2/x", true), at(FsRoot::agent, "repo2/x", true),
                             at(FsRoot::agent, "x", true), absolute("/w/x", true)}) {
    const auto target = judge(kNested, r, k);
    ASSERT_TRUE(target) << r.path << ": " << target.error().message;
    EXPECT_EQ(target->root, FsRoot::agent);
  }
  // Reading is not concerned.
  EXPECT_TRUE(judge(kNested, at(FsRoot::agent, "repo/x"), k));
}

TEST(FsRoots, OfTwoRootsInOneFolderAWritableOneIsTheStart) {
  const FsRoots roots({{FsRoot::agent, FileAccess::read}, {FsRoot::agent_repo, FileAccess::write}});
  const Agent same{"k", "proj", "/w", "/w", std::nullopt, {}};
  const auto target = judge(roots, absolute("/w/x", true), same);
  ASSERT_TRUE(target) << target.error().message;
  EXPECT_EQ(target->root, FsRoot::agent_repo);
  EXPECT_EQ(target->roots.front().root, FsRoot::agent_repo);
}

TEST(FsRoots, TheFenceRefusesAPrivateProjectWhereThePluginIsNotOn) {
  const std::string fenced =
      "agent \"k\" works in a private project (« Projet privé ») where the plugin is not on";
  for (const FsRequest& r : {at(FsRoot::agent, "x"), at(FsRoot::agent_repo, "x", false),
                             absolute("/work/agents/k/x"), absolute("/etc/passwd")}) {
    const auto target = judge(r, ProjectFence{true, false});
    ASSERT_FALSE(target) << r.path;
    EXPECT_EQ(target.error().code, kRefused);
    EXPECT_EQ(target.error().message, fenced) << r.path;
  }
  // The default fence is that of an unknown project: private.
  const auto unknown = judge(at(FsRoot::agent, "x"), ProjectFence{});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, fenced);
  EXPECT_NE(unknown.error().message.find("« Projet privé »"), std::string::npos);
}

TEST(FsRoots, TheFenceOpensForAPluginOnOrAPublicProject) {
  for (const ProjectFence fence :
       {ProjectFence{true, true}, ProjectFence{false, false}, ProjectFence{false, true}}) {
    EXPECT_TRUE(judge(at(FsRoot::agent, "x"), fence));
    EXPECT_TRUE(judge(absolute("/work/repos/r/x"), fence));
  }
}

TEST(FsRoots, TheFenceDoesNotGuardThePluginsOwnRoots) {
  EXPECT_TRUE(judge(FsRequest{{}, FsRoot::plugin, "x"}, ProjectFence{true, false}));
  EXPECT_TRUE(judge(FsRequest{{}, FsRoot::temp, "x"}, ProjectFence{true, false}));
}

}  // namespace
}  // namespace escouade::policy
