// The compile cache (spidermonkey/engine.hpp, CompileCache): a bundle is compiled once, kept for
// the factory's life and on disk for the next host, and a file is decoded only when it is that
// bundle's, for this build, whole.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "base/temp_dir.hpp"
#include "sandbox/sandbox_test_fixture.hpp"
#include "sandbox/spidermonkey/engine.hpp"

namespace escouade::sandbox {
namespace {

class CompileCacheTest : public Sandbox {
 protected:
  void use_folder(const fs::path& folder) {
    factory_ = std::make_unique<SandboxProgramFactory>(io_.get_executor(), folder);
  }
  spidermonkey::CompileCache::Counts counts() const { return factory_->compile_cache().counts(); }
  // The echo fixture answers its handshake and a call, then is stopped.
  void run_echo_once() {
    start("echo", "plugin.mjs");
    call(1, "initialize");
    ASSERT_TRUE(answer(1));
    call(2, "test/echo", json::object{{"n", 7}});
    auto echo = answer(2);
    ASSERT_TRUE(echo);
    EXPECT_EQ(echo->at("result").at("echo"), (json::object{{"n", 7}}));
    program_->stop();
    EXPECT_EQ(ended().reason, "stopped by Escouade");
  }
  static std::vector<fs::path> files_in(const fs::path& folder) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(folder))
      out.push_back(e.path());
    return out;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return std::move(s).str();
  }
};

TEST_F(CompileCacheTest, ARestartReusesTheCompiledBundle) {
  run_echo_once();
  run_echo_once();
  EXPECT_EQ(counts().compiled, 1u);
  EXPECT_EQ(counts().from_memory, 1u);
  EXPECT_EQ(counts().written, 0u);  // no folder: in memory only
}

TEST_F(CompileCacheTest, TheNextHostDecodesWhatTheFirstWrote) {
  TempDir dir("escouade-cache");
  const fs::path folder = dir.path() / "sandbox-cache";
  use_folder(folder);
  run_echo_once();
  EXPECT_EQ(counts().compiled, 1u);
  EXPECT_EQ(counts().written, 1u);
  ASSERT_EQ(files_in(folder).size(), 1u);
  struct stat st {};
  ASSERT_EQ(::stat(folder.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(files_in(folder).front().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read(files_in(folder).front()).rfind("escouade-stencil 1\n", 0), 0u);

  use_folder(folder);  // another host, the same data folder
  run_echo_once();
  EXPECT_EQ(counts().compiled, 0u);
  EXPECT_EQ(counts().from_disk, 1u);
}

TEST_F(CompileCacheTest, ADamagedFileIsNeverDecodedAndTheBundleIsCompiledAgain) {
  TempDir dir("escouade-cache");
  const fs::path folder = dir.path() / "c";
  use_folder(folder);
  run_echo_once();
  ASSERT_EQ(files_in(folder).size(), 1u);
  const fs::path file = files_in(folder).front();
  const std::string whole = read(file);

  std::string flipped = whole;
  flipped.back() = static_cast<char>(flipped.back() ^ 0x5a);  // a byte of the stencil
  std::ofstream(file, std::ios::binary | std::ios::trunc) << flipped;
  use_folder(folder);
  run_echo_once();
  EXPECT_EQ(counts().from_disk, 0u);
  EXPECT_EQ(counts().compiled, 1u);  // and written again, whole

  std::ofstream(file, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() / 2);
  use_folder(folder);
  run_echo_once();
  EXPECT_EQ(counts().from_disk, 0u);
  EXPECT_EQ(counts().compiled, 1u);

  // Another build's file under this one's name: its build line differs.
  std::string other = whole;
  const auto at = other.find("escouade-host ");
  ASSERT_NE(at, std::string::npos);
  other[at] = 'E';
  std::ofstream(file, std::ios::binary | std::ios::trunc) << other;
  use_folder(folder);
  run_echo_once();
  EXPECT_EQ(counts().from_disk, 0u);
  EXPECT_EQ(counts().compiled, 1u);
}

TEST_F(CompileCacheTest, LoadingCompilesTheBundleBeforeItsFirstInstance) {
  factory_->prepare(spec_of("echo", "plugin.mjs"));
  ASSERT_TRUE(run_until([&] { return counts().compiled == 1; }));
  run_echo_once();
  EXPECT_EQ(counts().compiled, 1u);
  EXPECT_EQ(counts().from_memory, 1u);
}

TEST_F(CompileCacheTest, TheBuildNamesTheHostsVersionAndTheEngines) {
  const std::string build = spidermonkey::engine_build();
  EXPECT_EQ(build.rfind("escouade-host ", 0), 0u) << build;
  EXPECT_NE(build.find("JavaScript-C"), std::string::npos) << build;
}

}  // namespace
}  // namespace escouade::sandbox
