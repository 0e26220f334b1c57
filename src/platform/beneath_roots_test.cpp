#include "platform/beneath_roots.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>

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

const std::string kEscapes = "a link on the path leads outside every root of the agent";

// A fresh folder per test: <tmp>/agent (writable), <tmp>/repo (for reading only) and
// <tmp>/shared (writable) are the roots; <tmp>/outside is in none of them.
class BeneathRootsTest : public ::testing::TestWithParam<BeneathResolver> {
 protected:
  void SetUp() override {
    if (GetParam() == BeneathResolver::openat2_only && !has_openat2()) {
      GTEST_SKIP() << "this kernel has no openat2 for this process: the walk serves alone";
    }
    dir_ = std::make_unique<TempDir>("beneath_roots");
    base_ = dir_->path();
    for (const char* folder : {"agent/data", "repo/docs", "shared", "outside/deep"}) {
      fs::create_directories(base_ / folder);
    }
    put(base_ / "agent" / "notes.txt", "notes");
    put(base_ / "agent" / "data" / "words.txt", "words");
    put(base_ / "repo" / "docs" / "readme.md", "readme");
    put(base_ / "shared" / "board.txt", "board");
    put(base_ / "outside" / "secret.txt", "secret");
  }

  static void put(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }

  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }

  void link(const std::string& target, const std::string& name) {
    fs::create_symlink(target, base_ / name);
  }

  BeneathRoots roots() const {
    auto opened = BeneathRoots::open({{"agent", base_ / "agent", true},
                                      {"repo", base_ / "repo", false},
                                      {"shared", base_ / "shared", true}});
    EXPECT_TRUE(opened) << opened.error().reason;
    return std::move(opened).value();
  }

  // The agent's folder alone: where openat2 answers without the walk.
  BeneathRoots agent_only() const {
    auto opened = BeneathRoots::open({{"agent", base_ / "agent", true}});
    EXPECT_TRUE(opened) << opened.error().reason;
    return std::move(opened).value();
  }

  BeneathResult<FsRead> read(const BeneathRoots& r, std::string_view path,
                             std::string_view start = "agent") const {
    return r.read(start, path, 1 << 20, GetParam());
  }

  BeneathResult<FsWritten> write(const BeneathRoots& r, std::string_view path,
                                 std::string_view data, bool append = false,
                                 std::string_view start = "agent") const {
    return r.write(start, path, data, append, GetParam());
  }

  std::string real(const std::string& relative) const { return (base_ / relative).string(); }

  std::unique_ptr<TempDir> dir_;
  fs::path base_;
};

template <class T>
void expect_failure(const BeneathResult<T>& result, BeneathFailure kind, const std::string& reason,
                    const std::string& what) {
  ASSERT_FALSE(result) << what << " succeeded";
  EXPECT_EQ(result.error().kind, kind) << what << ": " << result.error().reason;
  EXPECT_EQ(result.error().reason, reason) << what;
}

TEST_P(BeneathRootsTest, ReadsStatsListsAndCanonsOrdinaryFiles) {
  const auto r = roots();
  auto notes = read(r, "notes.txt");
  ASSERT_TRUE(notes) << notes.error().reason;
  EXPECT_EQ(notes->bytes, "notes");
  EXPECT_EQ(notes->real_path, real("agent/notes.txt"));
  EXPECT_EQ(notes->root, "agent");
  auto readme = read(r, "docs/readme.md", "repo");
  ASSERT_TRUE(readme) << readme.error().reason;
  EXPECT_EQ(readme->bytes, "readme");
  EXPECT_EQ(readme->root, "repo");

  auto file = r.stat("agent", "data/words.txt", GetParam());
  ASSERT_TRUE(file) << file.error().reason;
  EXPECT_EQ(file->kind, FsKind::file);
  EXPECT_EQ(file->bytes, 5u);
  ASSERT_TRUE(file->modified_ms);
  const auto written = fs::last_write_time(base_ / "agent" / "data" / "words.txt");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::file_clock::to_sys(written).time_since_epoch())
                      .count();
  EXPECT_EQ(*file->modified_ms, ms);
  auto folder = r.stat("agent", "", GetParam());
  ASSERT_TRUE(folder) << folder.error().reason;
  EXPECT_EQ(folder->kind, FsKind::dir);

  auto listing = r.list("agent", "", 4096, GetParam());
  ASSERT_TRUE(listing) << listing.error().reason;
  ASSERT_EQ(listing->entries.size(), 2u);
  EXPECT_FALSE(listing->truncated);
  EXPECT_EQ(listing->entries[0].name, "data");
  EXPECT_EQ(listing->entries[0].kind, FsKind::dir);
  EXPECT_EQ(listing->entries[1].name, "notes.txt");
  EXPECT_EQ(listing->entries[1].kind, FsKind::file);
  EXPECT_EQ(listing->entries[1].bytes, 5u);

  EXPECT_EQ(r.canon("agent", "data/words.txt", GetParam()).value(), real("agent/data/words.txt"));
  EXPECT_EQ(r.canon("agent", "", GetParam()).value(), real("agent"));
}

