// One TypeScript plugin written with @escouade-dev/plugin (tests/fixtures/ts/tour), bundled once,
// through the whole host both ways it runs: inside the sandbox ("run": {"js": ...}) and as a
// process under Node ("run": {"command": ["node", ...]}, the same bundle, which
// cmake/EscouadeTypeScript.cmake puts in <folder>-process). Each test loads one of the two folders
// (the same id) in a host of its own and expects the same: its start, facts, decisions, secrets,
// settings, its own files, files under an agent's roots, programs, fetch. Only where the two
// differ by design (the network: the host's inside the sandbox, Node's own in a process) does
// each side get its own expectation, with the reason beside it.
//
// In the network lab (tests/support/net_lab.hpp): chat.example.com is a TLS server signed by a
// test CA, which the host is given as its network.ca_file and Node as NODE_EXTRA_CA_CERTS.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"
#include "host/host.hpp"
#include "host_answer.hpp"
#include "platform/keychain.hpp"
#include "platform/process.hpp"
#include "runtime/process_program.hpp"
#include "sandbox/sandbox_program.hpp"
#include "support/test_ca.hpp"
#include "support/test_web_server.hpp"

namespace escouade::testing {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;

// The bundled tour: <kTour> runs it in the sandbox, <kTour>-process under Node.
const fs::path kTour = ESCOUADE_TS_TOUR;
const std::string kId = "dev.escouade.ts-tour";
const std::string kToken = "tour-token-4bd1e07c";
// Node's folder first: the host looks run.command's "node" up there, and the plugin's process
// gets it as its PATH; git and echo are in /usr/bin.
const std::string kPath = fs::path(ESCOUADE_NODE).parent_path().string() + ":/usr/bin:/bin";

// Which of the two folders a test loads.
enum class RunKind { sandbox, process };

const char* name_of(RunKind k) {
  return k == RunKind::sandbox ? "sandbox" : "process";
}
// What gtest and ctest call each instance: .../sandbox, .../process.
void PrintTo(RunKind k, std::ostream* os) {
  *os << name_of(k);
}
std::string test_name(const ::testing::TestParamInfo<RunKind>& info) {
  return name_of(info.param);
}

// Runs a program to its end (git init): the test's own setup, not the plugin's. No shell.
void run(const std::vector<std::string>& argv, const fs::path& cwd) {
  platform::SpawnRequest req;
  req.argv = argv;
  req.cwd = cwd;
  req.env = {"PATH=/usr/bin:/bin", "HOME=" + cwd.string()};
  auto s = platform::spawn(req);
  ASSERT_TRUE(s) << s.error().message;
  platform::close_fds(*s);
  auto status = platform::wait_exit(*s);
  ASSERT_TRUE(status && status->code == 0) << argv[0] << " " << argv[1];
}

// The file's modification time as fs/stat gives it: milliseconds since 1970.
std::int64_t modified_ms(const fs::path& p) {
  struct ::stat st {};
  if (::stat(p.c_str(), &st) != 0) return -1;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000 +
         static_cast<std::int64_t>(st.st_mtim.tv_nsec) / 1'000'000;
}

class TsSdkHost : public ::testing::TestWithParam<RunKind> {
 protected:
  TsSdkHost()
      : chat_("203.0.113.10", 443, ca_.issue({"chat.example.com"})),
        processes_(io_.get_executor(), context_),
        sandboxed_(io_.get_executor(), context_, sandbox::SandboxOptions::installed()) {
    const fs::path ca = data_.path() / "ca.pem";
    std::ofstream(ca) << ca_.pem();
    programs_.route(runtime::RunKind::command, &processes_);
    programs_.route(runtime::RunKind::js, &sandboxed_);
    host::HostConfig config;
    config.data_dir = data_.path();
    // What a process plugin starts with: Node's own fetch trusts the test CA as the host does.
    config.base_env = {"PATH=" + kPath, "NODE_EXTRA_CA_CERTS=" + ca.string()};
    config.check_environment.search_path = kPath;
    config.network.ca_file = ca;
    config.keychain = keychain_.get();
    config.processes = &context_;
    host_ = std::make_unique<host::Host>(io_.get_executor(), config, programs_,
                                         [](const supervisor::Status&) {});

    // Agent a1 works in its repository (a real git repository, nothing committed), in p1, whose
    // .escouade.yml gives the tour a channel of its own.
    for (const char* d : {"repo", "home", "project"})
      fs::create_directories(tree_.path() / d);
    root_ = fs::canonical(tree_.path());
    run({"git", "init", "-q"}, root_ / "repo");
    std::ofstream(root_ / "project" / ".escouade.yml") << "plugins:\n"
                                                          "  dev.escouade.ts-tour:\n"
                                                          "    channel: \"#tour\"\n";
    EXPECT_TRUE(host_->set_agent(policy::Agent{
        "a1",
        "p1",
        root_ / "repo",
        root_ / "repo",
        root_ / "home",
        {"PATH=/usr/bin:/bin", "HOME=" + (root_ / "home").string(), "LANG=C.UTF-8"}}));

    const fs::path folder =
        GetParam() == RunKind::sandbox ? kTour : fs::path(kTour.string() + "-process");
    auto loaded = host_->load(folder);
    EXPECT_TRUE(loaded) << loaded.error().message;
    if (loaded) {
      EXPECT_EQ(loaded->id, kId);
      EXPECT_EQ(loaded->run, GetParam() == RunKind::sandbox ? "js" : "command");
    }
    EXPECT_TRUE(host_->enable(kId, host::Project{"p1", "Project One", false, root_ / "project"}));
    EXPECT_TRUE(host_->set_settings(kId, json::object{{"channel", "#ops"}}));
    std::optional<Result<void>> kept;
    host_->set_secret(kId, "token", kToken, [&](Result<void> r) { kept = r; });
    run_until([&] { return kept.has_value(); });
    EXPECT_TRUE(*kept) << kept->error().message;
  }
  ~TsSdkHost() override {
    bool closed = false;
    host_->shutdown([&] { closed = true; });
    run_until([&] { return closed; });
  }

