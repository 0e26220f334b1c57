// A real plugin process built with the SDK, on real pipes: whatever its own code prints, its
// standard output carries protocol lines only, and the rest reaches its standard error.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "scripted_host.hpp"

extern char** environ;

namespace {

namespace json = boost::json;

struct Finished {
  std::string out;
  std::string err;
  int status = -1;
};

// Runs `program` with `input` on its stdin (then closed), gathers stdout and stderr until both
// end, and waits for it.
Finished run_with_input(const std::string& program, const std::string& input) {
  int in[2], out[2], err[2];
  EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
  EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::string path = program;
  char* argv[] = {path.data(), nullptr};
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  EXPECT_EQ(::write(in[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  ::close(in[1]);
  Finished f;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open = 2;
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      (i == 0 ? f.out : f.err).append(buf, static_cast<std::size_t>(n));
    }
  }
  ::waitpid(pid, &f.status, 0);
  return f;
}

TEST(Stdio, StrayOutputOfThePluginGoesToStderrAndStdoutKeepsToTheProtocol) {
  using escouade::testing::initialize;
  using escouade::testing::request;
  std::string input = json::serialize(initialize(1, "dev.test.stray")) + "\n" +
                      json::serialize(request(2, "test/noisy", json::object{{"n", 1}})) + "\n" +
                      json::serialize(request(3, "shutdown", nullptr)) + "\n";
  const Finished f = run_with_input(ESCOUADE_STRAY_PLUGIN, input);
  ASSERT_TRUE(WIFEXITED(f.status));
  EXPECT_EQ(WEXITSTATUS(f.status), 0);

  std::vector<json::value> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = f.out.find('\n', start)) != std::string::npos; start = nl + 1) {
    json::error_code ec;
    json::value v = json::parse(f.out.substr(start, nl - start), ec);
    ASSERT_FALSE(ec) << "not JSON on stdout: " << f.out.substr(start, nl - start);
    ASSERT_TRUE(v.is_object());
    EXPECT_EQ(v.at("jsonrpc"), "2.0");
    lines.push_back(std::move(v));
  }
  EXPECT_EQ(start, f.out.size()) << "stdout ends with a whole line";
  ASSERT_EQ(lines.size(), 4u) << f.out;
  EXPECT_EQ(lines[0].at("result").at("protocolVersion"), 1);
  EXPECT_EQ(lines[1].at("params").at("message"), "started");
  EXPECT_EQ(lines[2].at("result").at("params"), json::parse(R"({"n":1})"));
  EXPECT_EQ(lines[2].at("result").at("child"), 0);
  EXPECT_EQ(lines[3], json::parse(R"({"jsonrpc":"2.0","id":3,"result":null})"));

  for (const char* stray : {"stray printf at start", "stray cout at start",
                            "stray puts in a handler", "stray from a child process"}) {
    EXPECT_NE(f.err.find(stray), std::string::npos) << stray << " missing from stderr: " << f.err;
  }
}

TEST(Stdio, TheEndOfInputEndsThePlugin) {
  const Finished f = run_with_input(ESCOUADE_STRAY_PLUGIN, "");
  ASSERT_TRUE(WIFEXITED(f.status));
  EXPECT_EQ(WEXITSTATUS(f.status), 0);
  EXPECT_EQ(f.out, "");
}

// The lines on a pipe however its reads cut them: many in one read, one across several reads,
// empty ones, and a last one without its '\n'; each written in one piece.
TEST(Stdio, FdTransportFramesTheLinesHoweverTheReadsCutThem) {
  int in[2], out[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  escouade::FdTransport t(in[0], out[1]);
  auto put = [&](std::string_view bytes) {
    ASSERT_EQ(::write(in[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  };
  std::string line;
  put("one\ntwo\n\nthree\nfo");  // several lines and the start of one, in one read
  for (const char* want : {"one", "two", "", "three"}) {
    ASSERT_TRUE(t.read_line(line));
    EXPECT_EQ(line, want);
  }
  put("ur");  // the line goes on over reads: what was taken before it does not come back
  put("\nfive");
  ASSERT_TRUE(t.read_line(line));
  EXPECT_EQ(line, "four");
  const std::string big(200000, 'x');  // more than one read holds
  put("\n");
  ASSERT_TRUE(t.read_line(line));
  EXPECT_EQ(line, "five");
  std::thread writer([&] { put(big + "\nlast"); });
  ASSERT_TRUE(t.read_line(line));
  EXPECT_EQ(line, big);
  writer.join();
  ::close(in[1]);
  ASSERT_TRUE(t.read_line(line));  // its last line, without '\n', at the end of input
  EXPECT_EQ(line, "last");
  EXPECT_FALSE(t.read_line(line));

  ASSERT_TRUE(t.write_line(R"({"jsonrpc":"2.0","id":1,"result":null})"));
  ASSERT_TRUE(t.write_line(""));
  char buf[256];
  const ssize_t n = ::read(out[0], buf, sizeof buf);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n\n");
  ::close(in[0]);
  ::close(out[0]);
  ::close(out[1]);
}

// A line and its '\n' leave in one writev: a line longer than the pipe holds still arrives
// whole, its '\n' last, and an empty line is its '\n' alone.
TEST(Stdio, FdTransportWritesALineLongerThanThePipeWhole) {
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  escouade::FdTransport t(-1, out[1]);
  std::string big(3 * 1024 * 1024, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4093)
    big[i] = static_cast<char>('a' + i % 26);
  std::string got;
  std::thread reader([&] {
    char buf[65536];
    ssize_t n;
    while ((n = ::read(out[0], buf, sizeof buf)) > 0)
      got.append(buf, static_cast<std::size_t>(n));
  });
  EXPECT_TRUE(t.write_line(big));
  EXPECT_TRUE(t.write_line(""));
  EXPECT_TRUE(t.write_line("short"));
  ::close(out[1]);
  reader.join();
  ::close(out[0]);
  EXPECT_EQ(got.size(), big.size() + 8);
  EXPECT_TRUE(got == big + "\n\nshort\n");
}

}  // namespace
