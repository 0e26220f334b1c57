#include "platform/open_beneath.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "base/temp_dir.hpp"

namespace escouade::platform {

// How GoogleTest names a resolver in its output (found by argument-dependent lookup).
void PrintTo(BeneathResolver r, std::ostream* out) {
  *out << (r == BeneathResolver::openat2_only ? "openat2"
           : r == BeneathResolver::walk_only  ? "walk"
                                              : "automatic");
}

namespace {

namespace fs = std::filesystem;

// A fresh folder per test: <tmp>/plugin (the root) beside <tmp>/outside.
class OpenBeneath : public ::testing::TestWithParam<BeneathResolver> {
 protected:
  void SetUp() override {
    if (GetParam() == BeneathResolver::openat2_only && !has_openat2()) {
      GTEST_SKIP() << "this kernel has no openat2 for this process: the walk serves alone";
    }
    dir_ = std::make_unique<TempDir>("open_beneath");
    base_ = dir_->path();
    root_ = base_ / "plugin";
    fs::create_directories(root_ / "data");
    fs::create_directories(base_ / "outside");
    write(root_ / "rules.json", "rules");
    write(root_ / "data" / "words.txt", "words");
    write(base_ / "outside" / "secret.txt", "secret");
  }

  static void write(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }

  void link(const std::string& target, const std::string& name) {
    fs::create_symlink(target, root_ / name);
  }

  BeneathResult<BeneathFile> open(std::string_view relative) {
    auto folder = BeneathFolder::open(root_);
    EXPECT_TRUE(folder) << folder.error().reason;
    return folder->open_file(relative, GetParam());
  }

  std::string content(std::string_view relative) {
    auto file = open(relative);
    if (!file) return "error: " + file.error().reason;
    auto text = file->read_up_to(1024);
    if (!text) return "error: " + text.error().reason;
    return *text;
  }

  void expect_failure(std::string_view relative, BeneathFailure kind, const std::string& reason) {
    auto file = open(relative);
    ASSERT_FALSE(file) << relative << " was opened";
    EXPECT_EQ(file.error().kind, kind) << relative << ": " << file.error().reason;
    EXPECT_EQ(file.error().reason, reason) << relative;
  }

  std::unique_ptr<TempDir> dir_;
  fs::path base_;
  fs::path root_;
};

const std::string kEscapes =
    "the path leaves the folder (through '..', an absolute link or a link that climbs out)";

TEST_P(OpenBeneath, OpensAndReadsFilesOfTheFolder) {
  EXPECT_EQ(content("rules.json"), "rules");
  EXPECT_EQ(content("data/words.txt"), "words");
}

TEST_P(OpenBeneath, MissingFiles) {
  expect_failure("nothing.txt", BeneathFailure::missing, "no such file");
  expect_failure("nowhere/words.txt", BeneathFailure::missing, "no such file");
  expect_failure("rules.json/x", BeneathFailure::missing, "no such file");
}

TEST_P(OpenBeneath, AFolderIsNotAFile) {
  expect_failure("data", BeneathFailure::folder, "is a folder, not a file");
  link("data", "data_link");
  expect_failure("data_link", BeneathFailure::folder, "is a folder, not a file");
}

TEST_P(OpenBeneath, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ / "pipe").c_str(), 0600), 0);
  auto done = std::async(std::launch::async, [&] { return open("pipe"); });
  if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    // Safety net: a writer releases the blocked open so the test ends.
    const int w = ::open((root_ / "pipe").c_str(), O_WRONLY | O_NONBLOCK);
    ADD_FAILURE() << "opening a FIFO blocked";
    done.wait();
    if (w >= 0) ::close(w);
    return;
  }
  auto file = done.get();
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().kind, BeneathFailure::not_a_file);
  EXPECT_EQ(file.error().reason, "is a FIFO, not a regular file");
}

TEST_P(OpenBeneath, ASocketIsNotAFile) {
  const fs::path path = root_ / "sock";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.string().size() >= sizeof address.sun_path) GTEST_SKIP() << "temp path too long";
  path.string().copy(address.sun_path, sizeof address.sun_path - 1);
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  auto file = open("sock");
  ::close(s);
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().kind, BeneathFailure::not_a_file) << file.error().reason;
}

TEST_P(OpenBeneath, DotDotStaysInsideButNeverAbove) {
  EXPECT_EQ(content("data/../rules.json"), "rules");
  expect_failure("../outside/secret.txt", BeneathFailure::escapes, kEscapes);
  expect_failure("data/../../outside/secret.txt", BeneathFailure::escapes, kEscapes);
  expect_failure((root_ / "rules.json").string(), BeneathFailure::escapes, kEscapes);
}