TEST_P(BeneathRootsTest, MissingFoldersAndLimits) {
  const auto r = roots();
  expect_failure(read(r, "nothing.txt"), BeneathFailure::missing, "no such file", "read");
  expect_failure(read(r, "nowhere/x"), BeneathFailure::missing, "no such file", "read nowhere");
  expect_failure(read(r, "notes.txt/x"), BeneathFailure::missing, "no such file", "file/x");
  expect_failure(r.stat("agent", "nothing", GetParam()), BeneathFailure::missing, "no such file",
                 "stat");
  expect_failure(r.list("agent", "nothing", 10, GetParam()), BeneathFailure::missing,
                 "no such file", "list");
  expect_failure(read(r, "data"), BeneathFailure::folder, "is a folder, not a file", "folder");
  expect_failure(write(r, "data", "x"), BeneathFailure::folder, "is a folder, not a file",
                 "write folder");
  expect_failure(r.list("agent", "notes.txt", 10, GetParam()), BeneathFailure::missing,
                 "is not a folder", "list a file");
  expect_failure(r.read("agent", "notes.txt", 4, GetParam()), BeneathFailure::too_large,
                 "the file is larger than the limit", "over the limit");
  EXPECT_EQ(r.read("agent", "notes.txt", 5, GetParam()).value().bytes, "notes");
  expect_failure(r.read("nobody", "notes.txt", 5, GetParam()), BeneathFailure::os_error,
                 "the start is not one of the roots", "an unknown root");
}

TEST_P(BeneathRootsTest, WritesMakeFoldersAppendAndTruncate) {
  const auto r = roots();
  auto made = write(r, "new/deeper/file.txt", "hello");
  ASSERT_TRUE(made) << made.error().reason;
  EXPECT_EQ(made->real_path, real("agent/new/deeper/file.txt"));
  EXPECT_EQ(made->bytes, 5u);
  EXPECT_EQ(made->root, "agent");
  EXPECT_EQ(slurp(base_ / "agent/new/deeper/file.txt"), "hello");
  // The umask applies: nothing is made more open than it allows.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(fs::status(base_ / "agent/new/deeper/file.txt").permissions(),
            static_cast<fs::perms>(0666 & ~mask));
  EXPECT_EQ(fs::status(base_ / "agent/new/deeper").permissions(),
            static_cast<fs::perms>(0777 & ~mask));

  ASSERT_TRUE(write(r, "new/deeper/file.txt", ", world", true));
  EXPECT_EQ(slurp(base_ / "agent/new/deeper/file.txt"), "hello, world");
  ASSERT_TRUE(write(r, "new/deeper/file.txt", "bye"));
  EXPECT_EQ(slurp(base_ / "agent/new/deeper/file.txt"), "bye");
  auto empty = write(r, "notes.txt", "");
  ASSERT_TRUE(empty) << empty.error().reason;
  EXPECT_EQ(slurp(base_ / "agent/notes.txt"), "");

  const std::string big(300 * 1024 + 3, 'z');
  auto large = write(r, "big.bin", big);
  ASSERT_TRUE(large) << large.error().reason;
  EXPECT_EQ(large->bytes, big.size());
  EXPECT_EQ(read(r, "big.bin").value().bytes, big);
}

