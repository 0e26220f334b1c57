#include "services/files.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <ostream>
#include <string>
#include <thread>

#include "base/temp_dir.hpp"
#include "protocol/wire_error.hpp"

namespace escouade::platform {
// How GoogleTest names a resolver in its output (found by argument-dependent lookup).
void PrintTo(BeneathResolver r, std::ostream* out) {
  *out << (r == BeneathResolver::openat2_only ? "openat2"
           : r == BeneathResolver::walk_only  ? "walk"
                                              : "automatic");
}
}  // namespace escouade::platform

namespace escouade::services {
namespace {

namespace fs = std::filesystem;
using platform::BeneathResolver;

// As files/read reads: the folder opened (as at load), then the path beneath it.
Result<std::string> read_own_file(const fs::path& folder, std::string_view path,
                                  BeneathResolver resolver = BeneathResolver::automatic) {
  return services::read_own_file(*OwnFolder::open(folder), path, resolver);
}

constexpr auto kInvalid = proto::ErrorCode::invalid_params;
constexpr auto kRefused = proto::ErrorCode::refused;
constexpr auto kFailed = proto::ErrorCode::failed;
constexpr auto kNotFound = proto::ErrorCode::not_found;

const std::string kManifest = R"({"id":"dev.example.guard","version":"1.0.0","name":"Guard"})";
const std::string kOutside = "OUTSIDE SECRET";
const std::string kEscapes =
    "the path leaves the folder (through '..', an absolute link or a link that climbs out)";

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::string resolver_name(BeneathResolver r) {
  switch (r) {
    case BeneathResolver::openat2_only:
      return "Openat2";
    case BeneathResolver::walk_only:
      return "Walk";
    case BeneathResolver::automatic:
      break;
  }
  return "Automatic";
}

// A fresh <tmp>/plugin (the plugin's folder) beside <tmp>/outside for each test.
class PluginFolder {
 public:
  PluginFolder() {
    fs::create_directories(root() / "data");
    fs::create_directories(outside());
    write(root() / "escouade-plugin.json", kManifest);
    write(outside() / "secret.txt", kOutside);
  }
  PluginFolder(const PluginFolder&) = delete;
  PluginFolder& operator=(const PluginFolder&) = delete;

  fs::path root() const { return base_ / "plugin"; }
  fs::path outside() const { return base_ / "outside"; }

  // Every file, folder and link the table of cases reads.
  void populate() const {
    const fs::path r = root();
    write(r / "rules.json", R"({"rules":[]})");
    write(r / "data" / "words.txt", "alpha\nbeta\n");
    write(r / "%2e%2e", "a name of six characters");
    write(r / "my notes.txt", "notes");
    fs::create_directories(r / "donn\xc3\xa9\x65s");
    write(r / "donn\xc3\xa9\x65s" / "\xc3\xa9t\xc3\xa9.txt", "\xc3\xa9t\xc3\xa9");
    write(r / "line\nbreak.txt", "a newline in its name");
    write(r / ".env", "TOKEN=x");
    fs::create_directories(r / ".git");
    write(r / ".git" / "config", "[core]");
    fs::create_directories(r / "a" / ".hidden");
    write(r / "a" / ".hidden" / "b", "hidden");
    write(r / "a" / "b", "a/b");
    write(r / "b", "b");
    write(r / "exact.txt", std::string(kMaxOwnFileBytes, 'a'));
    write(r / "over.txt", std::string(kMaxOwnFileBytes + 1, 'a'));
    write(r / "bad.txt", "ok\xff");
    write(r / "bom.txt", "\xEF\xBB\xBFhello");
    fs::create_symlink("/etc/passwd", r / "to_passwd");
    fs::create_symlink("../outside/secret.txt", r / "to_outside");
    fs::create_symlink("../outside", r / "outside_folder");
    fs::create_symlink("data/words.txt", r / "inside_link");
    fs::create_symlink("../rules.json", r / "data" / "up");
    fs::create_symlink("data", r / "data_link");
    fs::create_symlink((r / "rules.json").string(), r / "absolute_inside");
    fs::create_symlink("escouade-plugin.json", r / "to_manifest");
    fs::create_hard_link(r / "escouade-plugin.json", r / "hard_manifest");
    fs::create_symlink("loop_b", r / "loop_a");
    fs::create_symlink("loop_a", r / "loop_b");
    fs::create_symlink("self", r / "self");
    fs::create_symlink("/proc/self/root/etc/passwd", r / "magic");
    // Visible names that lead to hidden files (issue 11's attack review).
    fs::create_symlink(".git/config", r / "cfg");
    fs::create_symlink(".git", r / "g");
    fs::create_symlink(".env", r / "notes.txt");
    fs::create_symlink("../.env", r / "data" / "up_env");
    fs::create_symlink("a/.hidden", r / "shown");
    fs::create_hard_link(outside() / "secret.txt", r / "hard_outside");
  }

