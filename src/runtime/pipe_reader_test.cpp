// PipeReader on real pipes and Asio's real reactor.

#include "runtime/pipe_reader.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace escouade::runtime {
namespace {

namespace asio = boost::asio;

struct Pipe {
  int read = -1;
  int write = -1;
  explicit Pipe(int flags = O_CLOEXEC) {
    int fds[2];
    if (::pipe2(fds, flags) == 0) {
      read = fds[0];
      write = fds[1];
    }
  }
  ~Pipe() {
    if (write >= 0) ::close(write);
  }
  void put(const std::string& text) const {
    ASSERT_EQ(::write(write, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void end() {
    ::close(write);
    write = -1;
  }
};

struct Got {
  std::optional<boost::system::error_code> ec;
  std::string text;
};

class PipeReaderTest : public ::testing::Test {
 protected:
  // Runs the loop until `done`, within a safety bound of iterations.
  template <class F>
  void run_until(F done) {
    for (int i = 0; i < 100000 && !done(); ++i) {
      if (io_.stopped()) io_.restart();  // it stops each time it runs out of work
      io_.run_one_for(std::chrono::milliseconds(100));
    }
  }

  // Starts a read whose outcome lands in `got`, and runs what is ready without waiting.
  void start_read(PipeReader& r, Got& got) {
    got = {};
    r.async_read_some(asio::buffer(buf_),
                      [&got, this](boost::system::error_code ec, std::size_t n) {
                        got.ec = ec;
                        got.text.assign(buf_.data(), n);
                      });
    io_.poll();
    io_.restart();
  }

  // Runs the loop until the read of `got` ended; its error.
  boost::system::error_code ended(const Got& got) {
    run_until([&] { return got.ec.has_value(); });
    return got.ec.value_or(asio::error::timed_out);
  }

  void read_once(PipeReader& r, Got& got) {
    start_read(r, got);
    (void)ended(got);
  }

  // One read that must succeed; what it read.
  std::string read_text(PipeReader& r) {
    Got got;
    read_once(r, got);
    EXPECT_EQ(got.ec, std::optional<boost::system::error_code>(boost::system::error_code()));
    return got.text;
  }

  asio::io_context io_;
  std::array<char, 64> buf_{};
  Pipe p_;  // the pipe of most tests, and its reader
  PipeReader r_{io_.get_executor(), p_.read};
};

TEST_F(PipeReaderTest, ReadsWhatIsWrittenThenTheEnd) {
  Got got;
  p_.put("hello\n");
  read_once(r_, got);
  ASSERT_TRUE(got.ec);
  EXPECT_FALSE(*got.ec);
  EXPECT_EQ(got.text, "hello\n");
  // The end comes while a read waits: epoll reports it.
  start_read(r_, got);
  EXPECT_FALSE(got.ec);
  p_.end();
  EXPECT_EQ(ended(got), asio::error::eof);
  EXPECT_EQ(got.text, "");
}

// The cost of the saved read (pipe_reader.hpp): last bytes and the end reported together, the
// read that takes the bytes empties the pipe and the end is not reported again. Reading
// eagerly, as the owner does once the writer's process ended, finds it.
TEST_F(PipeReaderTest, AnEndThatCameWithTheLastBytesIsFoundByReadingEagerly) {
  Got got;
  p_.put("first\n");
  read_once(r_, got);
  EXPECT_EQ(got.text, "first\n");
  p_.put("last\n");
  p_.end();
  EXPECT_EQ(read_text(r_), "last\n");
  r_.read_eagerly();
  const auto before = r_.reads_tried();
  read_once(r_, got);
  ASSERT_TRUE(got.ec);
  EXPECT_EQ(*got.ec, asio::error::eof);
  EXPECT_EQ(r_.reads_tried(), before + 1);
}

// Reading eagerly, a short read leaves the next read to be tried at once.
TEST_F(PipeReaderTest, ReadingEagerlyTriesEachReadAtOnce) {
  r_.read_eagerly();
  Got got;
  for (int i = 0; i < 5; ++i) {
    p_.put("m\n");
    read_once(r_, got);
    EXPECT_EQ(got.text, "m\n");
  }
  // Each tried at once, each found its bytes: five reads.
  EXPECT_EQ(r_.reads_tried(), 5u);
  start_read(r_, got);
  EXPECT_FALSE(got.ec);
  EXPECT_GE(r_.reads_tried(), 6u);  // tried at once, found nothing, queued
  p_.end();
  EXPECT_EQ(ended(got), asio::error::eof);
}

TEST_F(PipeReaderTest, TheHandlerRunsOnTheLoopNeverInsideTheCall) {
  p_.put("ready\n");
  bool called = false;
  r_.async_read_some(asio::buffer(buf_),
                     [&](boost::system::error_code, std::size_t) { called = true; });
  EXPECT_FALSE(called);
  run_until([&] { return called; });
  EXPECT_TRUE(called);
}

// The point of the reader: one read a message when each message empties the pipe, wherever
// the next write falls (before or after the next read is started), and nothing lost.
TEST_F(PipeReaderTest, AMessageThatEmptiesThePipeCostsOneRead) {
  for (const bool write_first : {false, true}) {
    SCOPED_TRACE(write_first ? "next message written before the next read starts"
                             : "next read started before the next message is written");
    Pipe p;
    PipeReader r(io_.get_executor(), p.read);
    constexpr int kMessages = 200;
    std::vector<std::string> received;
    int sent = 0;
    std::function<void(boost::system::error_code, std::size_t)> on_read =
        [&](boost::system::error_code ec, std::size_t n) {
          ASSERT_FALSE(ec) << ec.message();
          received.emplace_back(buf_.data(), n);
          const bool more = sent < kMessages;
          if (more && write_first) p.put("m" + std::to_string(sent++) + "\n");
          if (more) r.async_read_some(asio::buffer(buf_), on_read);
          if (more && !write_first) p.put("m" + std::to_string(sent++) + "\n");
        };
    r.async_read_some(asio::buffer(buf_), on_read);
    p.put("m" + std::to_string(sent++) + "\n");
    run_until([&] { return received.size() == static_cast<std::size_t>(kMessages); });
    ASSERT_EQ(received.size(), static_cast<std::size_t>(kMessages));
    for (int i = 0; i < kMessages; ++i)
      EXPECT_EQ(received[i], "m" + std::to_string(i) + "\n");
    // Asio's descriptor makes two a message (the second finds the pipe empty); this one makes
    // one, and one more at the start, before anything was written.
    EXPECT_LE(r.reads_tried(), kMessages + 1u);
    EXPECT_GE(r.reads_tried(), static_cast<std::uint64_t>(kMessages));
  }
}

// A read that fills its buffer may have left bytes behind: the next read tries at once.
TEST_F(PipeReaderTest, MoreThanTheBufferComesInSeveralReads) {
  std::string all;
  for (int i = 0; i < 40; ++i)
    all += "line " + std::to_string(i) + " of many\n";
  p_.put(all);
  std::string received;
  std::optional<boost::system::error_code> ended;
  std::function<void(boost::system::error_code, std::size_t)> on_read =
      [&](boost::system::error_code ec, std::size_t n) {
        received.append(buf_.data(), n);
        if (ec) {
          ended = ec;
          return;
        }
        r_.async_read_some(asio::buffer(buf_), on_read);
        if (received.size() == all.size()) p_.end();
      };
  r_.async_read_some(asio::buffer(buf_), on_read);
  run_until([&] { return ended.has_value(); });
  ASSERT_TRUE(ended);
  EXPECT_EQ(*ended, asio::error::eof);
  EXPECT_EQ(received, all);
  // One read a full buffer, one for the rest, one for the end.
  EXPECT_EQ(r_.reads_tried(), all.size() / buf_.size() + 2);
}

// Bytes that come while no read is queued wake the reactor with nothing to do: the next read
// must still find them.
TEST_F(PipeReaderTest, WhatComesWhileNoReadIsQueuedIsReadNext) {
  Got got;
  p_.put("first\n");
  read_once(r_, got);
  EXPECT_EQ(got.text, "first\n");
  p_.put("second\n");
  p_.put("third\n");
  // The loop sees the pipe readable with no read waiting.
  asio::steady_timer tick(io_, std::chrono::milliseconds(1));
  bool ticked = false;
  tick.async_wait([&](boost::system::error_code) { ticked = true; });
  run_until([&] { return ticked; });
  EXPECT_EQ(read_text(r_), "second\nthird\n");
}

TEST_F(PipeReaderTest, CancelEndsTheReadAndThePipeStaysUsable) {
  Got got;
  start_read(r_, got);
  EXPECT_FALSE(got.ec);
  r_.cancel();
  EXPECT_EQ(ended(got), asio::error::operation_aborted);
  EXPECT_TRUE(r_.is_open());
  p_.put("after\n");
  EXPECT_EQ(read_text(r_), "after\n");
}

TEST_F(PipeReaderTest, CloseEndsTheReadThenRefusesReads) {
  Got got;
  start_read(r_, got);
  r_.close();
  EXPECT_FALSE(r_.is_open());
  EXPECT_EQ(r_.native_handle(), -1);
  EXPECT_EQ(ended(got), asio::error::operation_aborted);
  read_once(r_, got);
  EXPECT_EQ(*got.ec, asio::error::bad_descriptor);
  // The descriptor was closed: the pipe has no reader any more.
  pollfd writer{p_.write, POLLOUT, 0};
  ASSERT_EQ(::poll(&writer, 1, 0), 1);
  EXPECT_NE(writer.revents & POLLERR, 0);
}

// A reader destroyed with its read queued, then the loop destroyed unrun: the handler is freed
// (what it holds released) and never called.
TEST_F(PipeReaderTest, AQueuedReadIsFreedUncalledWhenTheLoopGoes) {
  auto loop = std::make_unique<asio::io_context>();
  Pipe p;
  auto held = std::make_shared<int>(7);
  std::weak_ptr<int> watch = held;
  bool called = false;
  {
    PipeReader r(loop->get_executor(), p.read);
    r.async_read_some(asio::buffer(buf_),
                      [held = std::move(held), &called](boost::system::error_code, std::size_t) {
                        called = true;
                      });
  }
  EXPECT_FALSE(watch.expired());
  loop.reset();
  EXPECT_FALSE(called);
  EXPECT_TRUE(watch.expired());
}

TEST_F(PipeReaderTest, WhatEpollCannotWatchIsRefusedNotWaitedFor) {
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(null_fd, 0);
  PipeReader r(io_.get_executor(), null_fd);
  Got got;
  read_once(r, got);
  ASSERT_TRUE(got.ec);
  EXPECT_TRUE(*got.ec);
}

}  // namespace
}  // namespace escouade::runtime
