// escouade-plugin new cpp, run as an author runs it: the real binary writes a folder, then the
// folder is built as its README says (cmake and a real compiler; npm for new ts) and the real
// escouade-plugin check and test judge it.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"
#include "manifest/rules.hpp"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Ran {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `program` with `args` in `cwd` (no shell); its stdout, stderr and exit code. The two
// streams go to files of `scratch`, so a long build output never blocks the child.
Ran run(const std::string& program, const std::vector<std::string>& args, const fs::path& cwd,
        const fs::path& scratch) {
  const fs::path out_file = scratch / "out.txt";
  const fs::path err_file = scratch / "err.txt";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    std::vector<std::string> copy = args;
    std::string name = program;
    std::vector<char*> argv = {name.data()};
    for (auto& a : copy)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  Ran ran;
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return ran;
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  ran.out = read_file(out_file);
  ran.err = read_file(err_file);
  return ran;
}

// `name` as execvp would find it on the PATH, or empty.
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

// A temporary folder to scaffold into, with a scratch folder of its own for the outputs.
class Workspace {
 public:
  Workspace() { fs::create_directory(scratch()); }
  fs::path root() const { return dir_.path(); }
  fs::path scratch() const { return dir_.path() / "scratch"; }

  Ran cli(const std::vector<std::string>& args) const {
    return run(ESCOUADE_PLUGIN_BINARY, args, root(), scratch());
  }

 private:
  escouade::TempDir dir_{"scaffold-new"};
};

std::set<std::string> files_under(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_directory()) out.insert(e.path().lexically_relative(root).generic_string());
  }
  return out;
}

std::set<std::string> expected_files() {
  std::set<std::string> out = {"escouade-plugin.json", "src/main.cpp", "CMakeLists.txt",
                               "README.md", ".gitignore"};
  for (const auto& e : fs::directory_iterator(ESCOUADE_SDK_HEADERS))
    out.insert("third_party/escouade/include/escouade/" + e.path().filename().string());
  return out;
}

json::value parse_json(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  EXPECT_FALSE(ec) << text;
  return v;
}

// The bench's --json report of the plugin in `dir`, which must pass every check it runs and skip
// none. At a tenth of its speed: what is tested is that the plugin keeps to the protocol, not
// how fast it runs (built with sanitizers, on a loaded machine, a burst of 1,000 facts may take
// more than 500 ms). Null when it did not run.
json::value passing_bench_report(Workspace& ws, const fs::path& dir) {
  Ran bench = ws.cli({"test", dir.string(), "--json", "--time-scale", "10"});
  EXPECT_EQ(bench.exit_code, 0) << bench.out << bench.err;
  json::value report = parse_json(bench.out);
  EXPECT_TRUE(report.is_object()) << bench.out;
  if (!report.is_object()) return nullptr;
  EXPECT_EQ(report.at("failed"), 0) << bench.out;
  EXPECT_EQ(report.at("skipped"), 0) << bench.out;
  for (const auto& c : report.at("checks").as_array())
    EXPECT_EQ(c.at("verdict"), "pass") << json::serialize(c);
  return report;
}