 private:
  TempDir dir_{"files_read"};
  fs::path base_ = dir_.path();
};

struct ReadCase {
  const char* name;
  std::string path;
  std::optional<proto::ErrorCode> code;  // none: the file is read
  std::string expected;                  // the text read, or the error's whole message
};

void PrintTo(const ReadCase& c, std::ostream* out) {
  *out << c.name;
}

ReadCase reads(const char* name, std::string path, std::string text) {
  return ReadCase{name, std::move(path), std::nullopt, std::move(text)};
}

// `quoted` is the path as the message quotes it, quotes included.
ReadCase fails(const char* name, std::string path, proto::ErrorCode code, const std::string& quoted,
               const std::string& verdict) {
  return ReadCase{name, std::move(path), code, "files/read " + quoted + ": " + verdict};
}

class FilesRead : public ::testing::TestWithParam<std::tuple<ReadCase, BeneathResolver>> {
 protected:
  void SetUp() override {
    if (std::get<1>(GetParam()) == BeneathResolver::openat2_only && !platform::has_openat2()) {
      GTEST_SKIP() << "this kernel has no openat2 for this process: the walk serves alone";
    }
    folder_.populate();
  }

  PluginFolder folder_;
};

TEST_P(FilesRead, AnswersWithTheTextOrTheCodeAndReason) {
  const auto& [c, resolver] = GetParam();
  const auto text = read_own_file(folder_.root(), c.path, resolver);
  if (!c.code) {
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(*text, c.expected);
  } else {
    ASSERT_FALSE(text) << "read " << text->size() << " bytes";
    EXPECT_EQ(text.error().code, *c.code);
    EXPECT_EQ(text.error().message, c.expected);
  }
}

const std::string kLongPath(5000, 'a');

INSTANTIATE_TEST_SUITE_P(
    Paths, FilesRead,
    ::testing::Combine(
        ::testing::Values(
            reads("AtTheRoot", "rules.json", R"({"rules":[]})"),
            reads("InASubfolder", "data/words.txt", "alpha\nbeta\n"),
            reads("PercentNameReadLiterally", "%2e%2e", "a name of six characters"),
            reads("ASpaceInTheName", "my notes.txt", "notes"),
            reads("Utf8Names", "donn\xc3\xa9\x65s/\xc3\xa9t\xc3\xa9.txt", "\xc3\xa9t\xc3\xa9"),
            reads("ANewlineInTheName", "line\nbreak.txt", "a newline in its name"),
            reads("ALinkThatStaysInside", "inside_link", "alpha\nbeta\n"),
            reads("ALinkThatClimbsButStaysInside", "data/up", R"({"rules":[]})"),
            reads("ALinkToAFolderInside", "data_link/words.txt", "alpha\nbeta\n"),
            reads("Exactly256KiB", "exact.txt", std::string(kMaxOwnFileBytes, 'a')),
            reads("ByteOrderMarkDropped", "bom.txt", "hello"),
            fails("ClimbOut", "../x", kRefused, R"("../x")",
                  "refused: a '..' part (a path may not climb, even within the folder)"),
            fails("ClimbFurther", "a/../../x", kRefused, R"("a/../../x")",
                  "refused: a '..' part (a path may not climb, even within the folder)"),
            fails("ClimbThatWouldStayInside", "a/../b", kRefused, R"("a/../b")",
                  "refused: a '..' part (a path may not climb, even within the folder)"),
            fails("Absolute", "/etc/passwd", kRefused, R"("/etc/passwd")",
                  "refused: an absolute path (paths are relative to the folder)"),
            fails("DoubleSlash", "//etc/passwd", kRefused, R"("//etc/passwd")",
                  "refused: an absolute path (paths are relative to the folder)"),
            fails("WindowsDrive", "C:\\x", kRefused, R"("C:\\x")",
                  "refused: a Windows drive (paths are relative to the folder)"),
            fails("BackslashClimb", "a\\..\\b", kRefused, R"("a\\..\\b")",
                  "refused: a backslash ('/' is the only separator)"),
            fails("WindowsShare", "\\\\server\\x", kRefused, R"("\\\\server\\x")",
                  "refused: a backslash ('/' is the only separator)"),
            fails("PercentIsNotDecoded", "%2e%2e/x", kNotFound, R"("%2e%2e/x")",
                  "not found: no such file"),
            fails("DotEnv", ".env", kRefused, R"(".env")", "refused: a hidden file or folder"),
            fails("GitConfig", ".git/config", kRefused, R"(".git/config")",
                  "refused: a hidden file or folder"),
            fails("HiddenFolderInside", "a/.hidden/b", kRefused, R"("a/.hidden/b")",
                  "refused: a hidden file or folder"),
            fails("Manifest", "escouade-plugin.json", kRefused, R"("escouade-plugin.json")",
                  "refused: the manifest"),
            fails("ManifestUpperCase", "ESCOUADE-PLUGIN.JSON", kRefused,
                  R"("ESCOUADE-PLUGIN.JSON")", "refused: the manifest"),
            fails("ManifestAfterDot", "./escouade-plugin.json", kRefused,
                  R"("./escouade-plugin.json")", "refused: the manifest"),
            fails("TrailingSlash", "data/", kInvalid, R"("data/")",
                  "invalid params: an empty part (a//b, or a '/' at the end)"),
            fails("EmptyPart", "a//b", kInvalid, R"("a//b")",
                  "invalid params: an empty part (a//b, or a '/' at the end)"),
            fails("Empty", "", kInvalid, R"("")", "invalid params: an empty path"),
            fails("NulInside", std::string("rules.json\0x", 12), kInvalid, R"("rules.json\u0000x")",
                  "invalid params: a NUL character in the path"),
            fails("ANewlineInAMissingName", "missing\nname.txt", kNotFound,
                  R"("missing\nname.txt")", "not found: no such file"),
            fails("Missing", "nothing.txt", kNotFound, R"("nothing.txt")",
                  "not found: no such file"),
            fails("UnderAFile", "rules.json/x", kNotFound, R"("rules.json/x")",
                  "not found: no such file"),
            fails("LinkToEtcPasswd", "to_passwd", kRefused, R"("to_passwd")",
                  "refused: " + kEscapes),
            fails("LinkToAFileOutside", "to_outside", kRefused, R"("to_outside")",
                  "refused: " + kEscapes),
            fails("LinkToAFolderOutside", "outside_folder/secret.txt", kRefused,
                  R"("outside_folder/secret.txt")", "refused: " + kEscapes),
            fails("AbsoluteLinkToAFileInside", "absolute_inside", kRefused, R"("absolute_inside")",
                  "refused: " + kEscapes),
            fails("MagicLink", "magic", kRefused, R"("magic")", "refused: " + kEscapes),
            fails("LinkToTheManifest", "to_manifest", kRefused, R"("to_manifest")",
                  "refused: the manifest, under another name"),
            fails("HardLinkToTheManifest", "hard_manifest", kRefused, R"("hard_manifest")",
                  "refused: the manifest, under another name"),
            fails("LinkToGitConfig", "cfg", kRefused, R"("cfg")",
                  R"(refused: it leads to a hidden file or folder (".git/config"))"),
            fails("LinkToTheGitFolder", "g/config", kRefused, R"("g/config")",
                  R"(refused: it leads to a hidden file or folder (".git/config"))"),
            fails("VisibleNameForDotEnv", "notes.txt", kRefused, R"("notes.txt")",
                  R"(refused: it leads to a hidden file or folder (".env"))"),
            fails("ClimbingLinkToDotEnv", "data/up_env", kRefused, R"("data/up_env")",
                  R"(refused: it leads to a hidden file or folder (".env"))"),
            fails("LinkToAHiddenFolderDeeper", "shown/b", kRefused, R"("shown/b")",
                  R"(refused: it leads to a hidden file or folder ("a/.hidden/b"))"),
            fails("HardLinkToAFileOutside", "hard_outside", kRefused, R"("hard_outside")",
                  "refused: the file has other names (a hard link), which may be outside the "
                  "folder"),
            fails("LoopOfLinks", "loop_a", kRefused, R"("loop_a")", "refused: a loop of links"),
            fails("SelfLink", "self", kRefused, R"("self")", "refused: a loop of links"),
            fails("AFolder", "data", kNotFound, R"("data")", "not found: is a folder, not a file"),
            fails("Over256KiB", "over.txt", kFailed, R"("over.txt")", "failed: is over 256 KiB"),
            fails("NotUtf8", "bad.txt", kFailed, R"("bad.txt")", "failed: is not UTF-8 text"),
            fails("FiveThousandBytes", kLongPath, kInvalid,
                  "\"" + kLongPath.substr(0, 200) + "\"\xE2\x80\xA6 (5000 bytes)",
                  "invalid params: a path longer than 4096 bytes")),
        ::testing::Values(BeneathResolver::openat2_only, BeneathResolver::walk_only)),
    [](const auto& p) {
      return std::string(std::get<0>(p.param).name) + "_" + resolver_name(std::get<1>(p.param));
    });

TEST(FilesReadAlone, TheLimitIs256KiB) {
  EXPECT_EQ(kMaxOwnFileBytes, 262144u);
}

TEST(FilesReadAlone, AFifoIsRefusedWithoutBlocking) {
  PluginFolder folder;
  const fs::path pipe = folder.root() / "pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  auto done = std::async(std::launch::async, [&] { return read_own_file(folder.root(), "pipe"); });
  if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    // Safety net only: a writer releases a blocked open so that the test can end.
    const int writer = ::open(pipe.c_str(), O_WRONLY | O_NONBLOCK);
    ADD_FAILURE() << "files/read blocked on a FIFO";
    done.wait();
    if (writer >= 0) ::close(writer);
    return;
  }
  const auto text = done.get();
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code, kRefused);
  EXPECT_EQ(text.error().message, R"(files/read "pipe": refused: is a FIFO, not a regular file)");
}

