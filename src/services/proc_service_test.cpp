// proc/* as a sandboxed plugin's session sees them: real programs (git, cat, sleep, sh), a real
// rpc::Session fed lines, a RunScope whose input backlog the test sets, and the host's tree
// ender. This process is a child subreaper, as the host is.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "base/quote.hpp"
#include "base/temp_dir.hpp"
#include "base/utf8.hpp"
#include "base/workers.hpp"
#include "platform/process.hpp"
#include "platform/process_tree.hpp"
#include "runtime/process_program.hpp"
#include "runtime/tree_ender.hpp"
#include "services/bind.hpp"
#include "services/proc.hpp"

namespace escouade::services {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

// An entry as the manifest reads it: words between single spaces, a last "*" for any arguments.
manifest::CommandGrant entry(std::string_view text) {
  return manifest::command_of(text);
}

void write_file(const fs::path& path, std::string_view content, bool executable = false) {
  std::ofstream(path, std::ios::binary) << content;
  if (executable) fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace);
}

// Whether `pid` still runs: it exists and is not a zombie (a zombie ran to its end).
bool runs(int pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = all.rfind(')');
  if (close == std::string::npos || close + 2 >= all.size()) return false;
  return all[close + 2] != 'Z' && all[close + 2] != 'X';
}

const std::string kReplacement = "\xEF\xBF\xBD";

class ProcService : public ::testing::Test {
 protected:
  explicit ProcService(manifest::RunKind kind = manifest::RunKind::js) {
    // As the host is: the orphans of what it starts come to it.
    EXPECT_TRUE(platform::become_subreaper());
    for (const auto& folder : {wt_, proj_, secret_, secret_wt_, temp_})
      fs::create_directories(folder);
    JournalOptions jo;
    jo.dir = dir_.path() / "logs";
    jo.plugin_id = "dev.escouade.gitbar";
    jo.tail_lines = 2000;
    plugin_->manifest.id = jo.plugin_id;
    plugin_->manifest.run.kind = kind;
    plugin_->journal = std::make_shared<Journal>(std::move(jo));
    for (const char* e :
         {"git status --porcelain", "git log *", "cat *", "echo *", "env", "pwd", "false",
          "sleep 30", "sleep 300", "sh -c *", "head -c 1", "escouade-no-such-program"})
      plugin_->manifest.permissions.commands.push_back(entry(e));
    plugin_->commands = policy::Commands(plugin_->manifest.permissions.commands);
    plugin_->temp_folder = temp_;
    plugin_->project_folders = {{"p1", proj_}};

    agents_.projects = {{"p1", ProjectPlace{false, proj_}},
                        {"secret", ProjectPlace{true, secret_}}};
    const std::vector<std::string> env = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "ESCOUADE_SECRET=x",
                                          "HOME=/nonexistent"};
    add_agent("a1", "p1", wt_, env);
    add_agent("b2", "secret", secret_wt_, env);
    // Agents whose PATH holds relative and empty folders.
    add_agent("c3", "p1", wt_, {"PATH=bin::.:/usr/bin", "LANG=C.UTF-8"});
    add_agent("d4", "p1", wt_, {"PATH=bin::.", "LANG=C.UTF-8"});
    add_agent("e5", "p1", wt_, {"LANG=C.UTF-8"});