TEST_P(BeneathRootsTest, ARootForReadingOnlyIsNeverWritten) {
  const auto r = roots();
  const std::string reason = "the path leads into repo, which is given for reading only";
  expect_failure(write(r, "docs/readme.md", "x", false, "repo"), BeneathFailure::read_only, reason,
                 "existing");
  expect_failure(write(r, "made/new.txt", "x", false, "repo"), BeneathFailure::read_only, reason,
                 "new");
  EXPECT_EQ(slurp(base_ / "repo/docs/readme.md"), "readme");
  EXPECT_FALSE(fs::exists(base_ / "repo/made"));
}

TEST_P(BeneathRootsTest, LinksInsideARootAreFollowed) {
  link("data/words.txt", "agent/to_words");
  link("../notes.txt", "agent/data/up");
  link("data", "agent/data_link");
  const auto r = roots();
  EXPECT_EQ(read(r, "to_words").value().bytes, "words");
  EXPECT_EQ(read(r, "to_words").value().real_path, real("agent/data/words.txt"));
  EXPECT_EQ(read(r, "data/up").value().bytes, "notes");
  EXPECT_EQ(read(r, "data_link/words.txt").value().bytes, "words");
  EXPECT_EQ(r.stat("agent", "data_link", GetParam()).value().kind, FsKind::dir);
  EXPECT_EQ(r.list("agent", "data_link", 10, GetParam()).value().entries.size(), 2u);
  auto through = write(r, "to_words", "new words");
  ASSERT_TRUE(through) << through.error().reason;
  EXPECT_EQ(through->real_path, real("agent/data/words.txt"));
  EXPECT_EQ(slurp(base_ / "agent/data/words.txt"), "new words");
  EXPECT_TRUE(fs::is_symlink(base_ / "agent/to_words"));
  ASSERT_TRUE(write(r, "data_link/made/file.txt", "made"));
  EXPECT_EQ(slurp(base_ / "agent/data/made/file.txt"), "made");
  // Within one root, openat2 answers alone.
  EXPECT_EQ(read(agent_only(), "data/up").value().bytes, "notes");
}

TEST_P(BeneathRootsTest, LinksIntoAnotherRootAreFollowedAndItsRightsKept) {
  link(real("repo/docs/readme.md"), "agent/abs_readme");
  link("../repo/docs/readme.md", "agent/rel_readme");
  link("../../repo/docs", "agent/data/docs");
  link("../shared", "agent/shared_link");
  const auto r = roots();
  for (const char* name : {"abs_readme", "rel_readme", "data/docs/readme.md"}) {
    auto got = read(r, name);
    ASSERT_TRUE(got) << name << ": " << got.error().reason;
    EXPECT_EQ(got->bytes, "readme") << name;
    EXPECT_EQ(got->root, "repo") << name;
    EXPECT_EQ(got->real_path, real("repo/docs/readme.md")) << name;
    expect_failure(write(r, name, "overwritten"), BeneathFailure::read_only,
                   "the path leads into repo, which is given for reading only", name);
  }
  expect_failure(write(r, "data/docs/new/file.txt", "x"), BeneathFailure::read_only,
                 "the path leads into repo, which is given for reading only", "a new file");
  EXPECT_EQ(slurp(base_ / "repo/docs/readme.md"), "readme");
  EXPECT_FALSE(fs::exists(base_ / "repo/docs/new"));
  EXPECT_EQ(r.canon("agent", "rel_readme", GetParam()).value(), real("repo/docs/readme.md"));
  EXPECT_EQ(r.list("agent", "data/docs", 10, GetParam()).value().entries.at(0).name, "readme.md");

  auto shared = write(r, "shared_link/board.txt", "pinned", true);
  ASSERT_TRUE(shared) << shared.error().reason;
  EXPECT_EQ(shared->root, "shared");
  EXPECT_EQ(slurp(base_ / "shared/board.txt"), "boardpinned");
  ASSERT_TRUE(write(r, "shared_link/sub/new.txt", "new"));
  EXPECT_EQ(slurp(base_ / "shared/sub/new.txt"), "new");

  // With the agent's folder alone, the same links lead outside.
  const auto alone = agent_only();
  expect_failure(read(alone, "abs_readme"), BeneathFailure::escapes, kEscapes, "alone");
  expect_failure(read(alone, "rel_readme"), BeneathFailure::escapes, kEscapes, "alone");
}

