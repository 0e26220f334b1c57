// Hostile run.js and run.wasm plugins against a real escouade-host (issue 26), each beside two
// good plugins that must keep answering: a process (the fixture plugin) and a run.js plugin (the
// sandbox's echo fixture). Each attack ends its own instance at most, with a sentence a person
// understands, and nothing else: the host lives, its memory stays bounded, the others answer.
// Then the helpers themselves: what a running one holds (its filter, its descriptors, its
// environment), one killed from outside, the host killed. docs/SECURITY.md lists each guard.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/sanitizers.hpp"
#include "host_client.hpp"
#include "sandbox/compile_cache.hpp"
#include "sandbox/lockdown.hpp"

namespace escouade::testing {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

const fs::path kFixtures = ESCOUADE_SANDBOX_FIXTURES;
const fs::path kWasmModules = ESCOUADE_WASM_FIXTURES;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

// A run.js plugin `id` under the host's plugins folder whose plugin.mjs is `bundle`'s text.
fs::path js_plugin(HostClient& host, const std::string& id, const std::string& bundle) {
  const fs::path dir = host.plugins_dir() / id;
  fs::create_directories(dir);
  std::ofstream(dir / "plugin.mjs") << bundle;
  std::ofstream(dir / "escouade-plugin.json") << json::serialize(
      json::object{{"id", id},
                   {"version", "1.0.0"},
                   {"name", id},
                   {"run", json::object{{"js", "plugin.mjs"}}},
                   {"activation", json::array{"event:agent.status"}},
                   {"permissions", json::object{{"events", json::array{"agent.status"}}}}});
  return dir;
}
fs::path attack_plugin(HostClient& host, const std::string& id, const std::string& fixture) {
  return js_plugin(host, id, read_file(kFixtures / "attacks" / fixture));
}

// A run.wasm plugin `id`: `module` of the wasm fixtures as its plugin.wasm.
fs::path wasm_plugin(HostClient& host, const std::string& id, const std::string& module) {
  const fs::path dir = host.plugins_dir() / id;
  fs::create_directories(dir);
  fs::copy_file(kWasmModules / module, dir / "plugin.wasm", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "Makefile") << "plugin.wasm:\n";
  std::ofstream(dir / "escouade-plugin.json") << json::serialize(
      json::object{{"id", id},
                   {"version", "1.0.0"},
                   {"name", id},
                   {"run", json::object{{"wasm", "Makefile"}}},
                   {"activation", json::array{"event:agent.status"}},
                   {"permissions", json::object{{"events", json::array{"agent.status"}}}}});
  return dir;
}

// A line of /proc/<pid>/status ("Seccomp:\t2" gives "2").
std::string status_field(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      std::string value = line.substr(field.size() + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      return value;
    }
  }
  return "";
}

// The sandbox helpers whose parent is `parent` now (a host's: its plugins' and its spare).
std::vector<int> helpers_of(int parent) {
  std::vector<int> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline(e.path() / "cmdline", std::ios::binary);
    std::string argv0;
    std::getline(cmdline, argv0, '\0');
    if (!argv0.ends_with("/escouade-sandbox")) continue;
    if (status_field(std::stoi(name), "PPid") == std::to_string(parent))
      out.push_back(std::stoi(name));
  }
  return out;
}

