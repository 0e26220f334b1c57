// A run.js plugin's escouade.fs and escouade.proc, and a run.wasm module's escouade.call, through
// the whole host (its C++ API, the agents the app sets, the sandbox's helpers, the prelude): real
// files under an agent's roots, real programs, a good plugin beside each refusal.

#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/temp_dir.hpp"
#include "host/host.hpp"
#include "host_answer.hpp"
#include "platform/keychain.hpp"
#include "platform/process.hpp"
#include "runtime/process_program.hpp"
#include "sandbox/sandbox_program.hpp"

namespace escouade::testing {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
const fs::path kFixtures = ESCOUADE_SANDBOX_FIXTURES;
const fs::path kWasmModules = ESCOUADE_WASM_FIXTURES;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a program to its end (git init, git commit): the test's own setup, not the plugin's.
void run(const std::vector<std::string>& argv, const fs::path& cwd) {
  platform::SpawnRequest req;
  req.argv = argv;
  req.cwd = cwd;
  req.env = {"PATH=/usr/bin:/bin",     "HOME=" + cwd.string(),
             "GIT_AUTHOR_NAME=Ana",    "GIT_AUTHOR_EMAIL=ana@example.com",
             "GIT_COMMITTER_NAME=Ana", "GIT_COMMITTER_EMAIL=ana@example.com"};
  auto s = platform::spawn(req);
  ASSERT_TRUE(s) << s.error().message;
  platform::close_fds(*s);
  auto status = platform::wait_exit(*s);
  ASSERT_TRUE(status && status->code == 0) << argv[0] << " " << argv[1];
}

class FsProcSandbox : public ::testing::Test {
 protected:
  // share_context: the app gives the host the context its factories were made with, as
  // escouade-host does; without it the host must take theirs.
  explicit FsProcSandbox(bool share_context = true)
      : processes_(io_.get_executor(), context_),
        sandboxed_(io_.get_executor(), context_, sandbox::SandboxOptions::installed()) {
    programs_.route(runtime::RunKind::command, &processes_);
    programs_.route(runtime::RunKind::js, &sandboxed_);
    programs_.route(runtime::RunKind::wasm, &sandboxed_);
    host::HostConfig config;
    config.data_dir = data_.path();
    config.base_env = {"PATH=/usr/bin:/bin"};
    config.keychain = keychain_.get();
    if (share_context) config.processes = &context_;
    host_ = std::make_unique<host::Host>(io_.get_executor(), config, programs_,
                                         [](const supervisor::Status&) {});
    // Two agents: a1 in an open project, b2 in a private one the plugins are not on for.
    for (const char* d : {"wt/a1", "repo", "home/a1", "wt/b2", "outside"})
      fs::create_directories(tree_.path() / d);
    std::ofstream(tree_.path() / "outside" / "secret.txt") << "the outside secret";
    std::ofstream(tree_.path() / "wt" / "b2" / "b2.txt") << "b2's file";
    root_ = fs::canonical(tree_.path());
    std::ofstream(root_ / "repo" / "README.md") << "the repository\n";
    EXPECT_TRUE(host_->set_agent(
        policy::Agent{"a1",
                      "p1",
                      root_ / "wt" / "a1",
                      root_ / "repo",
                      root_ / "home" / "a1",
                      {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "ESCOUADE_TOKEN=not for programs"}}));
    EXPECT_TRUE(host_->set_agent(policy::Agent{
        "b2", "secret", root_ / "wt" / "b2", std::nullopt, std::nullopt, {"PATH=/usr/bin"}}));
    id_ = load("dev.escouade.fsproc");
    // The private project is named by the app, for another plugin: b2's folder is that one's.
    good_ = load("dev.escouade.good");
    EXPECT_TRUE(host_->enable(good_, host::Project{"secret", "Secret", true, root_ / "wt"}));
  }
  ~FsProcSandbox() override {
    bool closed = false;
    host_->shutdown([&] { closed = true; });
    run_until([&] { return closed; });
  }