TEST_P(BeneathRootsTest, LinksOutsideEveryRootAreRefused) {
  link(real("outside/secret.txt"), "agent/abs_secret");
  link("../outside/secret.txt", "agent/rel_secret");
  link("../../outside/secret.txt", "agent/data/up_secret");
  link("../../x", "agent/climbs");
  link("../outside", "agent/outdir");
  link("/etc/passwd", "agent/passwd");
  link("/proc/self/root/etc/passwd", "agent/magic");
  link("data/../../outside/secret.txt", "agent/sneaky");
  link("../agent/../outside/secret.txt", "agent/detour");
  // Into the repo by an absolute link, then above it: its parent is in no root.
  link(real("repo"), "agent/to_repo");
  link("to_repo/../outside/secret.txt", "agent/through_repo");
  const auto all = roots();
  const auto alone = agent_only();
  for (const auto* r : {&all, &alone}) {
    for (const char* name :
         {"abs_secret", "rel_secret", "data/up_secret", "climbs", "outdir/secret.txt",
          "outdir/deep", "passwd", "magic", "sneaky", "detour"}) {
      auto got = read(*r, name);
      ASSERT_FALSE(got) << name << " was read: " << got->bytes;
      EXPECT_EQ(got.error().kind, BeneathFailure::escapes) << name << ": " << got.error().reason;
      EXPECT_EQ(got.error().reason, kEscapes) << name;
      EXPECT_EQ(r->stat("agent", name, GetParam()).error().kind, BeneathFailure::escapes) << name;
      EXPECT_EQ(r->canon("agent", name, GetParam()).error().kind, BeneathFailure::escapes) << name;
      EXPECT_EQ(write(*r, name, "pwned").error().kind, BeneathFailure::escapes) << name;
    }
    EXPECT_EQ(r->list("agent", "outdir", 10, GetParam()).error().kind, BeneathFailure::escapes);
  }
  EXPECT_EQ(slurp(base_ / "outside/secret.txt"), "secret");
}

TEST_P(BeneathRootsTest, AFolderLinkOutsideMakesNothingThere) {
  link("../outside", "agent/outdir");
  link(real("outside"), "agent/abs_outdir");
  const auto r = roots();
  for (const char* name : {"outdir/made.txt", "outdir/new/made.txt", "abs_outdir/made.txt",
                           "abs_outdir/new/deeper/made.txt", "outdir/secret.txt"}) {
    expect_failure(write(r, name, "pwned"), BeneathFailure::escapes, kEscapes, name);
  }
  EXPECT_FALSE(fs::exists(base_ / "outside/made.txt"));
  EXPECT_FALSE(fs::exists(base_ / "outside/new"));
  EXPECT_EQ(slurp(base_ / "outside/secret.txt"), "secret");
}

TEST_P(BeneathRootsTest, ChainsAndLoopsOfLinks) {
  // agent/hop1 -> repo/hop2 -> agent/data/words.txt: across the roots and back.
  link(real("repo/hop2"), "agent/hop1");
  link("../agent/data/words.txt", "repo/hop2");
  link("loop_b", "agent/loop_a");
  link("loop_a", "agent/loop_b");
  link("self", "agent/self");
  link(real("repo/bounce"), "agent/bounce");
  link(real("agent/bounce"), "repo/bounce");
  const auto r = roots();
  auto hop = read(r, "hop1");
  ASSERT_TRUE(hop) << hop.error().reason;
  EXPECT_EQ(hop->bytes, "words");
  EXPECT_EQ(hop->root, "agent");
  for (const char* name : {"loop_a", "self", "self/x", "bounce"}) {
    expect_failure(read(r, name), BeneathFailure::link_loop, "a loop of links", name);
    EXPECT_EQ(r.stat("agent", name, GetParam()).error().kind, BeneathFailure::link_loop) << name;
  }
  for (int i = 1; i <= kMaxBeneathLinks + 1; ++i) {
    link(i == 1 ? "notes.txt" : "chain" + std::to_string(i - 1), "agent/chain" + std::to_string(i));
  }
  EXPECT_EQ(read(r, "chain" + std::to_string(kMaxBeneathLinks)).value().bytes, "notes");
  expect_failure(read(r, "chain" + std::to_string(kMaxBeneathLinks + 1)), BeneathFailure::link_loop,
                 "a loop of links", "41 links");
}

