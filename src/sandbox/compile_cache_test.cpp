// The compile cache (compile_cache.hpp): its entries on their own (CompileCache), then through the
// helpers: a bundle is compiled by a compile helper when it is loaded, kept for the factory's life
// and on disk for the next host, given to an instance only when its digest holds, and a stencil
// that does not decode costs a compile, never the host.
#include "sandbox/compile_cache.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "base/temp_dir.hpp"
#include "sandbox/sandbox_test_fixture.hpp"

namespace escouade::sandbox {
namespace {

// What find() gave, or "(none)".
std::string text_of(const std::shared_ptr<const std::string>& stencil) {
  return stencil ? *stencil : "(none)";
}

std::set<std::string> names_in(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(folder))
    names.insert(e.path().filename().string());
  return names;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

void write(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

void touch(const fs::path& file, std::chrono::minutes ago) {
  std::ofstream(file) << "x";
  fs::last_write_time(file, fs::file_time_type::clock::now() - ago);
}

const CompileCache::Key kKey = CompileCache::key_of("dev.test", "dist/plugin.mjs", "let a = 1;");

TEST(CompileCache, AKeyIsEverythingAStencilDependsOn) {
  const auto same = CompileCache::key_of("dev.test", "dist/plugin.mjs", "let a = 1;");
  EXPECT_EQ(same.digest, kKey.digest);
  EXPECT_NE(CompileCache::key_of("dev.test", "dist/plugin.mjs", "let a = 2;").digest, kKey.digest);
  EXPECT_NE(CompileCache::key_of("dev.other", "dist/plugin.mjs", "let a = 1;").digest, kKey.digest);
  EXPECT_NE(CompileCache::key_of("dev.test", "plugin.mjs", "let a = 1;").digest, kKey.digest);
  // The parts are told apart by their lengths: moving a byte from one to the next changes it.
  EXPECT_NE(CompileCache::key_of("dev.tes", "tdist/plugin.mjs", "let a = 1;").digest, kKey.digest);
  const std::string build = CompileCache::build();
  EXPECT_EQ(build.rfind("escouade ", 0), 0u) << build;
  EXPECT_NE(build.find("mozjs 1"), std::string::npos) << build;
}

TEST(CompileCache, KeptInMemoryAndOnDiskForTheNextHost) {
  TempDir dir("escouade-cache");
  const fs::path folder = dir.path() / "sandbox-cache";
  {
    CompileCache cache(folder);
    EXPECT_FALSE(cache.find(kKey));
    cache.keep(kKey, "stencil bytes");
    EXPECT_EQ(text_of(cache.find(kKey)), "stencil bytes");
    EXPECT_EQ(cache.counts().kept, 1u);
    EXPECT_EQ(cache.counts().from_memory, 1u);
    EXPECT_EQ(cache.counts().written, 1u);
  }
  struct stat st {};
  ASSERT_EQ(::stat(folder.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(names_in(folder).size(), 1u);
  const fs::path file = folder / *names_in(folder).begin();
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read(file).rfind("escouade-stencil 3\n", 0), 0u);

  CompileCache next(folder);  // another host, the same data folder
  EXPECT_EQ(text_of(next.find(kKey)), "stencil bytes");
  EXPECT_EQ(next.counts().from_disk, 1u);
  EXPECT_EQ(text_of(next.find(kKey)), "stencil bytes");
  EXPECT_EQ(next.counts().from_memory, 1u);
}

// A file is handed on only whole and its own: its digest checked, its key its own.
TEST(CompileCache, ADamagedFileIsNeverHandedOnAndIsRemoved) {
  TempDir dir("escouade-cache");
  const fs::path folder = dir.path() / "c";
  CompileCache(folder).keep(kKey, std::string(1000, 's'));
  const fs::path file = folder / *names_in(folder).begin();
  const std::string whole = read(file);

  std::string flipped = whole;
  flipped.back() = static_cast<char>(flipped.back() ^ 0x5a);  // a byte of the stencil
  write(file, flipped);
  CompileCache a(folder);
  EXPECT_FALSE(a.find(kKey));
  EXPECT_EQ(a.counts().dropped, 1u);
  EXPECT_FALSE(fs::exists(file)) << "removed: the next compile writes it whole";

  write(file, whole.substr(0, whole.size() / 2));  // cut short
  EXPECT_FALSE(CompileCache(folder).find(kKey));
  write(file, whole + "more");  // longer than it says
  EXPECT_FALSE(CompileCache(folder).find(kKey));
  write(file, "escouade-stencil 1\n" + whole.substr(19));  // an older format
  EXPECT_FALSE(CompileCache(folder).find(kKey));

  // Another key's file under this key's name.
  const auto other = CompileCache::key_of("dev.test", "dist/plugin.mjs", "let a = 3;");
  CompileCache(folder).keep(other, std::string(1000, 'o'));
  const fs::path other_file = folder / *names_in(folder).begin();
  fs::rename(other_file, file);
  EXPECT_FALSE(CompileCache(folder).find(kKey));

  // A link in place of the file is not followed.
  fs::remove(file);
  fs::create_symlink("/etc/passwd", file);
  EXPECT_FALSE(CompileCache(folder).find(kKey));
}

// Keeping a new key of a plugin's module removes its older one; dropping forgets an entry.
TEST(CompileCache, AnOlderKeyOfTheSameModuleGoesAndADroppedEntryIsForgotten) {
  TempDir dir("escouade-cache");
  const fs::path folder = dir.path() / "c";
  CompileCache cache(folder);
  const auto v1 = CompileCache::key_of("dev.a", "p.mjs", "1");
  const auto v2 = CompileCache::key_of("dev.a", "p.mjs", "2");
  const auto other = CompileCache::key_of("dev.b", "p.mjs", "1");
  cache.keep(v1, "one");
  cache.keep(other, "other");
  EXPECT_EQ(names_in(folder).size(), 2u);
  cache.keep(v2, "two");
  EXPECT_EQ(names_in(folder).size(), 2u) << "v1's file went, dev.b's stayed";
  EXPECT_FALSE(CompileCache(folder).find(v1));
  EXPECT_EQ(text_of(CompileCache(folder).find(other)), "other");
  cache.drop(v2);
  EXPECT_FALSE(cache.find(v2));
  EXPECT_EQ(names_in(folder).size(), 1u);
}

// The version of Escouade is part of the key: an update compiles again, and the cache tells
// which version the entry it replaces was compiled for.
TEST(CompileCache, AnotherVersionOfEscouadeIsAnotherKeyAndTheOldOneIsNamed) {
  TempDir dir("escouade-cache");
  const fs::path folder = dir.path() / "c";
  CompileCache cache(folder);
  const auto old_key = CompileCache::key_of("dev.a", "p.mjs", "same", "2.2.0");
  const auto new_key = CompileCache::key_of("dev.a", "p.mjs", "same", "2.3.0");
  EXPECT_NE(old_key.digest, new_key.digest);
  EXPECT_FALSE(cache.compiled_before(old_key));  // nothing kept yet
  cache.keep(old_key, "compiled for 2.2.0");
  EXPECT_FALSE(cache.compiled_before(old_key));  // its own entry is not an older one
  EXPECT_FALSE(CompileCache(folder).find(new_key));
  EXPECT_EQ(CompileCache(folder).compiled_before(new_key), "2.2.0");
  cache.keep(new_key, "compiled for 2.3.0");
  EXPECT_FALSE(cache.compiled_before(new_key));  // the older entry went
  // Another bundle of the same version: the entry it replaces was for the same Escouade.
  const auto changed = CompileCache::key_of("dev.a", "p.mjs", "changed", "2.3.0");
  EXPECT_EQ(cache.compiled_before(changed), "2.3.0");
}

// After an update of the host (another build), the first write removes what the old build left:
// its files, partial files of a host that died; nothing else.
TEST(CompileCache, TheFirstWriteRemovesWhatOtherBuildsLeft) {
  TempDir dir("escouade-cache");
  const fs::path folder = dir.path() / "sandbox-cache";
  fs::create_directories(folder);
  touch(folder / "0123456789abcdef-0123456789abcdef-00.stencil", std::chrono::minutes(1));
  touch(folder / "fedcba9876543210.stencil", std::chrono::minutes(1));
  touch(folder / "0123456789abcdef-1.stencil.partial-77", std::chrono::minutes(60));
  touch(folder / "0123456789abcdef-2.stencil.partial-78", std::chrono::minutes(0));
  touch(folder / "notes.txt", std::chrono::minutes(60));
  CompileCache cache(folder);
  cache.keep(kKey, "s");
  const std::set<std::string> left = names_in(folder);
  EXPECT_EQ(left.size(), 3u);
  EXPECT_TRUE(left.count("notes.txt")) << "not the cache's: kept";
  EXPECT_TRUE(left.count("0123456789abcdef-2.stencil.partial-78")) << "perhaps being written";
}

// Past 256 files of this build, the least recently used go; a read counts as a use.
TEST(CompileCache, PastTheMostFilesTheLeastRecentlyUsedGo) {
  TempDir dir("escouade-cache");
  const fs::path first = dir.path() / "first";
  CompileCache(first).keep(kKey, "s");
  const std::string name = *names_in(first).begin();
  const std::string prefix = name.substr(0, name.find('-') + 1);  // this build's
  const fs::path folder = dir.path() / "second";
  fs::create_directories(folder);
  for (int i = 0; i < 300; ++i)  // file i was used i minutes ago
    touch(folder / (prefix + "owner" + std::to_string(i) + "-k.stencil"),
          std::chrono::minutes(i + 1));
  CompileCache cache(folder);
  cache.keep(kKey, "s");
  const std::set<std::string> left = names_in(folder);
  EXPECT_EQ(left.size(), 256u);
  EXPECT_TRUE(left.count(name)) << "the one just written";
  EXPECT_TRUE(left.count(prefix + "owner0-k.stencil"));
  EXPECT_TRUE(left.count(prefix + "owner254-k.stencil"));
  EXPECT_FALSE(left.count(prefix + "owner255-k.stencil"));
  EXPECT_FALSE(left.count(prefix + "owner299-k.stencil"));
}

// Through the helpers.
class CompileCacheTest : public Sandbox {
 protected:
  void use_folder(const fs::path& folder) { factory_ = make_factory(folder); }
  CompileCache::Counts counts() const { return factory_->compile_cache().counts(); }
  // What Host::load does: the bundle compiled by a compile helper, waited for.
  void load_echo() {
    factory_->prepare(spec_of("echo", "plugin.mjs"));
    ASSERT_TRUE(run_until([&] { return factory_->compiling() == 0; }));
  }
  // The echo fixture answers its handshake and a call, then is stopped.
  void run_echo_once() {
    start("echo", "plugin.mjs");
    call(1, "initialize");
    ASSERT_TRUE(answer(1)) << (end_ ? end_->reason : "");
    call(2, "test/echo", json::object{{"n", 7}});
    auto echo = answer(2);
    ASSERT_TRUE(echo);
    EXPECT_EQ(echo->at("result").at("echo"), (json::object{{"n", 7}}));
    program_->stop();
    EXPECT_EQ(ended().reason, "stopped by Escouade");
  }
  CompileCache::Key echo_key() const {
    return CompileCache::key_of("dev.test.sandbox", "plugin.mjs",
                                read(kFixtures / "echo" / "plugin.mjs"));
  }
};

TEST_F(CompileCacheTest, LoadingCompilesTheBundleInAHelperAndTheInstancesDecodeIt) {
  load_echo();
  EXPECT_EQ(counts().kept, 1u);
  run_echo_once();
  run_echo_once();  // a restart decodes it too
  EXPECT_EQ(counts().from_memory, 2u);
  EXPECT_EQ(counts().dropped, 0u);
  EXPECT_EQ(counts().written, 0u);  // no folder: in memory only
}

TEST_F(CompileCacheTest, TheNextHostDecodesWhatTheFirstWrote) {
  TempDir dir("escouade-cache");
  const fs::path folder = dir.path() / "sandbox-cache";
  use_folder(folder);
  load_echo();
  EXPECT_EQ(counts().written, 1u);
  use_folder(folder);  // another host, the same data folder
  load_echo();         // kept already: nothing compiled
  EXPECT_EQ(counts().kept, 0u);
  run_echo_once();
  EXPECT_EQ(counts().from_disk, 1u);
}

// A start that comes while its load's compile runs (an app that enables a plugin right after
// loading it) finds no stencil yet and compiles the bundle in its instance, beside that compile;
// the next start decodes the compile's stencil. (A start that waited for the load's compile
// instead was measured and not kept: docs/PERFORMANCE.md, tenth round.)
TEST_F(CompileCacheTest, AStartDuringItsLoadsCompileCompilesItselfAndTheNextDecodes) {
  factory_->prepare(spec_of("echo", "plugin.mjs"));
  run_echo_once();
  EXPECT_EQ(counts().from_memory, 0u);
  ASSERT_TRUE(run_until([&] { return factory_->compiling() == 0; }));
  EXPECT_EQ(counts().kept, 1u) << "the load's compile kept its stencil";
  run_echo_once();
  EXPECT_EQ(counts().from_memory, 1u);
}

// A start during a load's compile that fails is refused with the engine's words, and the load
// said the compile failed.
TEST_F(CompileCacheTest, AStartDuringALoadsCompileThatFailsIsRefusedWithTheReason) {
  TempDir dir("escouade-broken");
  std::ofstream(dir.path() / "plugin.mjs") << "export function (\n";
  runtime::ProgramSpec spec = spec_of("echo", "plugin.mjs");
  spec.folder = dir.path();
  spec.module = dir.path() / "plugin.mjs";
  std::vector<std::string> told;
  factory_->prepare(spec, [&](std::string_view sentence) { told.emplace_back(sentence); });
  start(spec);
  call(1, "initialize");
  EXPECT_FALSE(answer(1));
  const auto end = ended();
  EXPECT_EQ(end.kind, ProgramEnd::Kind::refusal) << end.reason;
  EXPECT_NE(end.reason.find("its bundle does not compile: SyntaxError"), std::string::npos)
      << end.reason;
  ASSERT_TRUE(run_until([&] { return factory_->compiling() == 0; }));
  EXPECT_EQ(counts().kept, 0u);
  ASSERT_FALSE(told.empty());
  EXPECT_NE(told.back().find("its compile failed: its bundle does not compile: SyntaxError"),
            std::string::npos)
      << told.back();
}

// A compile helper's exit and its stencil come by different pipes: a large stencil is often read
// after the exit is known. Each compile is kept once and forgotten once, whichever comes first (a
// stencil read after the exit once made the host erase its compile twice: bench_host crashed on
// one start in two, pinned to one core).
TEST_F(CompileCacheTest, EachCompileIsKeptOnceWhicheverOfItsExitAndItsStencilComesFirst) {
  TempDir dir("escouade-large");
  constexpr int kBundles = 6;
  for (int b = 0; b < kBundles; ++b) {
    const fs::path folder = dir.path() / ("b" + std::to_string(b));
    fs::create_directories(folder);
    std::string large = read(kFixtures / "echo" / "plugin.mjs") + "\nconst t = [];\n";
    for (int i = 0; large.size() < (1u << 20); ++i)
      large += "t.push(function f" + std::to_string(i) + "(a, b) { return [a, b, " +
               std::to_string(i + b) + "]; });\n";
    std::ofstream(folder / "plugin.mjs") << large;
    runtime::ProgramSpec spec = spec_of("echo", "plugin.mjs");
    spec.plugin_id = "dev.test.large" + std::to_string(b);
    spec.folder = folder;
    spec.module = folder / "plugin.mjs";
    factory_->prepare(spec);
  }
  ASSERT_TRUE(run_until([&] { return factory_->compiling() == 0; }));
  EXPECT_EQ(counts().kept, static_cast<std::size_t>(kBundles));
  run_echo_once();  // the factory still serves
}

// Issue 26: a garbage stencil crashed the host. Now it reaches only a helper, whose engine
// refuses it (or crashes on it): the entry is dropped, the bundle compiled in the instance, and
// the plugin answers.
TEST_F(CompileCacheTest, AStencilThatDoesNotDecodeCostsACompileNeverTheHost) {
  TempDir dir("escouade-cache");
  const fs::path folder = dir.path() / "c";
  CompileCache(folder).keep(echo_key(), std::string(4096, '\x5a'));  // its digest holds
  use_folder(folder);
  start("echo", "plugin.mjs");
  call(1, "initialize");
  if (!answer(1)) {
    // Its helper died on it before its module was ready: dropped, and the next start compiles.
    ASSERT_TRUE(end_);
    EXPECT_EQ(end_->kind, ProgramEnd::Kind::crash);
    run_echo_once();
  } else {
    call(2, "test/echo", 1);
    EXPECT_TRUE(answer(2));
  }
  EXPECT_EQ(counts().from_disk, 1u);
  ASSERT_TRUE(run_until([&] { return counts().dropped == 1; }));
  EXPECT_TRUE(names_in(folder).empty()) << "its file removed";
}

}  // namespace
}  // namespace escouade::sandbox