// The error of read_own_file(root, path) as the user `nobody` would get it: root reads a file of
// mode 000, so the call is made in a child process that gave up root first. "ok" when it read.
std::string error_as_nobody(const fs::path& root, const std::string& path) {
  int out[2];
  if (::pipe(out) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(out[0]);
    std::string said = "could not become nobody";
    if (::setgid(65534) == 0 && ::setuid(65534) == 0) {
      const auto text = read_own_file(root, path);
      said = text
                 ? "ok"
                 : std::to_string(proto::wire_code(text.error().code)) + " " + text.error().message;
    }
    (void)!::write(out[1], said.data(), said.size());
    ::_exit(0);
  }
  ::close(out[1]);
  std::string said;
  char buffer[512];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;)
    said.append(buffer, n);
  ::close(out[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return said;
}

TEST(FilesReadAlone, AnUnreadableFileFails) {
  PluginFolder folder;
  write(folder.root() / "locked.txt", "locked");
  fs::permissions(folder.root() / "locked.txt", fs::perms::none);
  const std::string expected =
      R"(files/read "locked.txt": failed: cannot be opened: permission denied)";
  if (::geteuid() != 0) {
    const auto text = read_own_file(folder.root(), "locked.txt");
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().code, kFailed);
    EXPECT_EQ(text.error().message, expected);
    return;
  }
  // As root: the folders must let `nobody` in, and the file must still be readable by root.
  fs::permissions(folder.root().parent_path(), fs::perms::owner_all | fs::perms::others_exec);
  EXPECT_TRUE(read_own_file(folder.root(), "locked.txt"));
  EXPECT_EQ(error_as_nobody(folder.root(), "locked.txt"), "-32004 " + expected);
}