TEST(ScaffoldNew, WritesEveryFileAndSaysWhatComesNext) {
  Workspace ws;
  const fs::path dir = ws.root() / "plugins" / "My Watch";
  Ran ran = ws.cli({"new", "cpp", dir.string(), "--name", "Ticket \"watch\""});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;

  EXPECT_EQ(files_under(dir), expected_files());

  const json::value manifest = parse_json(read_file(dir / "escouade-plugin.json"));
  EXPECT_EQ(manifest, parse_json(R"({
    "id": "dev.example.mywatch",
    "version": "0.1.0",
    "name": "Ticket \"watch\"",
    "run": {"command": ["./bin/mywatch"]},
    "activation": ["event:agent.status"],
    "permissions": {"events": ["agent.status", "ticket.*"], "decide": true}})"));

  for (const auto& e : fs::directory_iterator(ESCOUADE_SDK_HEADERS)) {
    EXPECT_EQ(read_file(dir / "third_party/escouade/include/escouade" / e.path().filename()),
              read_file(e.path()))
        << e.path();
  }
  EXPECT_EQ(read_file(dir / ".gitignore"), "build/\nbin/\n");
  const std::string main_cpp = read_file(dir / "src/main.cpp");
  EXPECT_NE(main_cpp.find("escouade::Plugin plugin{\"dev.example.mywatch\"}"), std::string::npos);
  EXPECT_NE(main_cpp.find("on_decide"), std::string::npos);
  EXPECT_NE(main_cpp.find("on_fact"), std::string::npos);
  const std::string readme = read_file(dir / "README.md");
  EXPECT_EQ(readme.rfind("# Ticket \"watch\"\n", 0), 0u) << readme;
  EXPECT_NE(readme.find("cmake -S . -B build && cmake --build build"), std::string::npos);
  EXPECT_NE(readme.find("escouade-plugin test ."), std::string::npos);
  EXPECT_NE(read_file(dir / "CMakeLists.txt").find("OUTPUT_NAME mywatch"), std::string::npos);

  EXPECT_NE(ran.out.find("Wrote dev.example.mywatch"), std::string::npos) << ran.out;
  for (const auto& f : expected_files())
    EXPECT_NE(ran.out.find("  " + f + "\n"), std::string::npos) << f << "\n" << ran.out;
  EXPECT_NE(ran.out.find("  cd '" + fs::canonical(dir).string() + "'\n"), std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("  cmake -S . -B build && cmake --build build\n"), std::string::npos);
  EXPECT_NE(ran.out.find("  escouade-plugin test .\n"), std::string::npos);
  EXPECT_EQ(ran.err, "");
}

TEST(ScaffoldNew, AnEmptyFolderIsTaken) {
  Workspace ws;
  fs::create_directory(ws.root() / "empty");
  Ran ran = ws.cli({"new", "cpp", "empty", "--id", "org.acme.empty-one"});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_EQ(files_under(ws.root() / "empty"), expected_files());
  EXPECT_EQ(parse_json(read_file(ws.root() / "empty/escouade-plugin.json")).at("run"),
            parse_json(R"({"command": ["./bin/empty-one"]})"));
}

TEST(ScaffoldNew, RefusesAFolderThatIsNotEmptyAndTouchesNothing) {
  Workspace ws;
  const fs::path dir = ws.root() / "busy";
  fs::create_directory(dir);
  std::ofstream(dir / "notes.txt") << "mine";
  Ran ran = ws.cli({"new", "cpp", dir.string()});
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.err.find(dir.string() + ": not empty"), std::string::npos) << ran.err;
  EXPECT_EQ(files_under(dir), std::set<std::string>{"notes.txt"});
  EXPECT_EQ(read_file(dir / "notes.txt"), "mine");
}

TEST(ScaffoldNew, RefusesAnInvalidIdInTheManifestsWordsAndMakesNoFolder) {
  Workspace ws;
  const fs::path dir = ws.root() / "bad";
  for (const std::string id : {"Dev.Example.Bad", "guard", "dev.example.bad_one"}) {
    Ran ran = ws.cli({"new", "cpp", dir.string(), "--id", id});
    EXPECT_EQ(ran.exit_code, 1) << id;
    const auto why = escouade::manifest::id_problem(id);
    ASSERT_TRUE(why) << id;
    EXPECT_NE(ran.err.find("id: \"" + id + "\": " + *why + "\n"), std::string::npos) << ran.err;
    EXPECT_EQ(ran.out, "");
    EXPECT_FALSE(fs::exists(dir));
  }
}