    ctx_.proc = {io_.get_executor(),
                 &workers_,
                 &processes_,
                 &agents_,
                 {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "ESCOUADE_HOST=1"}};
    session_.emplace(
        io_.get_executor(),
        [this](std::string l) {
          sent_.push_back(json::parse(l));
          if (on_sent_) on_sent_(sent_.back());
        },
        [](std::string_view) {});
    run_.emplace(*session_);
    run_->set_input_backlog([this] { return backlog_; });
    bind_services(*session_, *run_, ctx_, plugin_);
  }
  ~ProcService() override {
    end_run();
    platform::reap_adopted(processes_.known_children);
  }

  void add_agent(const std::string& key, const std::string& project, const fs::path& folder,
                 std::vector<std::string> env) {
    policy::Agent a;
    a.key = key;
    a.project = project;
    a.agent = folder;
    a.env = std::move(env);
    agents_.agents[key] = std::move(a);
  }

  // The run ends, and the tree ender finishes what it was asked.
  void end_run() {
    if (!run_) return;
    session_->close();
    run_.reset();
    run_until([&] { return processes_.known_children.empty(); }, 20s);
  }

  // Sends a request; returns its answer once it came.
  json::value call(std::string_view method, const json::value& params) {
    const int id = next_id_++;
    session_->feed_line(json::serialize(
        json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}));
    json::value answer;
    run_until([&] {
      for (const auto& m : sent_)
        if (m.as_object().contains("id") && m.at("id") == id) answer = m;
      return !answer.is_null();
    });
    return answer;
  }
  json::value spawn(const json::object& params) { return call("proc/spawn", params); }
  // A spawn that must start: its proc.
  std::int64_t start(const json::object& params) {
    auto a = spawn(params);
    EXPECT_TRUE(a.as_object().contains("result")) << json::serialize(a);
    if (!a.as_object().contains("result")) return -1;
    return a.at("result").at("proc").as_int64();
  }
  template <class Done>
  void run_until(Done done, std::chrono::milliseconds at_most = 30s) {
    const auto until = std::chrono::steady_clock::now() + at_most;  // a safety net only
    while (!done() && std::chrono::steady_clock::now() < until) {
      io_.restart();
      io_.run_one_for(50ms);
    }
  }
  std::vector<json::object> notifications(std::string_view method) const {
    std::vector<json::object> out;
    for (const auto& m : sent_)
      if (m.as_object().contains("method") && m.at("method").as_string() == method)
        out.push_back(m.at("params").as_object());
    return out;
  }
  std::vector<json::object> outs(std::int64_t proc) const {
    std::vector<json::object> out;
    for (auto& o : notifications("proc/out"))
      if (o.at("proc") == proc) out.push_back(o);
    return out;
  }
  std::string output(std::int64_t proc, std::string_view stream = "stdout") const {
    std::string all;
    for (const auto& o : outs(proc))
      if (o.at("stream").as_string() == stream) all += o.at("data").as_string();
    return all;
  }
  std::optional<json::object> exit_of(std::int64_t proc) const {
    for (auto& e : notifications("proc/exit"))
      if (e.at("proc") == proc) return e;
    return std::nullopt;
  }
  // Waits for its proc/exit; returns it.
  json::object wait_exit(std::int64_t proc) {
    run_until([&] { return exit_of(proc).has_value(); });
    auto e = exit_of(proc);
    EXPECT_TRUE(e) << "proc/exit of " << proc;
    return e ? *e : json::object{};
  }
  // Runs the loop until its stdout holds `lines` lines.
  std::vector<std::string> wait_lines(std::int64_t proc, std::size_t lines) {
    run_until([&] {
      const auto text = output(proc);
      return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) >= lines;
    });
    std::vector<std::string> out;
    std::istringstream in(output(proc));
    for (std::string l; std::getline(in, l);)
      out.push_back(l);
    return out;
  }
  // The pid the journal gave the program.
  int pid_of(std::int64_t proc) const {
    const std::regex start(": program " + std::to_string(proc) + ", pid ([0-9]+)");
    std::smatch m;
    const std::string text = journal_text();
    EXPECT_TRUE(std::regex_search(text, m, start)) << text;
    return m.empty() ? -1 : std::stoi(m[1]);
  }
  // Runs the loop until none of `pids` runs (a safety bound, not a timing assertion).
  void wait_gone(const std::vector<int>& pids) {
    run_until(
        [&] { return std::none_of(pids.begin(), pids.end(), [](int pid) { return runs(pid); }); },
        20s);
    for (int pid : pids)
      EXPECT_FALSE(runs(pid)) << "pid " << pid << " still runs";
  }
  std::string journal_text() const {
    std::string all;
    for (const auto& l : plugin_->journal->tail(2000))
      all += l + "\n";
    return all;
  }
  // The error answered: its code, its message in the journal.
  void expect_error(const json::value& answer, std::int64_t code, const std::string& journal,
                    std::string_view message = {}) {
    ASSERT_TRUE(answer.as_object().contains("error")) << json::serialize(answer);
    EXPECT_EQ(answer.at("error").at("code").as_int64(), code) << json::serialize(answer);
    const std::string said(answer.at("error").at("message").as_string());
    if (!message.empty()) {
      EXPECT_EQ(said, message);
    }
    EXPECT_THAT(journal_text(), HasSubstr(journal + said));
  }
  void expect_refused(const json::value& answer, std::string_view message = {}) {
    expect_error(answer, -32003, "proc/spawn refused: ", message);
  }
  // A good spawn still works: the service keeps serving.
  void expect_serving() {
    const auto proc = start({{"command", "echo"}, {"args", {"still", "here"}}});
    EXPECT_EQ(wait_exit(proc).at("code"), 0);
    EXPECT_EQ(output(proc), "still here\n");
  }

  TempDir dir_{"escouade-proc-service"};
  const fs::path wt_ = dir_.path() / "wt";
  const fs::path proj_ = dir_.path() / "proj";
  const fs::path secret_ = dir_.path() / "secret";
  const fs::path secret_wt_ = dir_.path() / "secret-wt";
  const fs::path temp_ = dir_.path() / "tmp";
  boost::asio::io_context io_;
  runtime::TreeEnder ender_{io_.get_executor()};
  runtime::ProcessContext processes_ = [this] {
    runtime::ProcessContext c;
    c.ender = &ender_;
    return c;
  }();
  Workers workers_{io_.get_executor(), 2};
  AgentBook agents_;
  std::shared_ptr<ServedPlugin> plugin_ = std::make_shared<ServedPlugin>();
  ServiceContext ctx_;
  std::optional<rpc::Session> session_;
  std::optional<RunScope> run_;
  std::vector<json::value> sent_;
  std::function<void(const json::value&)> on_sent_;
  std::size_t backlog_ = 0;
  int next_id_ = 1;
};