// One thread swaps a link between a file inside and one outside; the reads through it never
// return the outside's content, whatever the interleaving.
TEST_P(BeneathRootsTest, ALinkSwappedDuringTheCallNeverLeadsOutside) {
  put(base_ / "agent/inside.txt", "inside");
  link("inside.txt", "agent/race");
  const auto r = roots();
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    const fs::path race = base_ / "agent/race";
    const fs::path next = base_ / "agent/race.next";
    const std::string targets[] = {"inside.txt", real("outside/secret.txt"),
                                   "../outside/secret.txt"};
    for (int i = 0; i < 1'000'000 && !stop.load(); ++i) {
      ::unlink(next.c_str());
      if (::symlink(targets[i % 3].c_str(), next.c_str()) != 0) continue;
      ::rename(next.c_str(), race.c_str());
    }
  });
  int inside = 0;
  for (int i = 0; i < 2000; ++i) {
    auto got = read(r, "race");
    if (got) {
      ASSERT_NE(got->bytes, "secret") << "read " << got->real_path;
      EXPECT_EQ(got->bytes, "inside");
      ++inside;
    } else {
      EXPECT_TRUE(got.error().kind == BeneathFailure::escapes ||
                  got.error().kind == BeneathFailure::missing)
          << got.error().reason;
    }
  }
  stop = true;
  swapper.join();
  RecordProperty("reads_inside", inside);
}

TEST_P(BeneathRootsTest, AHardLinkIsRefused) {
  fs::create_hard_link(base_ / "outside/secret.txt", base_ / "agent/hard");
  const auto r = roots();
  const std::string reason =
      "the file has other names (a hard link), which may be outside the roots";
  expect_failure(read(r, "hard"), BeneathFailure::hard_link, reason, "read");
  expect_failure(write(r, "hard", "pwned"), BeneathFailure::hard_link, reason, "write");
  expect_failure(write(r, "hard", "pwned", true), BeneathFailure::hard_link, reason, "append");
  EXPECT_EQ(slurp(base_ / "outside/secret.txt"), "secret");
}

// Runs `call` with a safety net: were it to block (a FIFO opened for I/O), a peer opened on the
// FIFO releases it and the test fails instead of hanging.
template <class F>
auto within_ten_seconds(const fs::path& fifo, F call) -> std::optional<decltype(call())> {
  auto done = std::async(std::launch::async, call);
  if (done.wait_for(std::chrono::seconds(10)) == std::future_status::ready) return done.get();
  const int peer = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ADD_FAILURE() << "the call blocked on a FIFO";
  done.wait();
  if (peer >= 0) ::close(peer);
  return std::nullopt;
}