  // Publishes a fact of project p1; the plugins it went to.
  std::vector<std::string> publish(std::string_view name, int seq) {
    auto delivered = host_->publish(json::value_to<proto::Fact>(json::parse(
        R"({"name":")" + std::string(name) + R"(","version":1,"seq":)" + std::to_string(seq) +
        R"(,"at":"2026-12-05T10:00:00Z","project":{"id":"p1","name":"Project One","private":false},)"
        R"("agent":{"id":"a1","name":"Ana"},"ticket":{"id":"t7","key":"T-7","title":"Fix login"},)"
        R"("data":{"status":"working","from":"review","to":"done"}})")));
    EXPECT_TRUE(delivered) << delivered.error().message;
    return delivered ? *delivered : std::vector<std::string>{};
  }
  // Started by its activation, once its start handler has read rules.json.
  void start() {
    EXPECT_EQ(publish("agent.status", 1), std::vector<std::string>{kId});
    run_until([&] { return journal_has("rules.json read: 2 words refused (rm -rf, sudo)"); });
  }
  policy::Verdict decide(std::string id, std::string_view command) {
    std::optional<Result<policy::Verdict>> out;
    host_->decide(command_request(std::move(id), command),
                  [&](Result<policy::Verdict> r) { out = std::move(r); });
    run_until([&] { return out.has_value(); });
    EXPECT_TRUE(*out) << out->error().message;
    return *out ? **out : policy::Verdict{};
  }
  json::value call(const std::string& method, json::value params) {
    std::optional<Result<json::value>> out;
    host_->call(kId, *rpc::Outgoing::request_value(method, params),
                std::chrono::milliseconds(30000),
                [&](Result<host::Answer> r) { keep_answer(out, std::move(r)); });
    run_until([&] { return out.has_value(); });
    EXPECT_TRUE(out && *out) << (out ? out->error().message : "no answer");
    return out && *out ? **out : json::value();
  }
  std::string journal() {
    std::string all;
    for (const auto& l : *host_->journal(kId, 1000))
      all += l + "\n";
    return all;
  }
  bool journal_has(std::string_view text) { return journal().find(text) != std::string::npos; }
  template <class P>
  void run_until(P done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // a net
    while (!done() && std::chrono::steady_clock::now() < limit) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(done());
  }