TEST_F(ProcService, ACommandRunsOnlyWhenItIsAnEntryWordForWord) {
  ASSERT_EQ(std::system(("git -C '" + wt_.string() + "' init -q && git -C '" + wt_.string() +
                         "' -c user.name=t -c user.email=t@example.com commit -q --allow-empty "
                         "-m first")
                            .c_str()),
            0);
  write_file(wt_ / "hello.txt", "hi\n");

  const auto status = start(
      {{"command", "git"}, {"args", {"status", "--porcelain"}}, {"agent", "a1"}, {"dir", "agent"}});
  EXPECT_EQ(wait_exit(status).at("code"), 0);
  EXPECT_EQ(output(status), "?? hello.txt\n");
  EXPECT_THAT(journal_text(), HasSubstr("proc/spawn git status --porcelain in " + wt_.string() +
                                        " (agent \"a1\"): program " + std::to_string(status)));

  const std::string entries =
      "(\"git status --porcelain\", \"git log *\", \"cat *\", \"echo *\", \"env\", \"pwd\", "
      "\"false\", \"sleep 30\", \"sleep 300\", \"sh -c *\", \"head -c 1\", "
      "\"escouade-no-such-program\")";
  expect_refused(spawn({{"command", "git"}, {"args", {"status"}}}),
                 "\"git status\" is not one of its permissions.commands " + entries);
  expect_refused(spawn({{"command", "git"}, {"args", {"status", "--porcelain", "-z"}}}),
                 "\"git status --porcelain -z\" is not one of its permissions.commands " + entries);
  expect_refused(spawn({{"command", "git"}}),
                 "\"git\" is not one of its permissions.commands " + entries);
  expect_refused(spawn({{"command", "git status"}, {"args", {"--porcelain"}}}));
  expect_refused(spawn({{"command", "git status --porcelain"}}));
  // One argument holding a space is one word, never two.
  expect_refused(
      spawn({{"command", "git"}, {"args", {"status --porcelain"}}}),
      "\"git \\\"status --porcelain\\\"\" is not one of its permissions.commands " + entries);

  for (const json::array& args : {json::array{"log"}, json::array{"log", "-n", "1", "--oneline"}}) {
    const auto log = start({{"command", "git"}, {"args", args}, {"agent", "a1"}, {"dir", "agent"}});
    EXPECT_EQ(wait_exit(log).at("code"), 0);
    EXPECT_THAT(output(log), HasSubstr("first"));
  }
  expect_serving();
}

