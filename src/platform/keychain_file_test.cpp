// The file store's own cases (the behaviour it shares with the Secret Service is in
// keychain_test.cpp): modes, names that try to leave the folder, replacement that is never seen
// half done, even across a crash, and errors as sentences.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <set>
#include <thread>

#include "platform/errors.hpp"
#include "platform/keychain.hpp"
#include "support/keychain_test_support.hpp"

namespace escouade::platform {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

namespace fs = std::filesystem;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

// Every entry under `root`, at any depth, as paths relative to it.
std::set<std::string> entries_under(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    out.insert(fs::relative(e.path(), root).string());
  return out;
}

std::string text_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class FileKeychain : public ::testing::Test {
 protected:
  TempDir root_;
  fs::path dir_ = root_.path() / "store";
  std::unique_ptr<Keychain> keychain_ = make_file_keychain(dir_);
};

TEST_F(FileKeychain, DescribesItselfAsNotAKeychain) {
  EXPECT_EQ(keychain_->describe(), "the file store in " + dir_.string() + " (not a keychain)");
}

TEST_F(FileKeychain, TheFolderIs0700AndEachSecret0600) {
  const fs::path nested = root_.path() / "a" / "b" / "store";
  const mode_t previous = ::umask(0);  // the modes are the store's, not the umask's
  auto store = make_file_keychain(nested);
  auto kept = store->set("plugin:dev.example.guard:token", "v");
  ::umask(previous);
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_EQ(mode_of(root_.path() / "a"), 0700u);
  EXPECT_EQ(mode_of(root_.path() / "a" / "b"), 0700u);
  EXPECT_EQ(mode_of(nested), 0700u);
  const std::set<std::string> files = entries_under(nested);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(*files.begin(), "plugin%3Adev.example.guard%3Atoken");
  EXPECT_EQ(mode_of(nested / *files.begin()), 0600u);
  EXPECT_EQ(text_of(nested / *files.begin()), "v");
}

TEST_F(FileKeychain, NoNameLeavesTheFolderNorHidesInIt) {
  const std::vector<std::string> names = {
      "../../etc/passwd",
      "a/b",
      ".hidden",
      ".",
      "..",
      "/abs",
      "a%2Fb",
      "%2E%2E",
      "..%2F",
      std::string("odd \x01\x7f\xff\xc3(\\ \t\n\"*?<>|:") + "~ end"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto kept = keychain_->set(names[i], "value " + std::to_string(i));
    ASSERT_TRUE(kept) << names[i] << ": " << kept.error().message;
  }
  // Each name is its own secret: none overwrote another.
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(*keychain_->get(names[i]), std::optional<std::string>("value " + std::to_string(i)))
        << names[i];
  }
  // Nothing outside the folder; inside, only plain files, none hidden, none in a subfolder.
  EXPECT_EQ(entries_under(root_.path()).size(), names.size() + 1);
  const std::set<std::string> files = entries_under(dir_);
  EXPECT_EQ(files.size(), names.size());
  for (const std::string& f : files) {
    EXPECT_NE(f.front(), '.') << f;
    EXPECT_EQ(f.find('/'), std::string::npos) << f;
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir_ / f))) << f;
  }
  for (const std::string& name : names)
    ASSERT_TRUE(keychain_->remove(name)) << name;
  EXPECT_TRUE(entries_under(dir_).empty());
}

TEST_F(FileKeychain, APlantedSymlinkIsNeitherReadNorWrittenThrough) {
  ASSERT_TRUE(keychain_->set("plugin:x:token", "mine"));
  const fs::path outside = root_.path() / "outside";
  { std::ofstream(outside) << "not a secret"; }
  const fs::path file = dir_ / "plugin%3Ax%3Atoken";
  fs::remove(file);
  fs::create_symlink(outside, file);

  auto got = keychain_->get("plugin:x:token");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, Errc::unreachable);
  EXPECT_THAT(
      got.error().message,
      HasSubstr("the file store cannot read the secret plugin:x:token in " + dir_.string()));

  ASSERT_TRUE(keychain_->set("plugin:x:token", "replaced"));
  EXPECT_EQ(text_of(outside), "not a secret");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(file)));
  EXPECT_EQ(*keychain_->get("plugin:x:token"), std::optional<std::string>("replaced"));
}

