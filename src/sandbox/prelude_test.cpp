// The run.js prelude as JavaScript: what is embedded is the files of spidermonkey/prelude/,
// joined, and Node parses the whole prelude and both modules (`node --check`), as a linter of
// the JS an engineer edits there. The engine runs the same text in sandbox_test.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"
#include "sandbox/spidermonkey/prelude_parts.hpp"

extern char** environ;

namespace escouade::sandbox::spidermonkey {
namespace {

namespace fs = std::filesystem;

const fs::path kPreludeDir = ESCOUADE_PRELUDE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

// node on the PATH, or empty.
std::string find_node() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / "node";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

// `node --check file`: its exit status, its stderr in `why`.
int node_check(const std::string& node, const fs::path& file, const fs::path& err,
               std::string& why) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<std::string> args{node, "--check", file.string()};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, node.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  why = read(err);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

TEST(Prelude, WhatIsEmbeddedIsTheFilesOfItsFolderJoined) {
  EXPECT_EQ(kPrelude, read(kPreludeDir / "beginning.js") + read(kPreludeDir / "timers.js") +
                          read(kPreludeDir / "text.js") + read(kPreludeDir / "url.js") +
                          read(kPreludeDir / "end.js"));
  EXPECT_EQ(kReadlineModule, read(kPreludeDir / "readline_module.mjs"));
  EXPECT_EQ(kFsModule, read(kPreludeDir / "fs_module.mjs"));
}

TEST(Prelude, NodeParsesTheWholePreludeAndItsModules) {
  const std::string node = find_node();
  ASSERT_FALSE(node.empty()) << "node is not on the PATH (scripts/install-deps.sh installs it)";
  TempDir dir("escouade-prelude");
  const struct {
    const char* name;
    std::string_view text;
  } files[] = {{"prelude.js", kPrelude}, {"readline.mjs", kReadlineModule}, {"fs.mjs", kFsModule}};
  for (const auto& f : files) {
    std::ofstream(dir.path() / f.name, std::ios::binary) << f.text;
    std::string why;
    EXPECT_EQ(node_check(node, dir.path() / f.name, dir.path() / "err", why), 0)
        << f.name << ": " << why;
  }
  // The check can fail: the prelude cut short does not parse.
  std::ofstream(dir.path() / "cut.js", std::ios::binary) << kPrelude.substr(0, kPrelude.size() / 2);
  std::string why;
  EXPECT_NE(node_check(node, dir.path() / "cut.js", dir.path() / "err", why), 0);
  EXPECT_NE(why.find("SyntaxError"), std::string::npos) << why;
}

}  // namespace
}  // namespace escouade::sandbox::spidermonkey