  std::string load(const std::string& id, bool wasm = false) {
    const fs::path dir = plugins_.path() / id;
    fs::create_directories(dir);
    if (wasm) {
      fs::copy_file(kWasmModules / "echo.wasm", dir / "plugin.wasm");
      std::ofstream(dir / "Makefile") << "plugin.wasm: echo.c\n";
    } else {
      fs::copy_file(kFixtures / "fsproc" / "plugin.mjs", dir / "plugin.mjs");
    }
    json::object manifest{
        {"id", id},
        {"version", "1.0.0"},
        {"name", "Files and programs"},
        {"run", wasm ? json::object{{"wasm", "Makefile"}} : json::object{{"js", "plugin.mjs"}}},
        {"activation", json::array{"event:agent.status"}},
        {"permissions",
         json::object{{"files", json::object{{"agent", "read"},
                                             {"agentRepo", "write"},
                                             {"agentHome", "read"},
                                             {"temp", "write"}}},
                      {"commands", json::array{"git status --porcelain", "git log *", "git init",
                                               "cat", "sleep *", "printenv *"}}}}};
    std::ofstream(dir / "escouade-plugin.json") << json::serialize(manifest);
    auto loaded = host_->load(dir);
    EXPECT_TRUE(loaded) << loaded.error().message;
    EXPECT_TRUE(host_->enable(loaded->id, host::Project{"p1", "Project One", false, {}}));
    return loaded->id;
  }