TEST_P(OpenBeneath, LinksThatStayInsideAreFollowed) {
  link("data/words.txt", "inside_link");
  link("../rules.json", "data/up");
  link("data", "data_link");
  link("data/../rules.json", "through_dotdot");
  EXPECT_EQ(content("inside_link"), "words");
  EXPECT_EQ(content("data/up"), "rules");
  EXPECT_EQ(content("data_link/words.txt"), "words");
  EXPECT_EQ(content("through_dotdot"), "rules");
}

TEST_P(OpenBeneath, LinksThatLeaveAreRefused) {
  link("/etc/passwd", "to_passwd");
  link("../outside/secret.txt", "to_outside");
  link("../outside", "outside_folder");
  link("data/../../outside/secret.txt", "sneaky");
  link((root_ / "rules.json").string(), "absolute_inside");
  link("/proc/self/root/etc/passwd", "magic");
  for (const char* name : {"to_passwd", "to_outside", "outside_folder/secret.txt", "sneaky",
                           "absolute_inside", "magic"}) {
    expect_failure(name, BeneathFailure::escapes, kEscapes);
  }
}

TEST_P(OpenBeneath, LoopsOfLinks) {
  link("loop_b", "loop_a");
  link("loop_a", "loop_b");
  link("self", "self");
  expect_failure("loop_a", BeneathFailure::link_loop, "a loop of links");
  expect_failure("self", BeneathFailure::link_loop, "a loop of links");
  expect_failure("self/x", BeneathFailure::link_loop, "a loop of links");
}

// The walk keeps the kernel's bound: 40 links in one lookup, not 41.
TEST_P(OpenBeneath, ChainsOfLinksUpToTheBound) {
  for (int i = 1; i <= kMaxBeneathLinks + 1; ++i) {
    link(i == 1 ? "rules.json" : "chain" + std::to_string(i - 1), "chain" + std::to_string(i));
  }
  EXPECT_EQ(content("chain" + std::to_string(kMaxBeneathLinks)), "rules");
  expect_failure("chain" + std::to_string(kMaxBeneathLinks + 1), BeneathFailure::link_loop,
                 "a loop of links");
}

// /proc's magic links (a process's root, its descriptors) lead anywhere: never followed.
TEST_P(OpenBeneath, MagicLinksAreNeverFollowed) {
  auto proc = BeneathFolder::open("/proc/self");
  ASSERT_TRUE(proc) << proc.error().reason;
  auto through_root = proc->open_file("root/etc/passwd", GetParam());
  ASSERT_FALSE(through_root);
  EXPECT_TRUE(through_root.error().kind == BeneathFailure::escapes ||
              through_root.error().kind == BeneathFailure::link_loop)
      << through_root.error().reason;

  const int outside = ::open((base_ / "outside" / "secret.txt").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(outside, 0);
  auto fds = BeneathFolder::open("/proc/self/fd");
  ASSERT_TRUE(fds) << fds.error().reason;
  auto through_fd = fds->open_file(std::to_string(outside), GetParam());
  ::close(outside);
  ASSERT_FALSE(through_fd);
  EXPECT_TRUE(through_fd.error().kind == BeneathFailure::escapes ||
              through_fd.error().kind == BeneathFailure::link_loop)
      << through_fd.error().reason;
}

// A file the host may not read is tested where it matters, as the user nobody, in
// src/services/files_test.cpp (these tests run as root in CI, and root reads mode 000).

TEST_P(OpenBeneath, ReadsWhatIsThereNotWhatFstatSaid) {
  write(root_ / "growing.txt", "0123456789");
  auto file = open("growing.txt");
  ASSERT_TRUE(file) << file.error().reason;
  std::ofstream(root_ / "growing.txt", std::ios::app) << "abcdefghij";
  EXPECT_EQ(file->read_up_to(15).value(), "0123456789abcde");
  EXPECT_EQ(file->read_up_to(100).value(), "0123456789abcdefghij");
  EXPECT_EQ(file->read_up_to(0).value(), "");
}

TEST_P(OpenBeneath, ReadsPastOneChunk) {
  const std::string big(200 * 1024 + 7, 'x');
  write(root_ / "big.txt", big);
  EXPECT_EQ(content("big.txt").size(), 1024u);
  auto file = open("big.txt");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->read_up_to(big.size() + 1).value(), big);
}