TEST(ScaffoldNew, RefusesAFolderNameThatGivesNoIdUnlessOneIsGiven) {
  Workspace ws;
  Ran refused = ws.cli({"new", "cpp", "___"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("--id"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(ws.root() / "___"));

  Ran taken = ws.cli({"new", "cpp", "___", "--id", "dev.example.underscores"});
  EXPECT_EQ(taken.exit_code, 0) << taken.err;
  EXPECT_TRUE(fs::exists(ws.root() / "___/escouade-plugin.json"));
}

TEST(ScaffoldNew, WantsALanguageAndAFolder) {
  Workspace ws;
  EXPECT_NE(ws.cli({"new"}).exit_code, 0);
  EXPECT_NE(ws.cli({"new", "cpp"}).exit_code, 0);
  EXPECT_NE(ws.cli({"new", "ts"}).exit_code, 0);
  EXPECT_NE(ws.cli({"new", "cobol", "x"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(ws.root() / "x"));
}

// The whole promise: as generated, one command builds it and the bench passes it.
TEST(ScaffoldNew, TheGeneratedPluginBuildsAndPassesTheConformanceBench) {
  Workspace ws;
  const fs::path dir = ws.root() / "ticket-guard";
  Ran made = ws.cli({"new", "cpp", dir.string()});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;

  Ran configure = run(ESCOUADE_CMAKE, {"-S", ".", "-B", "build"}, dir, ws.scratch());
  ASSERT_EQ(configure.exit_code, 0) << configure.out << configure.err;
  Ran build = run(ESCOUADE_CMAKE, {"--build", "build"}, dir, ws.scratch());
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_EQ((build.out + build.err).find("warning:"), std::string::npos) << build.out << build.err;

  const fs::path program = dir / "bin/ticket-guard";
  ASSERT_TRUE(fs::is_regular_file(program));
  EXPECT_EQ(::access(program.c_str(), X_OK), 0);

  Ran check = ws.cli({"check", dir.string()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(check.out.rfind("OK dev.example.ticket-guard 0.1.0 (ticket-guard)\n", 0), 0u)
      << check.out;

  const json::value report = passing_bench_report(ws, dir);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report.at("plugin").at("id"), "dev.example.ticket-guard");
  EXPECT_EQ(report.at("checks").as_array().size(), 14u);
}

// `new wasm`: the same plugin built as run.wasm with clang++-14 --target=wasm32-wasi, run by
// the bench in the sandbox.
TEST(ScaffoldNew, TheGeneratedWasmPluginBuildsAndPassesTheConformanceBench) {
  Workspace ws;
  const fs::path dir = ws.root() / "wasm-guard";
  Ran made = ws.cli({"new", "wasm", dir.string()});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  std::set<std::string> expected = expected_files();
  expected.insert("third_party/escouade/wasm/support.cpp");
  EXPECT_EQ(files_under(dir), expected);
  EXPECT_EQ(parse_json(read_file(dir / "escouade-plugin.json")).at("run"),
            parse_json(R"({"wasm": "CMakeLists.txt"})"));
  EXPECT_NE(made.out.find("built as run.wasm"), std::string::npos) << made.out;

  Ran configure = run(ESCOUADE_CMAKE, {"-S", ".", "-B", "build"}, dir, ws.scratch());
  ASSERT_EQ(configure.exit_code, 0) << configure.out << configure.err;
  Ran build = run(ESCOUADE_CMAKE, {"--build", "build"}, dir, ws.scratch());
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_EQ((build.out + build.err).find("warning:"), std::string::npos) << build.out << build.err;
  ASSERT_TRUE(fs::is_regular_file(dir / "plugin.wasm"));

  Ran check = ws.cli({"check", dir.string()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  const json::value report = passing_bench_report(ws, dir);
  ASSERT_TRUE(report.is_object());
  for (const auto& c : report.at("checks").as_array()) {
    if (c.at("name") == "starts") {
      EXPECT_EQ(c.at("reason"), "it started (plugin.wasm in the sandbox)");
    }
  }
}

// new js: nothing to build; as written, the bench passes it in the sandbox, and under Node as a
// process; both times it calls Escouade (settings/get) and takes the answer as an answer.
TEST(ScaffoldNewJs, WritesAModuleThatPassesTheConformanceBenchInTheSandbox) {
  Workspace ws;
  const fs::path dir = ws.root() / "Ticket Guard";
  Ran made = ws.cli({"new", "js", dir.string(), "--name", "Ticket \"guard\""});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  EXPECT_EQ(files_under(dir),
            (std::set<std::string>{"escouade-plugin.json", "plugin.mjs", "README.md"}));
  EXPECT_EQ(parse_json(read_file(dir / "escouade-plugin.json")), parse_json(R"({
    "id": "dev.example.ticketguard",
    "version": "0.1.0",
    "name": "Ticket \"guard\"",
    "run": {"js": "plugin.mjs"},
    "activation": ["event:agent.status"],
    "permissions": {"events": ["agent.status", "ticket.*"], "decide": true},
    "contributes": {"settings": {"verbose": {"type": "boolean", "default": false,
      "description": "Write every fact into the journal, not only the first of each kind."}}}})"));
  const std::string module = read_file(dir / "plugin.mjs");
  EXPECT_NE(module.find("import { createInterface } from 'node:readline';"), std::string::npos);
  EXPECT_NE(module.find("dev.example.ticketguard has no rule"), std::string::npos);
  EXPECT_EQ(module.find('@'), std::string::npos) << "every placeholder filled";
  EXPECT_EQ(read_file(dir / "README.md").rfind("# Ticket \"guard\"\n", 0), 0u);
  EXPECT_NE(made.out.find("Wrote dev.example.ticketguard"), std::string::npos) << made.out;
  EXPECT_NE(made.out.find("  escouade-plugin test .\n"), std::string::npos) << made.out;

  Ran check = ws.cli({"check", dir.string()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

  // Its call and the answer to it: served, and nothing answered back to the answer.
  const auto called_settings = [](const json::value& report) {
    for (const auto& c : report.at("calls").as_array())
      if (c.at("method") == "settings/get") return std::string(c.at("outcome").as_string());
    return std::string();
  };
  const json::value report = passing_bench_report(ws, dir);
  ASSERT_TRUE(report.is_object());
  for (const auto& c : report.at("checks").as_array()) {
    if (c.at("name") == "starts") {
      EXPECT_NE(json::serialize(c).find("in the sandbox"), std::string::npos);
    }
  }
  EXPECT_EQ(called_settings(report).rfind("result ", 0), 0u) << json::serialize(report.at("calls"));
  EXPECT_NE(called_settings(report).find("verbose"), std::string::npos);

  // The same module under Node, as a process (what its README says an author may do).
  const fs::path node = ws.root() / "under-node";
  fs::create_directories(node);
  fs::copy_file(dir / "plugin.mjs", node / "plugin.mjs");
  json::object manifest = parse_json(read_file(dir / "escouade-plugin.json")).as_object();
  manifest["run"] = json::object{{"command", json::array{"node", "plugin.mjs"}}};
  std::ofstream(node / "escouade-plugin.json") << json::serialize(manifest);
  const json::value under_node = passing_bench_report(ws, node);
  ASSERT_TRUE(under_node.is_object());
  EXPECT_EQ(called_settings(under_node).rfind("result ", 0), 0u)
      << json::serialize(under_node.at("calls"));
  EXPECT_NE(called_settings(under_node).find("verbose"), std::string::npos);
}

// new ts, as its README and the text after it say: npm ci from the lockfile it wrote (every
// package is in the npm cache the repository's own npm ci filled), the build, the types, its own
// tests; then the bench on its bundle in the sandbox, as written, and under Node as a process.
// No escouade-plugin check here: in the release build, its compile of a bundle this size (and
// of examples/guard-ts's) sometimes ends "without a verdict" (SandboxProgramFactory::check, a
// few runs in a hundred), which the bench's start does not go through.
TEST(ScaffoldNew, TheGeneratedTsPluginBuildsAndPassesTheConformanceBenchBothWays) {
  const std::string npm = on_path("npm");
  if (on_path("node").empty() || npm.empty()) {
    GTEST_SKIP() << "node or npm is not on the PATH (scripts/install-deps.sh installs them)";
  }
  Workspace ws;
  const fs::path dir = ws.root() / "ts-guard";
  Ran made = ws.cli({"new", "ts", dir.string(), "--name", "TS \"guard\""});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  EXPECT_EQ(made.err, "");
  EXPECT_NE(made.out.find("Wrote dev.example.ts-guard (TS \"guard\"), a TypeScript plugin"),
            std::string::npos)
      << made.out;
  EXPECT_NE(made.out.find(" && npm install && npm run build && escouade-plugin test .\n"),
            std::string::npos)
      << made.out;

  // The template's files, and the SDK's package under vendor/ as the source tree has it.
  std::set<std::string> expected = {"escouade-plugin.json", "package.json",  "package-lock.json",
                                    "tsconfig.json",        "src/plugin.ts", "src/main.ts",
                                    "test/plugin.test.ts",  "README.md",     ".gitignore"};
  const fs::path sdk = ESCOUADE_TS_SDK;
  const fs::path vendor = dir / "vendor/escouade-dev-plugin";
  for (const auto& published : {sdk / "package.json", sdk / "README.md"}) {
    expected.insert("vendor/escouade-dev-plugin/" + published.filename().string());
  }
  for (const char* folder : {"src", "bin"}) {
    for (const auto& e : fs::recursive_directory_iterator(sdk / folder)) {
      if (!e.is_regular_file()) continue;
      const std::string path = e.path().lexically_relative(sdk).generic_string();
      expected.insert("vendor/escouade-dev-plugin/" + path);
      EXPECT_EQ(read_file(vendor / path), read_file(e.path())) << path;
    }
  }
  EXPECT_EQ(files_under(dir), expected);
  EXPECT_EQ(read_file(vendor / "package.json"), read_file(sdk / "package.json"));
  EXPECT_EQ(::access((vendor / "bin/escouade-plugin-build.mjs").c_str(), X_OK), 0);
  EXPECT_EQ(parse_json(read_file(dir / "escouade-plugin.json")), parse_json(R"({
    "id": "dev.example.ts-guard",
    "version": "0.1.0",
    "name": "TS \"guard\"",
    "run": {"js": "dist/plugin.mjs"},
    "activation": ["event:agent.status"],
    "permissions": {"events": ["agent.status", "ticket.*"], "decide": true}})"));
  EXPECT_EQ(parse_json(read_file(dir / "package.json")).at("name"), "ts-guard");
  EXPECT_EQ(read_file(dir / ".gitignore"), "node_modules/\n.escouade-build/\n");

  // Each step as an author types it, no shell between.
  for (const std::vector<std::string>& step :
       {std::vector<std::string>{"ci", "--prefer-offline", "--no-audit", "--no-fund"},
        std::vector<std::string>{"run", "build"}, std::vector<std::string>{"run", "check"},
        std::vector<std::string>{"test"}}) {
    Ran ran = run(npm, step, dir, ws.scratch());
    ASSERT_EQ(ran.exit_code, 0) << "npm " << step.front() << " " << step.back() << "\n"
                                << ran.out << ran.err;
  }
  const std::string bundle = read_file(dir / "dist/plugin.mjs");
  EXPECT_EQ(bundle.rfind("// @escouade-dev/plugin ", 0), 0u) << bundle.substr(0, 80);
  // Compiled as the host compiles it at its load.
  Ran check = ws.cli({"check", dir.string()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("Module: dist/plugin.mjs compiles"), std::string::npos) << check.out;

  const auto started = [](const json::value& report) {
    for (const auto& c : report.at("checks").as_array())
      if (c.at("name") == "starts") return std::string(c.at("reason").as_string());
    return std::string();
  };
  const json::value sandboxed = passing_bench_report(ws, dir);
  ASSERT_TRUE(sandboxed.is_object());
  EXPECT_EQ(sandboxed.at("checks").as_array().size(), 14u);
  EXPECT_EQ(started(sandboxed), "it started (dist/plugin.mjs in the sandbox)");

  // The same bundle under Node, as a process: what its README says to change.
  json::object manifest = parse_json(read_file(dir / "escouade-plugin.json")).as_object();
  manifest["run"] = json::object{{"command", json::array{"node", "dist/plugin.mjs"}}};
  std::ofstream(dir / "escouade-plugin.json", std::ios::trunc) << json::serialize(manifest);
  const json::value as_process = passing_bench_report(ws, dir);
  ASSERT_TRUE(as_process.is_object());
  EXPECT_EQ(as_process.at("checks").as_array().size(), 14u);
  EXPECT_EQ(started(as_process).rfind("it started (pid ", 0), 0u) << started(as_process);
}

TEST(ScaffoldNewJs, RefusesAFolderThatIsNotEmptyAsNewCppDoes) {
  Workspace ws;
  const fs::path dir = ws.root() / "busy";
  fs::create_directory(dir);
  std::ofstream(dir / "notes.txt") << "mine";
  Ran ran = ws.cli({"new", "js", dir.string()});
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.err.find(dir.string() + ": not empty"), std::string::npos) << ran.err;
  EXPECT_EQ(files_under(dir), std::set<std::string>{"notes.txt"});
}

}  // namespace