TEST(FilesReadAlone, AFolderThatIsNotThereFails) {
  PluginFolder folder;
  const fs::path absent = folder.root() / "absent";
  const auto text = read_own_file(absent, "rules.json");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code, kFailed);
  EXPECT_EQ(text.error().message, "files/read \"rules.json\": failed: cannot open the folder " +
                                      absent.string() + ": No such file or directory");
}

// A manifest that is itself a link to another file of the folder makes that file the manifest.
TEST(FilesReadAlone, TheFileAManifestLinkNamesIsTheManifest) {
  PluginFolder folder;
  fs::rename(folder.root() / "escouade-plugin.json", folder.root() / "real-manifest.json");
  fs::create_symlink("real-manifest.json", folder.root() / "escouade-plugin.json");
  const auto text = read_own_file(folder.root(), "real-manifest.json");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message,
            R"(files/read "real-manifest.json": refused: the manifest, under another name)");
}

// Quoting keeps every message on one line, whatever the path holds.
TEST(FilesReadAlone, MessagesStayOnOneLine) {
  PluginFolder folder;
  for (const std::string path : {"a\nb", "a\rb\x01\x7f", "x/\n/.env", "\xff\xfe\n"}) {
    const auto text = read_own_file(folder.root(), path);
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().message.find_first_of("\n\r"), std::string::npos)
        << text.error().message;
  }
  const auto invalid = read_own_file(folder.root(), "\xff\n");
  EXPECT_EQ(invalid.error().message,
            "files/read \"\xEF\xBF\xBD\\n\": invalid params: a path that is not UTF-8");
}