TEST_F(FileKeychain, AMissingFolderHasNoSecretsAndIsCreatedOnSet) {
  const fs::path later = root_.path() / "later";
  auto store = make_file_keychain(later);
  fs::remove_all(later);  // gone again after construction
  EXPECT_EQ(*store->get("plugin:x:token"), std::nullopt);
  EXPECT_TRUE(store->remove("plugin:x:token"));
  ASSERT_TRUE(store->set("plugin:x:token", "v"));
  EXPECT_EQ(mode_of(later), 0700u);
  EXPECT_EQ(*store->get("plugin:x:token"), std::optional<std::string>("v"));
}

TEST_F(FileKeychain, AFileWhereTheFolderShouldBeGivesSentences) {
  const fs::path blocked = root_.path() / "blocked";
  { std::ofstream(blocked) << "a file"; }
  auto store = make_file_keychain(blocked);

  auto kept = store->set("plugin:x:token", "v");
  ASSERT_FALSE(kept);
  EXPECT_EQ(kept.error().code, Errc::unreachable);
  EXPECT_EQ(kept.error().message,
            "the file store's folder " + blocked.string() + " is not a folder");

  auto got = store->get("plugin:x:token");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().message, "the file store cannot read the secret plugin:x:token in " +
                                     blocked.string() + ": Not a directory");

  auto removed = store->remove("plugin:x:token");
  ASSERT_FALSE(removed);
  EXPECT_EQ(removed.error().message, "the file store cannot forget the secret plugin:x:token in " +
                                         blocked.string() + ": Not a directory");
}

TEST_F(FileKeychain, AParentThatIsAFileGivesASentence) {
  const fs::path blocked = root_.path() / "blocked";
  { std::ofstream(blocked) << "a file"; }
  auto store = make_file_keychain(blocked / "store");
  auto kept = store->set("plugin:x:token", "v");
  ASSERT_FALSE(kept);
  EXPECT_EQ(kept.error().message, "the file store cannot create its folder " +
                                      (blocked / "store").string() + ": Not a directory");
}

// Two stores on one folder, so that the reader is not serialized with the writer by the
// store's own lock: only the rename keeps it from a half-written file.
TEST_F(FileKeychain, AReaderNeverSeesAHalfWrittenSecret) {
  const std::string name = "plugin:x:token";
  const std::string small(100, 's');
  const std::string large(200000, 'L');
  ASSERT_TRUE(keychain_->set(name, small));
  auto reader = make_file_keychain(dir_);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 100; ++i)
      (void)keychain_->set(name, i % 2 == 0 ? large : small);
    done = true;
  });
  int reads = 0;
  std::vector<std::string> torn;
  while (!done || reads == 0) {
    auto got = reader->get(name);
    ++reads;
    if (!got || !got->has_value() || (**got != small && **got != large)) {
      torn.push_back(!got               ? got.error().message
                     : got->has_value() ? std::to_string((*got)->size()) + " bytes"
                                        : "none");
    }
  }
  writer.join();
  EXPECT_THAT(torn, ::testing::IsEmpty()) << "of " << reads << " reads";
}

// A writer killed in the middle of its sets (SIGKILL, no cleanup) leaves one of the values it
// wrote, whole. Its temporary file may stay behind; it is never taken for a secret.
TEST_F(FileKeychain, AWriterKilledMidwayLeavesAWholeSecret) {
  const std::string name = "plugin:x:token";
  const std::string one(200000, '1');
  const std::string two(250000, '2');
  std::set<std::string> seen;
  for (int round = 0; round < 10; ++round) {
    ASSERT_TRUE(keychain_->set(name, one));
    int progress[2];
    ASSERT_EQ(::pipe(progress), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(progress[0]);
      auto store = make_file_keychain(dir_);
      for (int i = 0;; ++i) {
        (void)store->set(name, i % 2 == 0 ? two : one);
        (void)::write(progress[1], "s", 1);
      }
    }
    ::close(progress[1]);
    // After a different number of whole sets each round, while the next one is under way.
    for (int done = 0; done <= round; ++done) {
      char byte = 0;
      ASSERT_EQ(::read(progress[0], &byte, 1), 1);
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ::close(progress[0]);

    auto got = keychain_->get(name);
    ASSERT_TRUE(got) << got.error().message;
    ASSERT_TRUE(got->has_value());
    EXPECT_TRUE(**got == one || **got == two)
        << "round " << round << ": " << (*got)->size() << " bytes";
    seen.insert(**got);
  }
  EXPECT_EQ(seen.size(), 2u);  // the kills came at different points of the writing
}

}  // namespace
}  // namespace escouade::platform