TEST_P(BeneathRootsTest, AFifoIsNeverOpened) {
  const fs::path fifo = base_ / "agent/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  link("pipe", "agent/pipe_link");
  const auto r = roots();
  for (const char* name : {"pipe", "pipe_link"}) {
    auto got = within_ten_seconds(fifo, [&] { return read(r, name); });
    ASSERT_TRUE(got);
    expect_failure(*got, BeneathFailure::not_a_file, "is a FIFO, not a regular file", name);
    auto put = within_ten_seconds(fifo, [&] { return write(r, name, "data"); });
    ASSERT_TRUE(put);
    expect_failure(*put, BeneathFailure::not_a_file, "is a FIFO, not a regular file", name);
    auto appended = within_ten_seconds(fifo, [&] { return write(r, name, "data", true); });
    ASSERT_TRUE(appended);
    EXPECT_EQ(appended->error().kind, BeneathFailure::not_a_file);
    auto st = within_ten_seconds(fifo, [&] { return r.stat("agent", name, GetParam()); });
    ASSERT_TRUE(st);
    ASSERT_TRUE(*st) << (*st).error().reason;
    EXPECT_EQ((*st)->kind, FsKind::other);
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_P(BeneathRootsTest, ASocketIsNotAFile) {
  const fs::path path = base_ / "agent/sock";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.string().size() >= sizeof address.sun_path) GTEST_SKIP() << "temp path too long";
  path.string().copy(address.sun_path, sizeof address.sun_path - 1);
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const auto r = roots();
  auto got = read(r, "sock");
  auto put = write(r, "sock", "x");
  auto st = r.stat("agent", "sock", GetParam());
  ::close(s);
  expect_failure(got, BeneathFailure::not_a_file, "is a socket, not a regular file", "read");
  expect_failure(put, BeneathFailure::not_a_file, "is a socket, not a regular file", "write");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->kind, FsKind::other);
}

TEST_P(BeneathRootsTest, AListingShowsLinksAndOddNamesAsTheyAre) {
  const fs::path folder = base_ / "agent/odd";
  fs::create_directories(folder);
  ASSERT_EQ(::mkfifo((folder / "pipe").c_str(), 0600), 0);
  fs::create_symlink(real("outside"), folder / "away");
  fs::create_symlink("../notes.txt", folder / "near");
  const std::string newline = "two\nlines";
  const std::string invalid = "bad\xff";
  put(folder / newline, "newline");
  put(folder / invalid, "invalid");
  const auto r = roots();
  auto listing = within_ten_seconds(base_ / "agent/odd/pipe",
                                    [&] { return r.list("agent", "odd", 4096, GetParam()); });
  ASSERT_TRUE(listing);
  ASSERT_TRUE(*listing) << (*listing).error().reason;
  const auto& entries = (*listing)->entries;
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[0].name, "away");
  EXPECT_EQ(entries[0].kind, FsKind::link);
  EXPECT_EQ(entries[0].bytes, real("outside").size());
  EXPECT_EQ(entries[1].name, invalid);
  EXPECT_EQ(entries[1].kind, FsKind::file);
  EXPECT_EQ(entries[2].name, "near");
  EXPECT_EQ(entries[2].kind, FsKind::link);
  EXPECT_EQ(entries[3].name, "pipe");
  EXPECT_EQ(entries[3].kind, FsKind::other);
  EXPECT_EQ(entries[4].name, newline);
  EXPECT_EQ(entries[4].kind, FsKind::file);
  EXPECT_EQ(entries[4].bytes, 7u);

  EXPECT_EQ(read(r, "odd/" + newline).value().bytes, "newline");
  EXPECT_EQ(read(r, "odd/" + invalid).value().bytes, "invalid");
  EXPECT_EQ(read(r, "odd/" + invalid).value().real_path, real("agent/odd/" + invalid));
  ASSERT_TRUE(write(r, "odd/" + invalid, "rewritten"));
  EXPECT_EQ(slurp(folder / invalid), "rewritten");
}

TEST_P(BeneathRootsTest, AListingIsBounded) {
  const fs::path folder = base_ / "agent/many";
  fs::create_directories(folder);
  for (int i = 0; i < 5000; ++i)
    put(folder / ("f" + std::to_string(i)), "");
  const auto r = roots();
  auto listing = r.list("agent", "many", 4096, GetParam());
  ASSERT_TRUE(listing) << listing.error().reason;
  EXPECT_EQ(listing->entries.size(), 4096u);
  EXPECT_TRUE(listing->truncated);
  EXPECT_TRUE(std::is_sorted(listing->entries.begin(), listing->entries.end(),
                             [](const auto& a, const auto& b) { return a.name < b.name; }));
  auto whole = r.list("agent", "many", 5000, GetParam());
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->entries.size(), 5000u);
  EXPECT_FALSE(whole->truncated);
}