  TempDir data_{"escouade-ts-host"};
  TempDir tree_{"escouade-ts-tree"};
  fs::path root_;
  // A plain file store standing for the keychain (platform/keychain_file.cpp), as net_sandbox_test.
  std::unique_ptr<platform::Keychain> keychain_ = platform::make_file_keychain(data_.path() / "k");
  test::TestCa ca_;
  test::TestWebServer chat_;
  asio::io_context io_;
  runtime::ProcessContext context_;
  runtime::ProcessProgramFactory processes_;
  sandbox::SandboxProgramFactory sandboxed_;
  runtime::ProgramRouter programs_;
  std::unique_ptr<host::Host> host_;
};

// Its start reads rules.json at its root with node:fs, and the decisions follow those rules: a
// refusal with its words, else the choice left to the user, each written in its journal.
TEST_P(TsSdkHost, ItsStartReadsRulesJsonAndItsDecisionsFollowThem) {
  start();
  const auto refused = decide("r-1", "sudo apt-get install curl");
  EXPECT_EQ(refused.decision, proto::DecisionDecision::deny);
  EXPECT_EQ(refused.message, "\"sudo\" is refused by the tour's rules.json");
  ASSERT_EQ(refused.by.size(), 1u);
  EXPECT_EQ(refused.by[0].id, kId);
  EXPECT_EQ(refused.by[0].kind, policy::Vote::Kind::deny);

  const auto asked = decide("r-2", "ls -la");
  EXPECT_EQ(asked.decision, proto::DecisionDecision::ask);
  ASSERT_EQ(asked.by.size(), 1u);
  EXPECT_EQ(asked.by[0].kind, policy::Vote::Kind::ask);
  EXPECT_EQ(asked.by[0].message, "no rule of the tour covers: ls -la");

  // How it was started is the one line of this test that differs: the helper that runs the
  // bundle, or Node's process.
  if (GetParam() == RunKind::sandbox) {
    EXPECT_TRUE(journal_has("started: dist/plugin.mjs in the sandbox")) << journal();
  } else {
    EXPECT_TRUE(journal_has("started: pid ")) << journal();
    EXPECT_TRUE(journal_has(", node dist/plugin.mjs")) << journal();
  }
  EXPECT_TRUE(journal_has(
      "permissions/decide \"r-1\" (command): deny: \"sudo\" is refused by the tour's rules.json"))
      << journal();
  EXPECT_TRUE(
      journal_has("permissions/decide \"r-2\" (command): ask: no rule of the tour covers: "
                  "ls -la"))
      << journal();
}

// tour/run, sent through the host's call API, does everything the SDK gives in order and
// answers all of it in one object: the same object both ways, field by field, but for where
// the network is.
TEST_P(TsSdkHost, TourRunAnswersTheSameBothWays) {
  start();
  // Facts of permissions.events reach it; one it does not name does not.
  EXPECT_EQ(publish("ticket.column", 2), std::vector<std::string>{kId});
  EXPECT_TRUE(publish("ticket.created", 3).empty());
  run_until([&] { return journal_has("fact ticket.column p1"); });

  const json::value r = call("tour/run", json::object{{"agent", "a1"}, {"project", "p1"}});
  ASSERT_TRUE(r.is_object()) << json::serialize(r);
  const fs::path note = root_ / "repo" / "notes" / "a.txt";
  const json::object expected{
      {"pluginId", kId},
      // The host masks a secret it gave the plugin in whatever the plugin answers the app.
      {"secret", "\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2\xE2\x80\xA2"},
      {"secretLength", static_cast<std::int64_t>(kToken.size())},
      // The project's .escouade.yml over the user's value; without a project, the user's.
      {"settings", {{"channel", "#tour"}}},
      {"userSettings", {{"channel", "#ops"}}},
      {"words", json::array{"alpha", "bravo", "charlie"}},
      {"fs",
       {{"written", {{"path", note.string()}, {"bytes", 20}}},
        {"readBack", "written by the tour\n"},
        {"stat", {{"kind", "file"}, {"bytes", 20}, {"modified", modified_ms(note)}}},
        {"list",
         {{"entries",
           json::array{json::object{{"name", "a.txt"}, {"kind", "file"}, {"bytes", 20}}}},
          {"truncated", false}}},
        {"climb",
         {{"code", -32003},
          {"message",
           "fs/read agentRepo \"../x\" (agent \"a1\"): refused: a '..' part (a path may not "
           "climb, even within its root)"}}}}},
      {"proc",
       {{"echo", {{"code", 0}, {"stdout", "hi there\n"}, {"stderr", ""}}},
        // The agent's worktree is its repository, where notes/ was just written.
        {"git", {{"code", 0}, {"stdout", "?? notes/\n"}}},
        {"rm",
         {{"code", -32003},
          {"message",
           "\"rm -rf /\" is not one of its permissions.commands (\"echo *\", \"git status "
           "--porcelain\")"}}}}},
      // chat.example.com has no /api/hello: the test server's 404, the same both ways.
      {"fetch", {{"status", 404}, {"ok", false}, {"text", "no route /api/hello"}}},
      {"facts", json::array{"fact ticket.column p1"}},
  };
  for (const auto& [key, value] : expected) {
    ASSERT_TRUE(r.as_object().contains(key)) << key << " missing: " << json::serialize(r);
    EXPECT_EQ(r.at(key), value) << key << ": " << json::serialize(r.at(key));
  }
  // The two fields that differ, each by design; nothing else is answered.
  EXPECT_EQ(r.as_object().size(), expected.size() + 2) << json::serialize(r);
  const bool sandboxed = GetParam() == RunKind::sandbox;
  // The SDK says where it runs (the sandbox's prelude names its platform "escouade").
  EXPECT_EQ(r.at("sandboxed"), sandboxed);
  // A host permissions.network does not name. Inside the sandbox, fetch is the host's net/fetch,
  // which refuses it: a TypeError with the host's sentence, its code in `cause`, and the refusal
  // in the journal. Under Node, fetch is Node's own and nothing judges it (docs/authors.md:
  // "Node's own under Node"; a process has the user's rights): it goes, meets no server at that
  // lab address, and Node's TypeError says so, its system error in `cause`; the host, which did
  // not serve it, writes nothing.
  if (sandboxed) {
    EXPECT_EQ(r.at("undeclared"),
              (json::object{{"name", "TypeError"},
                            {"message",
                             "other.example.org is not in permissions.network of "
                             "dev.escouade.ts-tour"},
                            {"cause", -32003}}));
    EXPECT_TRUE(
        journal_has("net/stream refused: other.example.org is not in permissions.network "
                    "of dev.escouade.ts-tour"))
        << journal();
  } else {
    EXPECT_EQ(r.at("undeclared"),
              (json::object{
                  {"name", "TypeError"}, {"message", "fetch failed"}, {"cause", "ECONNREFUSED"}}));
    EXPECT_FALSE(journal_has("net/")) << journal();
  }

  // The fetch reached the server with the token from the keychain, either way: through the
  // host's client inside the sandbox, Node's own under Node.
  const auto seen = chat_.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/api/hello");
  EXPECT_EQ(seen[0].headers.at("authorization"), "Bearer " + kToken);
  // Who says it asks: the host's client, or Node's (undici, which adds its own accept-* too).
  EXPECT_EQ(seen[0].headers.at("user-agent"), sandboxed ? "Escouade" : "node");

  // The host's lines for what it served, the same both ways: the write (its size, never its
  // text), each refusal with the sentence the plugin got, each program started.
  const std::string lines = journal();
  EXPECT_NE(lines.find("fs/write agentRepo \"notes/a.txt\" (agent \"a1\"): 20 bytes written to \"" +
                       note.string() + "\""),
            std::string::npos)
      << lines;
  EXPECT_EQ(lines.find("written by the tour"), std::string::npos) << lines;
  EXPECT_NE(lines.find(std::string(r.at("fs").at("climb").at("message").as_string())),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find(std::string(r.at("proc").at("rm").at("message").as_string())),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("proc/spawn echo hi there in its temporary folder: program 1, pid "),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("proc/spawn git status --porcelain in " + (root_ / "repo").string() +
                       " (agent \"a1\"):"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("fact ticket.column p1"), std::string::npos);
  EXPECT_EQ(lines.find(kToken), std::string::npos) << lines;
}

INSTANTIATE_TEST_SUITE_P(BothRunKinds, TsSdkHost,
                         ::testing::Values(RunKind::sandbox, RunKind::process), test_name);

}  // namespace
}  // namespace escouade::testing