TEST_F(ProcService, AProgramIsABareNameFoundInTheAbsoluteFoldersOfThePathOnly) {
  for (const char* name : {"/usr/bin/git", "./git", "bin/git", "", "..", "."}) {
    auto a = spawn({{"command", name}, {"args", {"status", "--porcelain"}}});
    expect_refused(a);
    EXPECT_THAT(std::string(a.at("error").at("message").as_string()),
                ::testing::StartsWith(quote_name(name) + ": "))
        << name;
  }
  expect_refused(spawn({{"command", "/usr/bin/git"}}),
                 "\"/usr/bin/git\": a path, not a name: the program is found on the PATH");

  // An echo of the plugin's in each relative folder of the agent's PATH: not the one that runs.
  fs::create_directories(wt_ / "bin");
  write_file(wt_ / "bin" / "echo", "#!/bin/sh\nprintf 'fake in bin\\n'\n", true);
  write_file(wt_ / "echo", "#!/bin/sh\nprintf 'fake in the working folder\\n'\n", true);
  const auto real =
      start({{"command", "echo"}, {"args", {"real"}}, {"agent", "c3"}, {"dir", "agent"}});
  EXPECT_EQ(wait_exit(real).at("code"), 0);
  EXPECT_EQ(output(real), "real\n");

  expect_refused(spawn({{"command", "echo"}, {"agent", "d4"}, {"dir", "agent"}}),
                 "the PATH \"bin::.\" has no absolute folder to find \"echo\" in");
  expect_refused(spawn({{"command", "echo"}, {"agent", "e5"}}),
                 "agent \"e5\" has no PATH to find \"echo\" on");

  auto missing = spawn({{"command", "escouade-no-such-program"}, {"agent", "c3"}});
  expect_error(missing, -32004, "proc/spawn failed: ");
  EXPECT_THAT(std::string(missing.at("error").at("message").as_string()),
              ::testing::AllOf(HasSubstr("escouade-no-such-program"),
                               ::testing::EndsWith(" is not found on the PATH (/usr/bin)")));
  expect_serving();
}

