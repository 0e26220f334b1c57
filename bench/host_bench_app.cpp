// bench_host's app side: escouade-host as a child, host/* requests over its stdin and stdout, as
// the app speaks to it (docs/host-protocol.md).

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "host_bench.hpp"

extern char** environ;

namespace host_bench {
namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

// The escouade-host beside this benchmark when there is one (a copy of both, to compare two
// builds), else the build's.
std::string host_binary() {
  std::error_code ec;
  const auto beside =
      std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "escouade-host";
  if (!ec && ::access(beside.c_str(), X_OK) == 0) return beside.string();
  return ESCOUADE_HOST_BINARY;
}

// escouade-host started on two pipes, with a data dir under g_root; ended (its stdin closed,
// waited for) when this goes.
class AppHost {
 public:
  AppHost() {
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from[1], 1);
    std::string bin = host_binary(), dd = "--data-dir", ddv = (g_root / "appdata").string();
    char* argv[] = {bin.data(), dd.data(), ddv.data(), nullptr};
    const int failed = posix_spawn(&pid_, bin.c_str(), &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(to[0]);
    close(from[1]);
    in_ = to[1];
    out_ = from[0];
    if (failed) {
      close(in_);
      close(out_);
      throw std::runtime_error("spawn");
    }
  }
  AppHost(const AppHost&) = delete;
  AppHost& operator=(const AppHost&) = delete;
  ~AppHost() {
    close(in_);
    int status;
    waitpid(pid_, &status, 0);
    close(out_);
  }

  int in() const { return in_; }
  int out() const { return out_; }
  // What was read and not yet taken as lines: a poll loop reading `out` goes on from here.
  std::string& read_buffer() { return buf_; }

  // Writes `line` and returns the next line that is not a notification (the answer).
  std::string roundtrip(const std::string& line) {
    std::string l = line + "\n";
    if (write(in_, l.data(), l.size()) != static_cast<ssize_t>(l.size()))
      throw std::runtime_error("write");
    for (;;) {
      auto nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string got = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        if (got.find("\"method\"") == std::string::npos) return got;  // skip notifications
        continue;
      }
      char b[65536];
      ssize_t n = read(out_, b, sizeof b);
      if (n <= 0) throw std::runtime_error("escouade-host ended");
      buf_.append(b, static_cast<std::size_t>(n));
    }
  }

  // Loads and enables a fixture plugin (good mode) for project p1.
  void add_plugin(const std::string& id) {
    auto dir = make_plugin(id);
    roundtrip(R"({"jsonrpc":"2.0","id":1,"method":"host/load","params":{"folder":")" +
              dir.string() + "\"}}");
    roundtrip(R"({"jsonrpc":"2.0","id":2,"method":"host/enable","params":{"id":")" + id +
              R"(","project":{"id":"p1","name":"b","private":false}}})");
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buf_;  // what was read past the last answer
};

// A host/call of test/echo with the payload, its id left to set.
json::value echo_request(const std::string& plugin) {
  return json::object{
      {"jsonrpc", "2.0"},
      {"id", 0},
      {"method", "host/call"},
      {"params", json::object{{"id", plugin}, {"method", "test/echo"}, {"params", payload()}}}};
}

// `count` requests through one poll loop that keeps `in_flight` outstanding, ids from
// `next_id` on. Each line read is parsed (an app parses what it gets); notifications are
// skipped, answers counted; an error answer ends the run.
void pipelined_calls(AppHost& app, json::value& request, std::int64_t& next_id, int count,
                     int in_flight) {
  std::string out;
  std::string& in = app.read_buffer();
  std::size_t written = 0;
  int sent = 0, done = 0;
  while (done < count) {
    for (; sent < count && sent - done < in_flight; ++sent) {
      request.as_object()["id"] = next_id++;
      out += json::serialize(request);
      out += '\n';
    }
    pollfd fds[2] = {{app.out(), POLLIN, 0}, {written < out.size() ? app.in() : -1, POLLOUT, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("poll");
    }
    if (fds[1].revents) {
      const ssize_t n = write(app.in(), out.data() + written, out.size() - written);
      if (n < 0 && errno != EAGAIN && errno != EINTR) throw std::runtime_error("write");
      if (n > 0) written += static_cast<std::size_t>(n);
      if (written == out.size()) {
        out.clear();
        written = 0;
      }
    }
    if (fds[0].revents) {
      char b[65536];
      const ssize_t n = read(app.out(), b, sizeof b);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        throw std::runtime_error("escouade-host ended");
      }
      if (n > 0) in.append(b, static_cast<std::size_t>(n));
      std::size_t begin = 0;
      for (std::size_t nl; (nl = in.find('\n', begin)) != std::string::npos; begin = nl + 1) {
        const json::value got = json::parse(std::string_view(in).substr(begin, nl - begin));
        const json::object& o = got.as_object();
        if (o.contains("method")) continue;  // a notification
        if (!o.contains("result"))
          throw std::runtime_error("host/call failed: " + json::serialize(got));
        ++done;
      }
      in.erase(0, begin);
    }
  }
}

}  // namespace

// The app's view: escouade-host as a child, host/call over its stdin and stdout.
void bench_app(int iterations) {
  AppHost app;
  app.add_plugin("dev.bench.app");
  const std::string call =
      R"({"jsonrpc":"2.0","id":3,"method":"host/call","params":{"id":"dev.bench.app","method":"test/echo","params":)" +
      json::serialize(payload()) + "}}";
  for (int i = 0; i < 1000; ++i)
    app.roundtrip(call);
  std::vector<double> us;
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    const auto a = Clock::now();
    app.roundtrip(call);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "{\"bench\":\"host_call_app\",\"iterations\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,"
      "\"calls_per_s\":%.0f}\n",
      iterations, pct(us, 0.5), pct(us, 0.99), iterations / s);
}

void bench_app_pipelined(int calls, int in_flight) {
  AppHost app;
  app.add_plugin("dev.bench.app");
  app.roundtrip(
      R"({"jsonrpc":"2.0","id":3,"method":"host/call","params":{"id":"dev.bench.app","method":"test/echo","params":{}}})");
  const int flags = fcntl(app.in(), F_GETFL);
  if (flags < 0 || fcntl(app.in(), F_SETFL, flags | O_NONBLOCK) < 0) {
    throw std::runtime_error("fcntl");
  }
  json::value request = echo_request("dev.bench.app");
  std::int64_t next_id = 10;
  pipelined_calls(app, request, next_id, 5000, in_flight);
  const auto t0 = Clock::now();
  pipelined_calls(app, request, next_id, calls, in_flight);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "{\"bench\":\"host_pipelined_app\",\"in_flight\":%d,\"calls\":%d,\"seconds\":%.4f,"
      "\"calls_per_s\":%.0f}\n",
      in_flight, calls, s, calls / s);
}

}  // namespace host_bench