  json::value call(const std::string& method, json::value params) {
    return call_plugin(id_, method, std::move(params));
  }
  json::value call_plugin(const std::string& id, const std::string& method, json::value params) {
    std::optional<Result<json::value>> out;
    host_->call(id, *rpc::Outgoing::request_value(method, params), std::chrono::milliseconds(30000),
                [&](Result<host::Answer> r) { keep_answer(out, std::move(r)); });
    run_until([&] { return out.has_value(); });
    EXPECT_TRUE(out && *out) << (out ? out->error().message : "no answer");
    return out && *out ? **out : json::value();
  }
  json::value fs_op(const std::string& op, json::object where, json::value data = nullptr) {
    json::object p{{"op", op}, {"where", std::move(where)}};
    if (!data.is_null()) p["data"] = std::move(data);
    return call("test/fs", std::move(p));
  }
  // The error's code, or 0 when the call answered a result.
  static std::int64_t code_of(const json::value& v) {
    if (!v.is_object() || !v.as_object().contains("error")) return 0;
    return v.at("error").at("code").as_int64();
  }
  static std::string message_of(const json::value& v) {
    return code_of(v) ? std::string(v.at("error").at("message").as_string()) : std::string();
  }
  std::vector<std::string> journal(const std::string& id) { return *host_->journal(id, 1000); }
  bool journal_has(std::string_view text, const std::string& id = {}) {
    for (const auto& l : journal(id.empty() ? id_ : id))
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
  // The good plugin still answers: what a refusal to another must never change.
  void good_answers() {
    auto r = call_plugin(good_, "test/fs",
                         json::object{{"op", "readText"},
                                      {"where", json::object{{"root", "agentRepo"},
                                                             {"agent", "a1"},
                                                             {"path", "README.md"}}}});
    EXPECT_EQ(r, "the repository\n") << json::serialize(r);
  }
  template <class P>
  void run_until(P done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // a net
    while (!done() && std::chrono::steady_clock::now() < limit) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(done());
  }

  TempDir data_{"escouade-fsproc-host"};
  TempDir tree_{"escouade-fsproc-tree"};
  fs::path root_;
  std::unique_ptr<platform::Keychain> keychain_ = platform::make_file_keychain(data_.path() / "k");
  TempDir plugins_{"escouade-fsproc-plugins"};
  asio::io_context io_;
  runtime::ProcessContext context_;
  runtime::ProcessProgramFactory processes_;
  sandbox::SandboxProgramFactory sandboxed_;
  runtime::ProgramRouter programs_;
  std::unique_ptr<host::Host> host_;
  std::string id_, good_;
};

TEST_F(FsProcSandbox, FilesUnderTheAgentsRootsAreWrittenReadListedAndJudged) {
  const json::object notes{{"root", "agentRepo"}, {"agent", "a1"}, {"path", "notes/today.md"}};
  auto w = fs_op("write", notes, "first line\n");
  ASSERT_EQ(code_of(w), 0) << json::serialize(w);
  EXPECT_EQ(w.at("path"), json::value((root_ / "repo" / "notes" / "today.md").string()));
  EXPECT_EQ(w.at("bytes"), 11);
  EXPECT_EQ(code_of(fs_op("append", notes, "second line\n")), 0);
  EXPECT_EQ(fs_op("readText", notes), "first line\nsecond line\n");
  EXPECT_EQ(slurp(root_ / "repo" / "notes" / "today.md"), "first line\nsecond line\n");
  // The journal has the path and the size of each write, never what was written.
  EXPECT_TRUE(journal_has("fs/write agentRepo \"notes/today.md\" (agent \"a1\"): 11 bytes"));
  EXPECT_FALSE(journal_has("first line"));

  // Bytes that are not UTF-8 go and come back whole.
  const json::array bytes{0, 255, 128, 10, 195};
  EXPECT_EQ(code_of(fs_op("writeBytes", {{"root", "temp"}, {"path", "b.bin"}}, bytes)), 0);
  EXPECT_EQ(fs_op("readBytes", {{"root", "temp"}, {"path", "b.bin"}}), bytes);

  auto list = fs_op("list", {{"root", "agentRepo"}, {"agent", "a1"}, {"path", ""}});
  EXPECT_EQ(list.at("truncated"), false);
  EXPECT_EQ(list.at("entries").as_array().size(), 2u) << json::serialize(list);
  auto stat = fs_op("stat", {{"root", "agentRepo"}, {"agent", "a1"}, {"path", "notes"}});
  EXPECT_EQ(stat.at("kind"), "dir");
  // An absolute path under a root of the agent, without a root: judged by where it is.
  auto canon = fs_op("canon", {{"agent", "a1"}, {"path", (root_ / "repo" / "notes").string()}});
  EXPECT_EQ(canon, json::value((root_ / "repo" / "notes").string()));
  good_answers();
}

TEST_F(FsProcSandbox, EachRefusalHasItsCodeItsSentenceAndItsJournalLine) {
  fs::create_symlink(root_ / "outside" / "secret.txt", root_ / "repo" / "leak");
  struct Case {
    json::object where;
    std::int64_t code;
    std::string says;
  };
  const std::vector<Case> cases{
      {{{"root", "agentRepo"}, {"agent", "a1"}, {"path", "../outside/secret.txt"}}, -32003, ".."},
      {{{"root", "agentRepo"}, {"agent", "a1"}, {"path", "leak"}}, -32003, "outside"},
      {{{"root", "agentRepo"}, {"agent", "a1"}, {"path", "~/x"}}, -32003, "~"},
      {{{"root", "plugin"}, {"path", "plugin.mjs"}}, -32003, "permissions.files"},
      {{{"root", "agent"}, {"agent", "zz"}, {"path", "x"}}, -32003, "zz"},
      {{{"root", "agent"}, {"agent", "b2"}, {"path", "b2.txt"}}, -32003, "« Projet privé »"},
      {{{"agent", "a1"}, {"path", (root_ / "outside" / "secret.txt").string()}}, -32003, "root"},
      {{{"root", "agentRepo"}, {"agent", "a1"}, {"path", "missing.txt"}}, -32005, "not found"},
      {{{"root", "agentRepo"}, {"path", "README.md"}}, -32602, "agent"},
  };
  for (const auto& c : cases) {
    auto r = fs_op("readText", c.where);
    EXPECT_EQ(code_of(r), c.code) << json::serialize(c.where) << " " << json::serialize(r);
    EXPECT_NE(message_of(r).find(c.says), std::string::npos) << message_of(r);
    EXPECT_EQ(json::serialize(r).find("the outside secret"), std::string::npos);
    // The sentence the plugin got is a line of its journal.
    EXPECT_TRUE(journal_has(message_of(r))) << message_of(r);
    good_answers();
  }
  // A write on a root given for reading only.
  auto r = fs_op("write", {{"root", "agent"}, {"agent", "a1"}, {"path", "x.txt"}}, "x");
  EXPECT_EQ(code_of(r), -32003);
  EXPECT_FALSE(fs::exists(root_ / "wt" / "a1" / "x.txt"));
  // An agent the app forgets is refused from then on.
  ASSERT_TRUE(host_->remove_agent("a1"));
  EXPECT_EQ(
      code_of(fs_op("readText", {{"root", "agentRepo"}, {"agent", "a1"}, {"path", "README.md"}})),
      -32003);
}

TEST_F(FsProcSandbox, ProgramsRunWordForWordAndTheirOutputComesBeforeTheirEnd) {
  run({"git", "init", "-q"}, root_ / "wt" / "a1");
  std::ofstream(root_ / "wt" / "a1" / "new.txt") << "x";
  auto status = call("test/run", json::object{{"command", "git"},
                                              {"args", json::array{"status", "--porcelain"}},
                                              {"dir", "agent"},
                                              {"agent", "a1"}});
  ASSERT_EQ(code_of(status), 0) << json::serialize(status);
  EXPECT_EQ(status.at("code"), 0);
  EXPECT_EQ(status.at("stdout"), "?? new.txt\n");
  EXPECT_TRUE(journal_has("proc/spawn git status --porcelain in " + (root_ / "wt" / "a1").string() +
                          " (agent \"a1\")"));

  // One word short, one too many, a path for a name, a variable that loads code.
  for (const auto& [args, env] : std::vector<std::pair<json::array, json::object>>{
           {{"status"}, {}},
           {{"status", "--porcelain", "-z"}, {}},
           {{"status", "--porcelain"}, {{"GIT_CONFIG_COUNT", "1"}}},
           {{"status", "--porcelain"}, {{"LD_PRELOAD", "/tmp/x.so"}}}}) {
    auto r = call(
        "test/run",
        json::object{
            {"command", "git"}, {"args", args}, {"dir", "agent"}, {"agent", "a1"}, {"env", env}});
    EXPECT_EQ(code_of(r), -32003) << json::serialize(r);
    EXPECT_TRUE(journal_has(message_of(r))) << message_of(r);
  }
  auto path = call("test/run", json::object{{"command", "/usr/bin/git"},
                                            {"args", json::array{"status", "--porcelain"}}});
  EXPECT_EQ(code_of(path), -32003);
  good_answers();

  // Its input, then its output, then its end: always in that order.
  auto events = call("test/events",
                     json::object{{"options", json::object{{"command", "cat"}}}, {"input", "hé"}});
  EXPECT_EQ(events, (json::array{"out:hé", "exit:0"})) << json::serialize(events);
  auto iterated = call("test/iterate", json::object{{"command", "git"},
                                                    {"args", json::array{"log", "-n", "1"}},
                                                    {"dir", "agent"},
                                                    {"agent", "a1"}});
  EXPECT_NE(iterated.at("code"), 0);  // no commit yet: git says so, with its own code
  // Its environment is the agent's, without Escouade's variables.
  auto env =
      call("test/run",
           json::object{{"command", "printenv"}, {"args", json::array{"LANG"}}, {"agent", "a1"}});
  EXPECT_EQ(env.at("stdout"), "C.UTF-8\n");
  auto token = call("test/run", json::object{{"command", "printenv"},
                                             {"args", json::array{"ESCOUADE_TOKEN"}},
                                             {"agent", "a1"}});
  EXPECT_EQ(token.at("code"), 1);
  EXPECT_EQ(token.at("stdout"), "");
}

TEST_F(FsProcSandbox, AKilledProgramEndsWithANullCodeAndProgramsEndWithTheirInstance) {
  EXPECT_EQ(call("test/kill", json::object{{"command", "sleep"}, {"args", json::array{"300"}}}),
            nullptr);
  auto started =
      call("test/start", json::object{{"command", "sleep"}, {"args", json::array{"301"}}});
  ASSERT_TRUE(started.is_int64()) << json::serialize(started);
  // Its pid, from the journal's start line.
  int pid = 0;
  for (const auto& l : journal(id_)) {
    const auto at = l.find("sleep 301");
    const auto p = l.find(", pid ");
    if (at != std::string::npos && p != std::string::npos) pid = std::stoi(l.substr(p + 6));
  }
  ASSERT_GT(pid, 0);
  EXPECT_EQ(::kill(pid, 0), 0);
  ASSERT_TRUE(host_->restart(id_));  // the instance ends: its programs with it
  run_until([&] { return ::kill(pid, 0) != 0; });
  good_answers();
}

// A library user who leaves HostConfig::processes unset: the host shares the factories' context,
// so a program's end does not take the sandbox's helpers (children it would not know) for orphans.
class FsProcSandboxContextNotGiven : public FsProcSandbox {
 protected:
  FsProcSandboxContextNotGiven() : FsProcSandbox(false) {}
};

TEST_F(FsProcSandboxContextNotGiven, AProgramsEndLeavesThePluginsRunning) {
  const auto starts = [&](const std::string& id) {
    std::size_t n = 0;
    for (const auto& l : journal(id))
      if (l.find("started:") != std::string::npos) ++n;
    return n;
  };
  good_answers();
  // Both started (a plugin starts at its first call).
  EXPECT_EQ(
      call("test/run",
           json::object{{"command", "printenv"}, {"args", json::array{"LANG"}}, {"agent", "a1"}})
          .at("stdout"),
      "C.UTF-8\n");
  ASSERT_EQ(starts(id_), 1u);
  ASSERT_EQ(starts(good_), 1u);
  for (int i = 0; i < 3; ++i) {
    auto r =
        call("test/run",
             json::object{{"command", "printenv"}, {"args", json::array{"LANG"}}, {"agent", "a1"}});
    ASSERT_EQ(code_of(r), 0) << json::serialize(r);
    EXPECT_EQ(r.at("stdout"), "C.UTF-8\n");
    good_answers();
  }
  // Neither helper was ended and started again.
  EXPECT_EQ(starts(id_), 1u);
  EXPECT_EQ(starts(good_), 1u);
  for (const auto& l : journal(id_))
    EXPECT_EQ(l.find("crashed:"), std::string::npos) << l;
}

TEST_F(FsProcSandbox, ARunWasmModuleReachesFilesAndProgramsThroughEscouadeCall) {
  const std::string wasm = load("dev.escouade.fsproc-wasm", true);
  auto r = call_plugin(wasm, "test/x/fs/read",
                       json::object{{"root", "agentRepo"}, {"agent", "a1"}, {"path", "README.md"}});
  EXPECT_EQ(r.at("code"), 0) << json::serialize(r);
  EXPECT_EQ(r.at("answer").at("text"), "the repository\n");
  auto refused =
      call_plugin(wasm, "test/x/fs/read",
                  json::object{{"root", "agentRepo"}, {"agent", "a1"}, {"path", "../x"}});
  EXPECT_NE(refused.at("code"), 0) << json::serialize(refused);
  auto spawned = call_plugin(wasm, "test/x/proc/spawn",
                             json::object{{"command", "sleep"}, {"args", json::array{"1"}}});
  EXPECT_EQ(spawned.at("code"), 0) << json::serialize(spawned);
  EXPECT_TRUE(spawned.at("answer").at("proc").is_int64());
}

TEST_F(FsProcSandbox, TheAppsAgentsAreCheckedWhenSetAndForgottenWhenRemoved) {
  const auto invalid = [](const Result<void>& r) {
    return !r && r.error().code == proto::ErrorCode::invalid_params;
  };
  EXPECT_TRUE(invalid(host_->set_agent(policy::Agent{"", "p1", root_, {}, {}, {}})));
  EXPECT_TRUE(invalid(host_->set_agent(policy::Agent{"a9", "", root_, {}, {}, {}})));
  auto relative = host_->set_agent(policy::Agent{"a9", "p1", fs::path("wt/a9"), {}, {}, {}});
  ASSERT_TRUE(invalid(relative));
  EXPECT_EQ(relative.error().message, "roots.agent: an absolute path");
  EXPECT_TRUE(invalid(host_->set_agent(policy::Agent{"a9", "p1", root_, {}, {}, {"=x"}})));
  EXPECT_TRUE(invalid(host_->set_agent(policy::Agent{"a9", "p1", root_, {}, {}, {"NOEQUALS"}})));
  EXPECT_TRUE(invalid(host_->remove_agent("a9")));
  // A root given through a link is kept as its real path: what fs/canon answers is under it.
  fs::create_symlink(root_ / "repo", root_ / "repo-link");
  ASSERT_TRUE(host_->set_agent(policy::Agent{"a9", "p1", {}, root_ / "repo-link", {}, {}}));
  EXPECT_EQ(fs_op("canon", {{"root", "agentRepo"}, {"agent", "a9"}, {"path", "README.md"}}),
            json::value((root_ / "repo" / "README.md").string()));
  ASSERT_TRUE(host_->remove_agent("a9"));
  EXPECT_EQ(code_of(fs_op("canon", {{"root", "agentRepo"}, {"agent", "a9"}, {"path", "x"}})),
            -32003);
}

// The example plugin dev.escouade.repo-notes: a turn ends, its note is written under the agent's
// repository with what git says.
TEST_F(FsProcSandbox, TheRepoNotesExampleNotesWhatGitSays) {
  run({"git", "init", "-q"}, root_ / "wt" / "a1");
  std::ofstream(root_ / "wt" / "a1" / "a.txt") << "a";
  run({"git", "add", "a.txt"}, root_ / "wt" / "a1");
  run({"git", "commit", "-q", "-m", "First change"}, root_ / "wt" / "a1");
  std::ofstream(root_ / "wt" / "a1" / "b.txt") << "b";
  const fs::path dir = plugins_.path() / "repo-notes";
  fs::copy(fs::path(ESCOUADE_EXAMPLES_SOURCE) / "repo-notes", dir, fs::copy_options::recursive);
  auto loaded = host_->load(dir);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_TRUE(host_->enable(loaded->id, host::Project{"p1", "Project One", false, {}}));
  proto::Fact fact;
  fact.name = proto::FactName::turn_ended;
  fact.version = 1;
  fact.seq = 1;
  fact.at = "2026-12-05T10:00:00Z";
  fact.project = proto::Project{"p1", "Project One", false};
  fact.agent = proto::Agent{"a1", "Ana"};
  ASSERT_TRUE(host_->publish(fact));
  const fs::path notes = root_ / "repo" / "ESCOUADE-NOTES.md";
  run_until(
      [&] { return fs::exists(notes) && slurp(notes).find("Last commits") != std::string::npos; });
  const std::string text = slurp(notes);
  EXPECT_NE(text.find("## 2026-12-05T10:00:00Z Ana"), std::string::npos) << text;
  EXPECT_NE(text.find("    ?? b.txt"), std::string::npos) << text;
  EXPECT_NE(text.find("First change"), std::string::npos) << text;
  run_until([&] { return journal_has("noted Ana's turn", loaded->id); });
  EXPECT_TRUE(journal_has("proc/spawn git status --porcelain", loaded->id));
}

}  // namespace
}  // namespace escouade::testing