TEST_F(ProcService, EnvSetsNoVariableThatRunsCodeAndNoEscouadeVariableReachesTheProgram) {
  for (const char* name :
       {"ESCOUADE_X", "PATH", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "GIT_CONFIG_COUNT",
        "GIT_SSH_COMMAND", "NODE_OPTIONS", "BASH_ENV", "PYTHONSTARTUP", "HOME", "path"}) {
    auto a = spawn({{"command", "env"}, {"env", {{name, "x"}}}, {"agent", "a1"}});
    expect_refused(a);
    EXPECT_THAT(std::string(a.at("error").at("message").as_string()),
                ::testing::StartsWith("env " + quote_name(name) + ": "))
        << name;
  }
  expect_refused(spawn({{"command", "env"}, {"env", {{"PATH", "/tmp"}}}}),
                 "env \"PATH\": PATH is chosen by the agent, never by a plugin");
  expect_error(spawn({{"command", "env"}, {"env", {{"A=B", "x"}}}}), -32602,
               "proc/spawn: ", "params.env \"A=B\": a '=' in a variable's name");
  expect_error(spawn({{"command", "env"}, {"env", {{"", "x"}}}}), -32602,
               "proc/spawn: ", "params.env \"\": an empty variable name");

  const auto env = start({{"command", "env"}, {"env", {{"MY_VAR", "hello"}}}, {"agent", "a1"}});
  EXPECT_EQ(wait_exit(env).at("code"), 0);
  std::set<std::string> lines;
  std::istringstream in(output(env));
  for (std::string l; std::getline(in, l);)
    lines.insert(l);
  EXPECT_EQ(lines, (std::set<std::string>{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/nonexistent",
                                          "MY_VAR=hello"}));
  // For no agent: the app's environment, without its ESCOUADE_* either.
  const auto bare = start({{"command", "env"}});
  EXPECT_EQ(wait_exit(bare).at("code"), 0);
  EXPECT_EQ(output(bare), "PATH=/usr/bin:/bin\nLANG=C.UTF-8\n");
  expect_serving();
}

TEST_F(ProcService, ItRunsInTheTemporaryTheAgentsOrTheProjectsFolderAndAPrivateOneIsFenced) {
  const std::pair<json::object, fs::path> cases[] = {
      {{{"command", "pwd"}}, temp_},
      {{{"command", "pwd"}, {"agent", "a1"}, {"dir", "agent"}}, wt_},
      {{{"command", "pwd"}, {"agent", "a1"}, {"dir", "project"}}, proj_},
      {{{"command", "pwd"}, {"project", "p1"}, {"dir", "project"}}, proj_},
  };
  for (const auto& [params, folder] : cases) {
    const auto proc = start(params);
    EXPECT_EQ(wait_exit(proc).at("code"), 0);
    EXPECT_EQ(output(proc), folder.string() + "\n") << json::serialize(params);
  }

  expect_refused(spawn({{"command", "pwd"}, {"agent", "b2"}, {"dir", "agent"}}),
                 "agent \"b2\" works in a private project (« Projet privé ») where the plugin is "
                 "not on");
  expect_refused(spawn({{"command", "pwd"}, {"agent", "b2"}}));
  expect_refused(spawn({{"command", "pwd"}, {"project", "secret"}, {"dir", "project"}}),
                 "project \"secret\" is private (« Projet privé ») and the plugin is not on for "
                 "it");
  expect_refused(spawn({{"command", "pwd"}, {"agent", "nobody"}}),
                 "no agent \"nobody\": the app has not set it");
  expect_error(spawn({{"command", "pwd"}, {"dir", "agent"}}), -32602,
               "proc/spawn: ", "params.agent: the agent whose folder it runs in, for dir agent");
  expect_serving();

  plugin_->project_folders.emplace("secret", secret_);
  const auto on = start({{"command", "pwd"}, {"agent", "b2"}, {"dir", "agent"}});
  EXPECT_EQ(wait_exit(on).at("code"), 0);
  EXPECT_EQ(output(on), secret_wt_.string() + "\n");
}

