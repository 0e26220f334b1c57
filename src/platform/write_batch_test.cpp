// write_batch: several non-blocking pipes written in one go give what one `write` each gives,
// by the kernel's ring (io_uring) and by writes in turn: whole, in part, nothing into a full
// pipe, EPIPE to a pipe whose reader is gone; and it never waits.

#include "platform/write_batch.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <thread>
#include <vector>

namespace escouade::platform {
namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  // Fills it: a write after it takes nothing.
  void fill() {
    const std::string block(4096, 'f');
    while (::write(w, block.data(), block.size()) > 0) {
    }
    while (::write(w, "f", 1) > 0) {
    }
  }
  std::string read_all() {
    std::string out;
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(r, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }
};

// Every case at once, run on the calling thread: the results and the bytes each pipe got.
void every_case_in_one_batch() {
  ::signal(SIGPIPE, SIG_IGN);
  Pipe empty, full, part, gone, same;
  full.fill();
  // Longer than the pipe holds: it takes what fits.
  const int room = ::fcntl(part.w, F_GETPIPE_SZ);
  ASSERT_GT(room, 0);
  ::close(gone.r);
  gone.r = -1;
  const std::string line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"permissions/decide\"}\n";
  const std::string long_line(static_cast<std::size_t>(room) + 4096, 'x');
  const std::string second = "second\n";
  std::vector<BatchWrite> writes{
      {empty.w, line.data(), line.size(), 0},
      {full.w, line.data(), line.size(), 0},
      {part.w, long_line.data(), long_line.size(), 0},
      {gone.w, line.data(), line.size(), 0},
      {same.w, line.data(), line.size(), 0},
      {same.w, second.data(), second.size(), 0},
      {-1, line.data(), line.size(), 0},
  };
  write_batch(writes);
  EXPECT_EQ(writes[0].result, static_cast<ssize_t>(line.size()));
  EXPECT_EQ(writes[1].result, -EAGAIN);
  EXPECT_EQ(writes[2].result, room);
  EXPECT_EQ(writes[3].result, -EPIPE);
  EXPECT_EQ(writes[4].result, static_cast<ssize_t>(line.size()));
  EXPECT_EQ(writes[5].result, static_cast<ssize_t>(second.size()));
  EXPECT_EQ(writes[6].result, -EBADF);
  EXPECT_EQ(empty.read_all(), line);
  EXPECT_EQ(same.read_all(), line + second) << "two writes to one pipe keep their order";
  EXPECT_EQ(part.read_all(), long_line.substr(0, static_cast<std::size_t>(room)));
  EXPECT_EQ(full.read_all().find('{'), std::string::npos) << "nothing of the line in a full pipe";
}

TEST(WriteBatch, EachWriteGivesWhatOneWriteWouldByTheRing) {
  // Linux 5.18 and later: the ring; an older kernel, or a seccomp profile that refuses
  // io_uring, leaves writes in turn, which the next test covers.
  RecordProperty("together", write_batch_together() ? "io_uring" : "in turn");
  every_case_in_one_batch();
}

TEST(WriteBatch, EachWriteGivesWhatOneWriteWouldInTurn) {
  std::thread([] {
    write_batch_in_turn_for_tests();
    EXPECT_FALSE(write_batch_together());
    every_case_in_one_batch();
  }).join();
}

// More writes than the ring holds (128) go in several submissions, each pipe getting its line
// once; a batch of one is written too.
TEST(WriteBatch, MoreWritesThanTheRingHoldsAreEachWrittenOnce) {
  std::vector<Pipe> pipes(300);
  std::vector<std::string> lines;
  std::vector<BatchWrite> writes;
  lines.reserve(pipes.size());
  for (std::size_t i = 0; i < pipes.size(); ++i)
    lines.push_back("line " + std::to_string(i) + "\n");
  for (std::size_t i = 0; i < pipes.size(); ++i)
    writes.push_back({pipes[i].w, lines[i].data(), lines[i].size(), 0});
  write_batch(writes);
  for (std::size_t i = 0; i < pipes.size(); ++i) {
    EXPECT_EQ(writes[i].result, static_cast<ssize_t>(lines[i].size()));
    EXPECT_EQ(pipes[i].read_all(), lines[i]);
  }
  BatchWrite one{pipes[0].w, "1\n", 2, 0};
  write_batch(std::span(&one, 1));
  EXPECT_EQ(one.result, 2);
  EXPECT_EQ(pipes[0].read_all(), "1\n");
}

}  // namespace
}  // namespace escouade::platform
