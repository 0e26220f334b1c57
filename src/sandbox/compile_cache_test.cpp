// The compile cache (spidermonkey/engine.hpp, CompileCache): a bundle is compiled once, kept for
// the factory's life and on disk for the next host, and a file is decoded only when it is that
// bundle's, for this build, whole.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <set>
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

// The name of the one file `folder` holds, up to the bundle's hash: this build's prefix.
std::string build_prefix_in(const fs::path& folder) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(folder))
    files.push_back(e.path());
  EXPECT_EQ(files.size(), 1u);
  const std::string name = files.empty() ? "" : files.front().filename().string();
  const auto dash = name.find('-');
  EXPECT_NE(dash, std::string::npos) << name;
  return dash == std::string::npos ? "" : name.substr(0, dash + 1);
}

std::set<std::string> names_in(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(folder))
    names.insert(e.path().filename().string());
  return names;
}

void touch(const fs::path& file, std::chrono::minutes ago) {
  std::ofstream(file) << "x";
  fs::last_write_time(file, fs::file_time_type::clock::now() - ago);
}

// After an update of the host (another build), the first write removes what the old build left:
// its files, those of an older naming, partial files of a host that died; nothing else.
TEST_F(CompileCacheTest, TheFirstWriteRemovesWhatOtherBuildsLeft) {
  TempDir dir("escouade-cache");
  const fs::path folder = dir.path() / "sandbox-cache";
  fs::create_directories(folder);
  touch(folder / "0123456789abcdef-0123456789abcdef.stencil", std::chrono::minutes(1));
  touch(folder / "fedcba9876543210.stencil", std::chrono::minutes(1));
  touch(folder / "0123456789abcdef-1.stencil.partial-77", std::chrono::minutes(60));
  touch(folder / "0123456789abcdef-2.stencil.partial-78", std::chrono::minutes(0));
  touch(folder / "notes.txt", std::chrono::minutes(60));
  use_folder(folder);
  run_echo_once();
  EXPECT_EQ(counts().written, 1u);
  const std::set<std::string> left = names_in(folder);
  EXPECT_EQ(left.size(), 3u);
  EXPECT_TRUE(left.count("notes.txt")) << "not the cache's: kept";
  EXPECT_TRUE(left.count("0123456789abcdef-2.stencil.partial-78")) << "perhaps being written";
  EXPECT_FALSE(left.count("fedcba9876543210.stencil"));
}

// Past 256 files of this build, the least recently used go; one read from disk counts as a use.
TEST_F(CompileCacheTest, PastTheMostFilesTheLeastRecentlyUsedGo) {
  TempDir dir("escouade-cache");
  use_folder(dir.path() / "first");
  run_echo_once();
  const std::string prefix = build_prefix_in(dir.path() / "first");
  ASSERT_FALSE(prefix.empty());
  const fs::path folder = dir.path() / "second";
  fs::create_directories(folder);
  for (int i = 0; i < 300; ++i)  // file i was used i minutes ago
    touch(folder / (prefix + "bundle" + std::to_string(i) + ".stencil"), std::chrono::minutes(i));
  use_folder(folder);
  run_echo_once();
  EXPECT_EQ(counts().written, 1u);
  const std::set<std::string> left = names_in(folder);
  EXPECT_EQ(left.size(), 256u);
  EXPECT_TRUE(left.count(prefix + "bundle0.stencil"));
  EXPECT_TRUE(left.count(prefix + "bundle254.stencil"));
  EXPECT_FALSE(left.count(prefix + "bundle255.stencil"));
  EXPECT_FALSE(left.count(prefix + "bundle299.stencil"));
}

TEST_F(CompileCacheTest, TheBuildNamesTheHostsVersionAndTheEngines) {
  const std::string build = spidermonkey::engine_build();
  EXPECT_EQ(build.rfind("escouade-host ", 0), 0u) << build;
  EXPECT_NE(build.find("JavaScript-C"), std::string::npos) << build;
}

}  // namespace
}  // namespace escouade::sandbox