TEST_P(BeneathRootsTest, CanonOfLinksAndOfWhatDoesNotExistYet) {
  link("data", "agent/data_link");
  link("../repo/docs", "agent/docs");
  link("gone", "agent/dangling");
  const auto r = roots();
  EXPECT_EQ(r.canon("agent", "data_link", GetParam()).value(), real("agent/data"));
  EXPECT_EQ(r.canon("agent", "data_link/words.txt", GetParam()).value(),
            real("agent/data/words.txt"));
  EXPECT_EQ(r.canon("agent", "data_link/new/file.txt", GetParam()).value(),
            real("agent/data/new/file.txt"));
  EXPECT_EQ(r.canon("agent", "docs/later.md", GetParam()).value(), real("repo/docs/later.md"));
  EXPECT_EQ(r.canon("agent", "later.txt", GetParam()).value(), real("agent/later.txt"));
  EXPECT_EQ(r.canon("agent", "dangling", GetParam()).value(), real("agent/dangling"));
  expect_failure(r.canon("agent", "notes.txt/x", GetParam()), BeneathFailure::missing,
                 "no such file", "beneath a file");
}

// A write through a link to nothing makes nothing: the file the link names is not made.
TEST_P(BeneathRootsTest, AWriteThroughALinkToNothingMakesNothing) {
  link("gone.txt", "agent/dangling");
  link(real("outside/gone.txt"), "agent/dangling_outside");
  const auto r = roots();
  const std::string reason =
      "no such file: a link to nothing, or a name that kept changing during the call";
  expect_failure(write(r, "dangling", "x"), BeneathFailure::missing, reason, "inside");
  expect_failure(write(r, "dangling_outside", "x"), BeneathFailure::escapes, kEscapes, "outside");
  EXPECT_FALSE(fs::exists(base_ / "agent/gone.txt"));
  EXPECT_FALSE(fs::exists(base_ / "outside/gone.txt"));
}

// A root inside another: a file lies in the deepest root that holds it, whichever it was
// reached from, and that root's rights apply.
TEST_P(BeneathRootsTest, AFileLiesInTheDeepestRootThatHoldsIt) {
  fs::create_directories(base_ / "home/repo");
  put(base_ / "home/repo/code.cpp", "code");
  auto r =
      BeneathRoots::open({{"home", base_ / "home", true}, {"repo", base_ / "home/repo", false}});
  ASSERT_TRUE(r) << r.error().reason;
  auto got = read(*r, "repo/code.cpp", "home");
  ASSERT_TRUE(got) << got.error().reason;
  EXPECT_EQ(got->root, "repo");
  const std::string reason = "the path leads into repo, which is given for reading only";
  expect_failure(write(*r, "repo/code.cpp", "x", false, "home"), BeneathFailure::read_only, reason,
                 "existing");
  expect_failure(write(*r, "repo/new/file", "x", false, "home"), BeneathFailure::read_only, reason,
                 "new");
  EXPECT_EQ(slurp(base_ / "home/repo/code.cpp"), "code");
  EXPECT_FALSE(fs::exists(base_ / "home/repo/new"));
  auto beside = write(*r, "notes.txt", "ok", false, "home");
  ASSERT_TRUE(beside) << beside.error().reason;
  EXPECT_EQ(beside->root, "home");
}

TEST(BeneathRootsOpen, RootsMustExistAndBeNamedOnce) {
  TempDir dir("beneath_roots");
  auto none = BeneathRoots::open({});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().reason, "no root was given");
  auto twice = BeneathRoots::open({{"agent", dir.path(), true}, {"agent", dir.path(), false}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().reason, "two roots are named agent");
  auto absent = BeneathRoots::open({{"agent", dir.path() / "absent", true}});
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().kind, BeneathFailure::missing);
}

INSTANTIATE_TEST_SUITE_P(Resolvers, BeneathRootsTest,
                         ::testing::Values(BeneathResolver::openat2_only,
                                           BeneathResolver::walk_only),
                         [](const auto& p) {
                           return std::string(p.param == BeneathResolver::openat2_only ? "Openat2"
                                                                                       : "Walk");
                         });

}  // namespace
}  // namespace escouade::platform