TEST_F(ProcService, FourRunAtOnceAndAKilledOneEndsWithANullCode) {
  std::vector<std::int64_t> procs;
  for (int i = 0; i < 4; ++i)
    procs.push_back(start({{"command", "sleep"}, {"args", {"30"}}}));
  expect_refused(spawn({{"command", "sleep"}, {"args", {"30"}}}),
                 "4 programs already run, the most a plugin may have at once; one must end first");
  const int pid = pid_of(procs[0]);

  auto killed = call("proc/kill", {{"proc", procs[0]}});
  ASSERT_TRUE(killed.as_object().contains("result")) << json::serialize(killed);
  EXPECT_TRUE(killed.at("result").is_null());
  const auto exit = wait_exit(procs[0]);
  ASSERT_TRUE(exit.contains("code")) << json::serialize(exit);
  EXPECT_TRUE(exit.at("code").is_null());
  EXPECT_FALSE(runs(pid));
  EXPECT_THAT(journal_text(),
              HasSubstr("proc/kill program " + std::to_string(procs[0]) + " (sleep 30)"));
  expect_error(call("proc/kill", {{"proc", procs[0]}}), -32004,
               "proc/kill failed: ", "program " + std::to_string(procs[0]) + " has ended");
  expect_error(call("proc/kill", {{"proc", 999}}), -32602,
               "proc/kill: ", "params.proc: no program 999");
  expect_serving();
  for (std::size_t i = 1; i < procs.size(); ++i)
    EXPECT_FALSE(exit_of(procs[i]));
}

TEST_F(ProcService, OutputComesAsWholeCharactersByStreamThenTheExitCode) {
  // After one byte, characters of 4 bytes: a read of a multiple of 4 bytes ends inside one.
  std::string text = "a";
  while (text.size() < 600 * 1024)
    text += "\xF0\x9F\x98\x80";      // 😀
  text += "\xC3\xA9\xE2\x82\xAC\n";  // é€
  write_file(temp_ / "utf8.txt", text);
  const auto proc = start({{"command", "cat"}, {"args", {"utf8.txt", "missing.txt"}}});
  const auto exit = wait_exit(proc);
  EXPECT_EQ(exit.at("code"), 1);
  for (const auto& o : outs(proc))
    EXPECT_TRUE(is_valid_utf8(o.at("data").as_string()));
  EXPECT_GT(outs(proc).size(), 2u);
  EXPECT_EQ(output(proc), text);
  EXPECT_EQ(output(proc, "stderr"), "cat: missing.txt: No such file or directory\n");

  // The exit after all of the output.
  std::size_t last_out = 0, exit_at = 0;
  for (std::size_t i = 0; i < sent_.size(); ++i) {
    const auto& m = sent_[i].as_object();
    if (!m.contains("method") || m.at("params").at("proc") != proc) continue;
    if (m.at("method") == "proc/out") last_out = i;
    if (m.at("method") == "proc/exit") exit_at = i;
  }
  EXPECT_GT(exit_at, last_out);

  write_file(temp_ / "bad.txt", "ok \xFF\xFE end \xE2\x82");
  const auto bad = start({{"command", "cat"}, {"args", {"bad.txt"}}});
  EXPECT_EQ(wait_exit(bad).at("code"), 0);
  EXPECT_EQ(output(bad),
            "ok " + kReplacement + kReplacement + " end " + kReplacement + kReplacement);

  const auto three = start({{"command", "sh"}, {"args", {"-c", "echo out; echo err >&2; exit 3"}}});
  EXPECT_EQ(wait_exit(three).at("code"), 3);
  EXPECT_EQ(output(three), "out\n");
  EXPECT_EQ(output(three, "stderr"), "err\n");
  EXPECT_THAT(journal_text(),
              HasSubstr("proc/spawn sh -c \"echo out; echo err >&2; exit 3\" in its temporary "
                        "folder: program " +
                        std::to_string(three) + ", pid "));
  const auto one = start({{"command", "false"}});
  EXPECT_EQ(wait_exit(one).at("code"), 1);
  EXPECT_TRUE(outs(one).empty());
}