long resident_kb(int pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

constexpr bool sanitized() {
  return kAddressSanitizer;
}

class SandboxAttack : public ::testing::Test {
 public:
  // Under AddressSanitizer, the host it starts keeps what it frees in a quarantine of 256 MB by
  // default, which would count as held in the measures of what the host holds: 16 MB still
  // catches a use after free of what these attacks make.
  static void SetUpTestSuite() {
    if (!sanitized()) return;
    const char* given = std::getenv("ASAN_OPTIONS");
    const std::string options =
        (given && *given ? std::string(given) + ":" : std::string()) + "quarantine_size_mb=16";
    ::setenv("ASAN_OPTIONS", options.c_str(), 1);
  }

 protected:
  SandboxAttack() {
    process_ =
        host_.load_and_enable(make_plugin(host_.plugins_dir(), {"dev.test.bystander-process"}));
    const fs::path echo = host_.plugins_dir() / "bystander-js";
    fs::copy(kFixtures / "echo", echo, fs::copy_options::recursive);
    std::ofstream(echo / "escouade-plugin.json") << json::serialize(
        json::object{{"id", "dev.test.bystander-js"},
                     {"version", "1.0.0"},
                     {"name", "bystander"},
                     {"run", json::object{{"js", "plugin.mjs"}}},
                     {"activation", json::array{"event:agent.status"}},
                     {"permissions", json::object{{"events", json::array{"agent.status"}}}}});
    js_ = host_.load_and_enable(echo);
    expect_bystanders_answer();
  }

  // Both good plugins answer, and the host still runs.
  void expect_bystanders_answer() {
    const std::int64_t n = ++round_;
    EXPECT_EQ(host_.call_plugin(process_, "test/echo", json::object{{"n", n}}),
              (json::object{{"n", n}}));
    EXPECT_EQ(host_.call_plugin(js_, "test/echo", json::object{{"n", n}}).at("echo"),
              (json::object{{"n", n}}));
    EXPECT_TRUE(process_alive(host_.pid()));
  }

  HostClient::Answer attack(const std::string& id, const std::string& method,
                            json::value params = json::object{}) {
    return host_.call(
        "host/call",
        json::object{
            {"id", id}, {"method", method}, {"params", std::move(params)}, {"timeoutMs", 30000}});
  }

  HostClient host_;
  std::string process_;
  std::string js_;
  std::int64_t round_ = 0;
};

TEST_F(SandboxAttack, OneJsonParseThatExhaustsTheEngineEndsItsInstanceOnly) {
  const auto id = host_.load_and_enable(attack_plugin(host_, "dev.attack.oom", "oom_parse.mjs"));
  EXPECT_TRUE(host_.call_plugin(id, "test/echo", json::object{}).is_object());
  const auto a = attack(id, "test/attack");
  EXPECT_FALSE(a.ok()) << a.line;
  const std::string line = host_.wait_journal(id, "crashed: ");
  const bool memory =
      line.find("its instance ran past 64 MB of memory: Escouade stopped it") != std::string::npos;
  // Under AddressSanitizer, which replaces malloc, the account sees only the engine's own heap,
  // and the parse, ten times slower, may reach the end of its turn first on a busy machine.
  const bool turn = sanitized() && line.find("a turn ran past 2000 ms") != std::string::npos;
  EXPECT_TRUE(memory || turn) << line;
  expect_bystanders_answer();
  // Its next instance is a new one, and answers.
  EXPECT_TRUE(host_.call_plugin(id, "test/echo", json::object{}).is_object());
}

TEST_F(SandboxAttack, AnEscouadeCallOfManyMegabytesOfZerosIsSentAsTextNotParsed) {
  const auto id = host_.load_and_enable(wasm_plugin(host_, "dev.attack.zeros", "echo.wasm"));
  // 6 MiB of [0,0,...]: about 100 MB once parsed into JSON values in the instance, which ended
  // the host by a bad_alloc. The host answers its own -32601: the call went out whole.
  // 30 s as a safety net, not the call's default 5 s: under AddressSanitizer on one core beside
  // three busy loops (scripts/stress.sh) the 6 MiB go through the host in about 4 s, and a
  // hiccup of the machine passed 5 s once in 768 runs.
  const auto a = host_.call("host/call", json::object{{"id", id},
                                                      {"method", "test/zeros"},
                                                      {"params", json::object{{"mib", 6}}},
                                                      {"timeoutMs", 30000}});
  ASSERT_TRUE(a.ok()) << a.error_message;
  const json::value& r = a.result;
  EXPECT_EQ(r.at("code"), 1);
  expect_bystanders_answer();
  EXPECT_EQ(host_.status(id).at("crashes"), 0);
}

TEST_F(SandboxAttack, LinksInItsFolderLeadNowhereForReadFileSync) {
  const fs::path dir = attack_plugin(host_, "dev.attack.links", "reads.mjs");
  TempDir outside;
  std::ofstream(outside.path() / "id_ed25519") << "-----BEGIN OPENSSH PRIVATE KEY-----";
  std::ofstream(dir / "rules.json") << R"({"ok":true})";
  fs::create_symlink("/etc/passwd", dir / "passwd.json");
  fs::create_symlink("/proc/self/environ", dir / "environ.json");
  fs::create_symlink(outside.path() / "id_ed25519", dir / "key.json");
  // Another plugin's journal, and the host's file keychain, where they lie.
  fs::create_symlink(host_.data_dir() / "plugin-logs" / (js_ + ".log"), dir / "journal.json");
  const auto id = host_.load_and_enable(dir);
  EXPECT_EQ(host_.call_plugin(id, "test/read", json::object{{"name", "rules.json"}}).at("text"),
            R"({"ok":true})");
  for (const char* name : {"passwd.json", "environ.json", "key.json", "journal.json"}) {
    const json::value r = host_.call_plugin(id, "test/read", json::object{{"name", name}});
    EXPECT_FALSE(r.as_object().contains("text")) << name << ": " << json::serialize(r);
  }
  expect_bystanders_answer();
}

TEST_F(SandboxAttack, AnswersItNeverReadsStopItsOutputAndTheHostHoldsABoundedAmount) {
  const fs::path dir = attack_plugin(host_, "dev.attack.greedy", "greedy.mjs");
  std::ofstream(dir / "big.txt") << std::string(250 * 1024, 'b');
  const auto id = host_.load_and_enable(dir);
  const long before = resident_kb(host_.pid());
  EXPECT_EQ(host_.call_plugin(id, "test/attack", json::object{}).at("started"), true);
  // It asks as fast as it can until the host stops reading it: the answers it does not read
  // fill its input (4 MiB), its calls in flight are at most 128.
  EXPECT_FALSE(host_.wait_journal(id, "its input is full").empty());
  for (int i = 0; i < 20; ++i)
    expect_bystanders_answer();
  const long after = resident_kb(host_.pid());
  // 4 MiB of its input, 128 answers of 250 KiB, what its lines and the journal take: far
  // below the 1.3 GB the same plugin reached inside the host's process.
  EXPECT_LT(after - before, 128 * 1024) << before << " KB then " << after << " KB";
  EXPECT_EQ(host_.status(id).at("state"), "running");  // stuck in its turn, costing no CPU
}

TEST_F(SandboxAttack, CodeThatRunsToDescribeAThrownValueIsHeldToTheTurnsLimits) {
  const auto id =
      host_.load_and_enable(attack_plugin(host_, "dev.attack.tostring", "throw_spin.mjs"));
  EXPECT_TRUE(host_.call_plugin(id, "test/echo", json::object{}).is_object());
  EXPECT_FALSE(attack(id, "test/attack").ok());
  const std::string line = host_.wait_journal(id, "crashed: ");
  EXPECT_TRUE(
      line.find("a turn ran past 2000 ms: Escouade stopped its instance") != std::string::npos ||
      line.find("its instance ran past 64 MB of memory: Escouade stopped it") != std::string::npos)
      << line;
  expect_bystanders_answer();
}

TEST_F(SandboxAttack, HugeBundlesAndModulesAreRefusedWithTheirReason) {
  // 40 MB of bundle, 100 MB of plugin.wasm: refused at load, named.
  const fs::path big =
      js_plugin(host_, "dev.attack.bigbundle", "// big\n" + std::string(40u << 20, ' ') + "\n");
  const auto bundle = host_.call("host/load", json::object{{"folder", big.string()}});
  ASSERT_FALSE(bundle.ok());
  EXPECT_NE(bundle.error_message.find("past the 8 MiB a sandboxed plugin's module may have"),
            std::string::npos)
      << bundle.error_message;
  const fs::path module = wasm_plugin(host_, "dev.attack.bigwasm", "echo.wasm");
  std::ofstream(module / "plugin.wasm", std::ios::binary | std::ios::trunc)
      << std::string(100u << 20, '\0');
  const auto wasm = host_.call("host/load", json::object{{"folder", module.string()}});
  ASSERT_FALSE(wasm.ok());
  EXPECT_NE(wasm.error_message.find("past the 16 MiB"), std::string::npos) << wasm.error_message;

  // Within the size, a bundle of 256 KiB of code whose first timer needs more than its memory:
  // it runs some of its functions and keeps what they make, with arrays of 14 numbers (one GC
  // thing each). Each instance ends for it, with the sentence of the memory, and the fourth end
  // stops it. (A compile past the memory is a refusal, a top level past it an end: sandbox_test.)
  // The growth is in a timer's turn, after the handshake, so that only the turn's 2 s of CPU
  // bound it: at its top level, initialize's 10 s of the wall clock did too, and on one loaded
  // core (scripts/stress.sh, AddressSanitizer) an instance took 3-4 s of it to reach 64 MB
  // alone, and once more than 10 s. Running all of its functions and keeping a dozen small
  // objects each took 1.2-1.6 s of CPU there; keeping arrays takes 0.4-0.7 s. Its first start
  // compiles the bundle itself when the compile begun at its load has not ended, within
  // initialize's 10 s: a bundle of 1 MiB once took longer than that there (a fresh clone's stress
  // round), each start compiling it beside the load's compile.
  std::string dense = "const t = [];\n";
  for (int i = 0; dense.size() < (256u << 10); ++i)
    dense += "t.push(function f" + std::to_string(i) + "(a,b){const o={x:a+" + std::to_string(i) +
             ",y:[b,'s',[a],[b],{a},{b}],z:{k:'v',l:{m:a},n:[{},{},{}]}};if(a<0){return f0(a+1,b);}"
             "return o;});\n";
  dense +=
      "const kept = [];\nconst some = t.slice(0, 64);\n"
      "setTimeout(() => { for (;;) for (const f of some) {\n  kept.push(f(kept.length, 2));\n"
      "  for (let k = 0; k < 64; k++) kept.push([k,k,k,k,k,k,k,k,k,k,k,k,k,k]);\n} }, 0);\n";
  const auto id = host_.load_and_enable(js_plugin(host_, "dev.attack.dense", dense));
  EXPECT_FALSE(attack(id, "test/echo").ok());
  const json::value stopped = host_.wait_status(id, "stopped");
  EXPECT_EQ(stopped.at("reason"), "stopped after 4 crashes within 5 minutes");
  std::size_t memory_ends = 0;
  for (const std::string& line : host_.journal(id)) {
    if (line.find("crashed: ") == std::string::npos) continue;
    EXPECT_NE(line.find("crashed: its instance ran past 64 MB of memory: Escouade stopped it"),
              std::string::npos)
        << line;
    // Nothing of the helper's own in its stderr: its watchdog's tick allocated, and past twice
    // the limit (the account refusing) that ended the process on std::bad_alloc, "terminate
    // called after throwing an instance of 'St9bad_alloc'" in this line 3 times in 4.
    EXPECT_NE(line.find("Escouade stopped it; last lines of stderr: none"), std::string::npos)
        << line;
    ++memory_ends;
  }
  EXPECT_EQ(memory_ends, 4u);
  expect_bystanders_answer();
}

// A compile kept in the data folder whose digest holds but whose bytes are garbage (a damaged
// engine, a writer of the user's folder): it reaches only a helper, is dropped, and costs a
// compile; the plugin answers.
TEST_F(SandboxAttack, AGarbageStencilInTheCacheCostsACompileNeverTheHost) {
  const std::string id = "dev.attack.stencil";
  const fs::path dir = js_plugin(host_, id, read_file(kFixtures / "echo" / "plugin.mjs"));
  sandbox::CompileCache(host_.data_dir() / "sandbox-cache")
      .keep(sandbox::CompileCache::key_of(id, "plugin.mjs", read_file(dir / "plugin.mjs")),
            std::string(64 * 1024, '\x7f'));
  host_.load_and_enable(dir);
  const auto first = attack(id, "test/echo", json::object{{"n", 1}});
  if (!first.ok()) {  // its helper died on it
    EXPECT_FALSE(host_.wait_journal(id, "crashed: ").empty());
  }
  EXPECT_EQ(host_.call_plugin(id, "test/echo", json::object{{"n", 2}}).at("echo"),
            (json::object{{"n", 2}}));
  expect_bystanders_answer();
}

// Issue 26: a shutdown while a load's compile ran crashed the host at its exit (the engine was
// the host's). The compile is a helper's now, ended with the others.
TEST_F(SandboxAttack, AShutdownDuringALoadsCompileEndsCleanly) {
  std::string large = read_file(kFixtures / "echo" / "plugin.mjs") + "\nconst t = [];\n";
  for (int i = 0; large.size() < (2u << 20); ++i)
    large += "t.push(function f" + std::to_string(i) + "(a,b){return [a,b," + std::to_string(i) +
             "];});\n";
  const auto loaded = host_.call(
      "host/load",
      json::object{{"folder", js_plugin(host_, "dev.attack.compiling", large).string()}});
  ASSERT_TRUE(loaded.ok()) << loaded.error_message;
  const std::vector<int> helpers = helpers_of(host_.pid());
  const auto shut = host_.call("host/shutdown", json::object{});
  EXPECT_TRUE(shut.ok()) << shut.error_message;
  EXPECT_EQ(host_.wait_exit(), 0);
  EXPECT_TRUE(eventually([&] {
    for (int helper : helpers)
      if (process_alive(helper)) return false;
    return true;
  }));
}

// A helper is ended from outside (SIGKILL): a crash of that plugin, restarted; the others go on.
TEST_F(SandboxAttack, AHelperKilledFromOutsideIsACrashOfItsPluginOnly) {
  const int helper = static_cast<int>(host_.status(js_).at("pid").as_int64());
  ASSERT_EQ(::kill(helper, SIGKILL), 0);
  const std::string line = host_.wait_journal(js_, "crashed: ");
  EXPECT_NE(line.find("its instance crashed: its process was killed (signal 9, SIGKILL)"),
            std::string::npos)
      << line;
  expect_bystanders_answer();
  EXPECT_EQ(host_.status(js_).at("crashes"), 1);
  EXPECT_NE(host_.status(js_).at("pid").as_int64(), helper);
}

// What a running helper holds, read from outside as the issue's check does: its filter, its
// flags, its descriptors (its pipes and its control pipe), its environment (none).
TEST_F(SandboxAttack, ARunningHelperIsLockedDown) {
  const int helper = static_cast<int>(host_.status(js_).at("pid").as_int64());
  EXPECT_EQ(status_field(helper, "Seccomp"), "2");  // a filter
  EXPECT_EQ(status_field(helper, "NoNewPrivs"), "1");
  std::map<int, std::string> fds;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(helper) + "/fd"))
    fds[std::stoi(e.path().filename().string())] = fs::read_symlink(e.path()).string();
  ASSERT_EQ(fds.size(), 4u);
  for (const auto& [fd, what] : fds)
    EXPECT_EQ(what.rfind("pipe:", 0), 0u) << fd << " -> " << what;
  EXPECT_EQ(read_file("/proc/" + std::to_string(helper) + "/environ"), "");
  // Not dumpable: its /proc files are root's, not the user's.
  struct stat st {};
  ASSERT_EQ(::stat(("/proc/" + std::to_string(helper) + "/environ").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  // Its rlimits, as /proc says them.
  const std::string limits = read_file("/proc/" + std::to_string(helper) + "/limits");
  EXPECT_NE(limits.find("Max core file size        0"), std::string::npos) << limits;
  const std::string files = std::to_string(sandbox::lockdown::open_files(4));
  EXPECT_NE(limits.find("Max open files            " + files + std::string(21 - files.size(), ' ') +
                        files),
            std::string::npos)
      << limits;
}

// The host killed (SIGKILL, no shutdown): its watchdog ends every helper, as it ends plugins'
// process trees.
TEST_F(SandboxAttack, TheHostKilledLeavesNoHelperBehind) {
  const auto wasm = host_.load_and_enable(wasm_plugin(host_, "dev.attack.wasmhost", "echo.wasm"));
  EXPECT_TRUE(host_.call_plugin(wasm, "test/echo", 1).is_object());
  // Its plugins' two, and its spare, made again a second after the last start took one
  // (SandboxOptions::spare_delay).
  std::vector<int> helpers;
  ASSERT_TRUE(eventually([&] {
    helpers = helpers_of(host_.pid());
    return helpers.size() >= 3u;
  }));
  host_.kill_host();
  EXPECT_TRUE(eventually([&] {
    for (int helper : helpers)
      if (process_alive(helper)) return false;
    return true;
  }));
}

}  // namespace
}  // namespace escouade::testing