// What a race produced, call by call.
struct RaceCounts {
  long inside = 0;
  long refused = 0;
  long outside = 0;
  long other = 0;
  std::string an_other;
  long swaps = 0;
  long swap_failures = 0;
};

// Calls read_own_file(root, path) 20,000 times, or for 2 s, while `swap_once` runs as fast as
// it can on another thread.
RaceCounts race(const fs::path& root, const std::string& path, BeneathResolver resolver,
                const std::string& inside_text, const std::string& outside_text,
                const std::function<bool()>& swap_once) {
  RaceCounts counts;
  std::atomic<bool> stop{false};
  std::atomic<long> swaps{0};
  std::atomic<long> failures{0};
  std::thread swapper([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (swap_once()) {
        swaps.fetch_add(1, std::memory_order_relaxed);
      } else {
        failures.fetch_add(1, std::memory_order_relaxed);
      }
    }
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (int i = 0; i < 20000 && std::chrono::steady_clock::now() < until; ++i) {
    const auto text = read_own_file(root, path, resolver);
    if (text && *text == inside_text) {
      ++counts.inside;
    } else if (text && *text == outside_text) {
      ++counts.outside;
    } else if (!text && text.error().code == kRefused) {
      ++counts.refused;
    } else {
      ++counts.other;
      counts.an_other = text ? "text: " + *text : text.error().message;
    }
  }
  stop = true;
  swapper.join();
  counts.swaps = swaps;
  counts.swap_failures = failures;
  return counts;
}

void expect_never_outside(const RaceCounts& c) {
  EXPECT_EQ(c.outside, 0) << "the outside came back " << c.outside << " times";
  EXPECT_EQ(c.swap_failures, 0);
  // Both outcomes, when the swapper had time to swap often enough to be seen.
  if (c.swaps >= 100) {
    EXPECT_GT(c.inside, 0);
    EXPECT_GT(c.refused, 0);
  }
  std::cout << "inside " << c.inside << ", refused " << c.refused << ", other " << c.other
            << (c.other ? " (" + c.an_other + ")" : "") << ", swaps " << c.swaps << "\n";
}

class FilesReadRace : public ::testing::TestWithParam<BeneathResolver> {
 protected:
  void SetUp() override {
    if (GetParam() == BeneathResolver::openat2_only && !platform::has_openat2()) {
      GTEST_SKIP() << "this kernel has no openat2 for this process: the walk serves alone";
    }
  }

  // Makes `name` a link to `target`, atomically: a prepared link renamed over it.
  static bool relink(const fs::path& dir, const char* target, const char* name) {
    const fs::path prepared = dir / (std::string(name) + ".next");
    ::unlink(prepared.c_str());
    return ::symlink(target, prepared.c_str()) == 0 &&
           ::rename(prepared.c_str(), (dir / name).c_str()) == 0;
  }

  PluginFolder folder_;
};

TEST_P(FilesReadRace, ALinkSwappedBetweenInsideAndOutside) {
  const fs::path root = folder_.root();
  write(root / "inside.txt", "inside");
  ASSERT_TRUE(relink(root, "inside.txt", "swap"));
  bool toward_inside = false;
  const auto counts = race(root, "swap", GetParam(), "inside", kOutside, [&] {
    toward_inside = !toward_inside;
    return relink(root, toward_inside ? "inside.txt" : "../outside/secret.txt", "swap");
  });
  expect_never_outside(counts);
}

TEST_P(FilesReadRace, ALinkSwappedBetweenAFileAndTheManifest) {
  const fs::path root = folder_.root();
  write(root / "inside.txt", "inside");
  ASSERT_TRUE(relink(root, "inside.txt", "swap"));
  bool toward_inside = false;
  const auto counts = race(root, "swap", GetParam(), "inside", kManifest, [&] {
    toward_inside = !toward_inside;
    return relink(root, toward_inside ? "inside.txt" : "escouade-plugin.json", "swap");
  });
  expect_never_outside(counts);
}

// A parent folder exchanged, in one step, with a link to a folder outside that holds a file of
// the same name.
TEST_P(FilesReadRace, AParentFolderSwappedForALink) {
  const fs::path root = folder_.root();
  fs::create_directories(root / "shelf");
  write(root / "shelf" / "words.txt", "inside");
  write(folder_.outside() / "words.txt", kOutside);
  fs::create_symlink("../outside", root / "shelf.other");
  const fs::path a = root / "shelf";
  const fs::path b = root / "shelf.other";
  if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) != 0) {
    GTEST_SKIP() << "this file system cannot exchange two names (RENAME_EXCHANGE)";
  }
  const auto counts = race(root, "shelf/words.txt", GetParam(), "inside", kOutside, [&] {
    return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
  });
  expect_never_outside(counts);
}

INSTANTIATE_TEST_SUITE_P(Resolvers, FilesReadRace,
                         ::testing::Values(BeneathResolver::openat2_only,
                                           BeneathResolver::walk_only),
                         [](const auto& p) { return resolver_name(p.param); });

}  // namespace
}  // namespace escouade::services