TEST_F(ProcService, APluginSlowToReadHoldsTheProgramOnItsPipeAndLosesNothing) {
  constexpr std::size_t kBytes = 8 * 1024 * 1024;
  std::string text;
  text.reserve(kBytes);
  for (int i = 0; text.size() < kBytes; ++i)
    text += "line " + std::to_string(i) + "\n";
  text.resize(kBytes);
  write_file(temp_ / "big.txt", text);

  std::int64_t flooding = 0;
  // The plugin's input fills up as soon as the first piece is sent.
  on_sent_ = [&](const json::value& m) {
    if (m.as_object().contains("method") && m.at("method") == "proc/out") backlog_ = 300 * 1024;
  };
  flooding = start({{"command", "cat"}, {"args", {"big.txt"}}});
  run_until([&] { return !outs(flooding).empty(); });
  ASSERT_EQ(outs(flooding).size(), 1u);
  on_sent_ = nullptr;
  for (int i = 0; i < 200; ++i) {
    io_.restart();
    io_.run_one_for(10ms);
  }
  EXPECT_EQ(outs(flooding).size(), 1u) << "nothing more while the plugin has not taken it";
  EXPECT_FALSE(exit_of(flooding));
  EXPECT_TRUE(runs(pid_of(flooding))) << "it waits on its pipe";

  backlog_ = 0;
  const auto exit = wait_exit(flooding);
  EXPECT_EQ(exit.at("code"), 0);
  const std::string got = output(flooding);
  EXPECT_EQ(got.size(), kBytes);
  EXPECT_TRUE(got == text);
}

// Once a program ended and the linger passed (1 ms here, 2 s in the host), what its pipes hold
// is read without waiting for the plugin (the pipe bounds it) and its end is told: a plugin that
// never reads does not keep a program's end, nor what it started, waiting.
TEST_F(ProcService, AfterItsEndAndTheLingerWhatItsPipesHoldComesThenItsExit) {
  processes_.linger = 1ms;
  const std::string text(40 * 1024, 'x');
  write_file(temp_ / "small.txt", text);
  backlog_ = 300 * 1024;  // from the start: nothing is read while the program runs
  const auto proc = start({{"command", "cat"}, {"args", {"small.txt"}}});
  EXPECT_EQ(wait_exit(proc).at("code"), 0);
  EXPECT_TRUE(output(proc) == text);
  backlog_ = 0;
  expect_serving();
}

TEST_F(ProcService, InputIsWrittenThenClosedAndAtMost1MiBWaitsUnread) {
  const auto cat = start({{"command", "cat"}});
  EXPECT_TRUE(call("proc/write", {{"proc", cat}, {"data", "hello\n"}}).at("result").is_null());
  run_until([&] { return output(cat) == "hello\n"; });
  EXPECT_EQ(output(cat), "hello\n");
  EXPECT_TRUE(
      call("proc/write", {{"proc", cat}, {"data", "bye"}, {"close", true}}).at("result").is_null());
  EXPECT_EQ(wait_exit(cat).at("code"), 0);
  EXPECT_EQ(output(cat), "hello\nbye");
  expect_error(call("proc/write", {{"proc", cat}, {"data", "late"}}), -32004,
               "proc/write failed: ", "program " + std::to_string(cat) + " has ended");

  // A program that never reads.
  const auto sleeper = start({{"command", "sleep"}, {"args", {"30"}}});
  const std::string kib600(600 * 1024, 'x');
  const std::string full = "program " + std::to_string(sleeper) +
                           " has not read what it was given: more than 1 MiB would wait";
  EXPECT_TRUE(call("proc/write", {{"proc", sleeper}, {"data", kib600}}).at("result").is_null());
  expect_error(call("proc/write", {{"proc", sleeper}, {"data", kib600}}), -32004,
               "proc/write failed: ", full);
  EXPECT_TRUE(call("proc/write", {{"proc", sleeper}, {"data", std::string(424 * 1024, 'y')}})
                  .at("result")
                  .is_null())
      << "1 MiB waits, not more";
  expect_error(call("proc/write", {{"proc", sleeper}, {"data", kib600}}), -32004,
               "proc/write failed: ", full);
  expect_error(call("proc/write", {{"proc", sleeper}, {"data", "z"}}), -32004,
               "proc/write failed: ", full);

  const auto closed = start({{"command", "sleep"}, {"args", {"30"}}});
  EXPECT_TRUE(call("proc/write", {{"proc", closed}, {"close", true}}).at("result").is_null());
  expect_error(call("proc/write", {{"proc", closed}, {"data", "x"}}), -32004, "proc/write failed: ",
               "the input of program " + std::to_string(closed) + " is closed");
  expect_error(call("proc/write", {{"proc", 999}, {"data", "x"}}), -32602,
               "proc/write: ", "params.proc: no program 999");

  // A program that stops reading and ends while much is written to it: the write fails for it
  // alone.
  const auto head = start({{"command", "head"}, {"args", {"-c", "1"}}});
  EXPECT_TRUE(call("proc/write", {{"proc", head}, {"data", kib600}}).at("result").is_null());
  EXPECT_EQ(wait_exit(head).at("code"), 0);
  EXPECT_EQ(output(head), "x");
  expect_serving();
}