TEST_P(OpenBeneath, IdentityTellsNamesOfOneFileFromOtherFiles) {
  fs::create_hard_link(root_ / "rules.json", root_ / "hard");
  link("rules.json", "soft");
  auto folder = BeneathFolder::open(root_);
  ASSERT_TRUE(folder);
  const auto rules = folder->identity_of("rules.json");
  ASSERT_TRUE(rules);
  EXPECT_EQ(folder->identity_of("hard"), rules);
  EXPECT_EQ(folder->identity_of("soft"), rules);
  EXPECT_NE(folder->identity_of("data/words.txt"), rules);
  EXPECT_EQ(folder->identity_of("nothing"), std::nullopt);
  auto opened = folder->open_file("hard", GetParam());
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->identity(), *rules);
}

TEST_P(OpenBeneath, TheFolderItselfMustExist) {
  auto folder = BeneathFolder::open(base_ / "absent");
  ASSERT_FALSE(folder);
  EXPECT_EQ(folder.error().kind, BeneathFailure::missing);
  EXPECT_EQ(folder.error().reason, "cannot open the folder " + (base_ / "absent").string() +
                                       ": No such file or directory");
}

// The folder is held by its descriptor: renaming its path away afterwards changes nothing.
TEST_P(OpenBeneath, TheFolderIsHeldNotItsPath) {
  auto folder = BeneathFolder::open(root_);
  ASSERT_TRUE(folder);
  fs::rename(root_, base_ / "moved");
  fs::create_directories(root_);
  write(root_ / "rules.json", "impostor");
  auto file = folder->open_file("rules.json", GetParam());
  ASSERT_TRUE(file) << file.error().reason;
  EXPECT_EQ(file->read_up_to(100).value(), "rules");
}

// Its names are those of the folder held, not of whatever its path names now; at most `limit`.
TEST_P(OpenBeneath, TheNamesAreTheHeldFoldersAndBounded) {
  auto folder = BeneathFolder::open(root_);
  ASSERT_TRUE(folder);
  fs::rename(root_, base_ / "moved");
  fs::create_directories(root_);
  write(root_ / "impostor.json", "x");
  auto names = folder->names(100);
  ASSERT_TRUE(names) << names.error().reason;
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"data", "rules.json"}));
  auto one = folder->names(1);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), 1u);
}

// A file that tells no size (procfs gives 0) is read whole, on past the page read first: the
// command line of a `sleep` given 3,000 more arguments (it sleeps for their sum), 6,009 bytes.
TEST(BeneathFileRead, AFileThatTellsNoSizeIsReadWholePastItsFirstPage) {
  std::vector<std::string> args{"sleep", "30"};
  for (int i = 0; i < 3000; ++i)
    args.emplace_back("0");
  std::vector<char*> argv;
  std::string expected;
  for (auto& a : args) {
    argv.push_back(a.data());
    expected.append(a).push_back('\0');
  }
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(::posix_spawnp(&pid, "sleep", nullptr, nullptr, argv.data(), environ), 0);
  // Ended and waited for however the test ends.
  const std::unique_ptr<pid_t, void (*)(pid_t*)> ender(&pid, [](pid_t* p) {
    ::kill(*p, SIGKILL);
    ::waitpid(*p, nullptr, 0);
  });
  const int fd =
      ::open(("/proc/" + std::to_string(pid) + "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 0);
  const BeneathFile file(UniqueFd(fd), FileIdentity{}, 1);
  // posix_spawn returns once the child's exec has begun, before the new program's arguments are
  // in place: until then the file reads empty (a safety net of 10 s, not a timing).
  std::string read;
  for (int i = 0; i < 10000 && read.empty(); ++i) {
    read = file.read_up_to(1 << 20).value();
    if (read.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(read.size(), expected.size());
  EXPECT_TRUE(read == expected);
  const std::string cut = file.read_up_to(5000).value();
  EXPECT_EQ(cut.size(), 5000u);
  EXPECT_TRUE(cut == expected.substr(0, 5000));
}

INSTANTIATE_TEST_SUITE_P(Resolvers, OpenBeneath,
                         ::testing::Values(BeneathResolver::openat2_only,
                                           BeneathResolver::walk_only, BeneathResolver::automatic),
                         [](const auto& p) {
                           switch (p.param) {
                             case BeneathResolver::openat2_only:
                               return std::string("Openat2");
                             case BeneathResolver::walk_only:
                               return std::string("Walk");
                             case BeneathResolver::automatic:
                               break;
                           }
                           return std::string("Automatic");
                         });

}  // namespace
}  // namespace escouade::platform
