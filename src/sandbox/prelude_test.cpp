// The run.js prelude as JavaScript: what is embedded is the files of spidermonkey/prelude/,
// joined, and Node parses the whole prelude and both modules (`node --check`), as a linter of
// the JS an engineer edits there. The engine runs the same text in sandbox_test.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"
#include "sandbox/node_runner.hpp"
#include "sandbox/spidermonkey/prelude_parts.hpp"

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

using testing::find_node;
using testing::run_node;

TEST(Prelude, WhatIsEmbeddedIsTheFilesOfItsFolderJoined) {
  EXPECT_EQ(kPrelude, read(kPreludeDir / "beginning.js") + read(kPreludeDir / "timers.js") +
                          read(kPreludeDir / "text.js") + read(kPreludeDir / "url.js") +
                          read(kPreludeDir / "net.js") + read(kPreludeDir / "escouade.js") +
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
    const auto run = run_node(node, {"--check", (dir.path() / f.name).string()});
    EXPECT_EQ(run.status, 0) << f.name << ": " << run.err;
  }
  // The check can fail: the prelude cut short does not parse.
  std::ofstream(dir.path() / "cut.js", std::ios::binary) << kPrelude.substr(0, kPrelude.size() / 2);
  const auto cut = run_node(node, {"--check", (dir.path() / "cut.js").string()});
  EXPECT_NE(cut.status, 0);
  EXPECT_NE(cut.err.find("SyntaxError"), std::string::npos) << cut.err;
}

}  // namespace
}  // namespace escouade::sandbox::spidermonkey