TEST_F(ProcService, WhatAProgramStartedEndsWithIt) {
  // Two children that outlive it and hold its output open, a third that leaves its group.
  const auto proc = start(
      {{"command", "sh"},
       {"args",
        {"-c",
         "sleep 300 & echo $!; sleep 300 & echo $!; setsid sleep 300 & echo $!; echo started"}}});
  const auto exit = wait_exit(proc);
  EXPECT_EQ(exit.at("code"), 0);
  const auto lines = wait_lines(proc, 4);
  ASSERT_EQ(lines.size(), 4u) << output(proc);
  EXPECT_EQ(lines[3], "started");
  wait_gone({std::stoi(lines[0]), std::stoi(lines[1]), std::stoi(lines[2])});

  // proc/kill ends the whole tree.
  const auto killed =
      start({{"command", "sh"},
             {"args", {"-c", "sleep 300 & echo $!; setsid sleep 300 & echo $!; exec sleep 300"}}});
  const auto children = wait_lines(killed, 2);
  ASSERT_EQ(children.size(), 2u);
  const int leader = pid_of(killed);
  EXPECT_TRUE(runs(std::stoi(children[0])));
  EXPECT_TRUE(call("proc/kill", {{"proc", killed}}).at("result").is_null());
  const auto killed_exit = wait_exit(killed);
  EXPECT_TRUE(killed_exit.at("code").is_null());
  wait_gone({leader, std::stoi(children[0]), std::stoi(children[1])});
  expect_serving();
}

TEST_F(ProcService, TheRunsEndEndsEveryProgramAndWhatItStarted) {
  const auto sleeper = start({{"command", "sleep"}, {"args", {"300"}}});
  const auto parent =
      start({{"command", "sh"},
             {"args", {"-c", "sleep 300 & echo $!; setsid sleep 300 & echo $!; exec sleep 300"}}});
  const auto children = wait_lines(parent, 2);
  ASSERT_EQ(children.size(), 2u);
  std::vector<int> pids = {pid_of(sleeper), pid_of(parent), std::stoi(children[0]),
                           std::stoi(children[1])};
  for (int pid : pids)
    EXPECT_TRUE(runs(pid)) << pid;
  const auto told = sent_.size();
  end_run();
  wait_gone(pids);
  EXPECT_EQ(sent_.size(), told) << "nothing is said once the run ended";
}

class ProcServiceForAProcess : public ProcService {
 protected:
  ProcServiceForAProcess() : ProcService(manifest::RunKind::command) {}
};

// A process is served as a sandboxed plugin is, under the same allowlist: the SDKs give one API
// for both ways a plugin runs, and only the host knows where an agent's folders are.
TEST_F(ProcServiceForAProcess, IsServedUnderTheSameAllowlist) {
  expect_serving();
  expect_refused(spawn({{"command", "git"}, {"args", {"push"}}}));
}

}  // namespace
}  // namespace escouade::services
