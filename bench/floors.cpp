// The floors of bench_host's figures: the same work done by nothing but processes, pipes and
// Boost.JSON, so that each figure of the host can be read as a ratio to what it cannot go under.
// A plain program: it re-executes itself (/proc/self/exe --child MODE) for its children, except
// in `spawn`, which starts the plugin binary it is given. One mode a run:
//
//   fanout [K...] [--raw]   one permissions/decide request, serialized once, written to K children
//                           (default K = 1, 5, 20, 100); each parses it and answers as a plugin
//                           does; the parent polls all K, parses every answer, and waits for all K.
//                           p50/p99 of the whole round. --raw: the same lines, no JSON either side.
//                           --js SCRIPT: a quarter of the K children (K/4, as bench_host's
//                           decide-mixed sandboxes; K of 4 and more) are SCRIPT run by Node as a
//                           process (bench/plugins/echo.mjs: the bundle decide-mixed runs in the
//                           sandbox), the rest as above: what the same fan-out costs when a
//                           quarter of the plugins answer in JavaScript, with no host
//   notify                  events/fact notifications to one child that parses each; one write a
//                           line, then batched (64 KiB a write). The clock stops at the child's
//                           answer to a request sent after the last fact: all of them parsed
//   pipelined               test/echo calls (~400 B of params) to one child that parses each and
//                           answers it with one write; one poll loop keeps 256 in flight. Also with
//                           a child that gathers the answers of one read into one write
//   relay [--blocking]      test/echo calls, one at a time, through a middle process that only
//                           forwards bytes both ways between its stdin/stdout and a child
//                           that parses each call and answers it, waiting in epoll as a host
//                           does: two hops with nothing on the way (what escouade-host's call
//                           would cost if it did no work at all). --blocking: the middle
//                           process blocks in a read of one side, then of the other, as only a
//                           relay of one peer to one child can
//   spawn PATH              posix_spawn of a plugin binary (argv[1] "good"), initialize, its
//                           answer, one test/echo call, its answer; the child then ended (not
//                           timed)
//
// Each prints one JSON object a line, in the style of bench_host and bench_pipe_floor.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "json_lines.hpp"
#include "pipe_lines.hpp"

extern char** environ;

namespace {

namespace json = boost::json;
using bench::append_answer_line;
using bench::append_line;
using bench::ChildProcess;
using bench::LineBuffer;
using bench::LineReader;
using bench::parse_count;
using bench::throw_errno;
using bench::UsageError;
using bench::write_all;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "usage: bench_floors fanout [K...] [--raw | --js SCRIPT] [--iterations N] [--warmup N]\n"
    "       bench_floors notify [--lines N]\n"
    "       bench_floors pipelined [--calls N] [--in-flight N]\n"
    "       bench_floors relay [--blocking] [--iterations N] [--warmup N]\n"
    "       bench_floors spawn PATH [--starts N]\n";

constexpr std::size_t kBatchBytes = 64 * 1024;  // a batched notify write, as a pipe's capacity
constexpr std::uint64_t kFanoutWarmup = 200;
constexpr std::uint64_t kNotifyLines = 200000;
constexpr std::uint64_t kPipelinedCalls = 200000;
constexpr std::uint64_t kPipelinedWarmup = 5000;
constexpr std::uint64_t kInFlight = 256;
constexpr std::uint64_t kStarts = 50;

struct Options {
  std::string mode;
  std::vector<std::uint64_t> children;  // fanout
  std::string program;                  // spawn
  std::string js;                       // fanout --js: the script a quarter of the children run
  std::uint64_t iterations = 0;         // 0: the mode's default
  std::uint64_t warmup = kFanoutWarmup;
  std::uint64_t lines = kNotifyLines;
  std::uint64_t calls = kPipelinedCalls;
  std::uint64_t in_flight = kInFlight;
  std::uint64_t starts = kStarts;
  bool raw = false;
  bool blocking = false;
};

std::uint64_t parse_positive(std::string_view what, std::string_view text) {
  const std::uint64_t value = parse_count(what, text);
  if (value == 0) throw UsageError(std::string(what) + ": must be positive");
  return value;
}

Options parse_options(int argc, char** argv) {
  if (argc < 2) throw UsageError("no mode given");
  Options o;
  o.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw UsageError(std::string(arg) + ": missing value");
      return argv[++i];
    };
    if (arg == "--iterations") {
      o.iterations = parse_positive(arg, value());
    } else if (arg == "--warmup") {
      o.warmup = parse_count(arg, value());
    } else if (arg == "--lines") {
      o.lines = parse_positive(arg, value());
    } else if (arg == "--calls") {
      o.calls = parse_positive(arg, value());
    } else if (arg == "--in-flight") {
      o.in_flight = parse_positive(arg, value());
    } else if (arg == "--starts") {
      o.starts = parse_positive(arg, value());
    } else if (arg == "--raw") {
      o.raw = true;
    } else if (arg == "--js") {
      o.js = value();
    } else if (arg == "--blocking") {
      o.blocking = true;
    } else if (o.mode == "fanout" && !arg.starts_with("-")) {
      o.children.push_back(parse_positive("K", arg));
    } else if (o.mode == "spawn" && o.program.empty() && !arg.starts_with("-")) {
      o.program = arg;
    } else {
      throw UsageError("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (o.mode == "fanout" && o.children.empty()) o.children = {1, 5, 20, 100};
  if (o.raw && !o.js.empty()) throw UsageError("--raw and --js: one or the other");
  if (o.mode == "spawn" && o.program.empty()) throw UsageError("spawn: no program given");
  return o;
}

json::value parse_json(std::string_view line) {
  json::error_code ec;
  json::value value = json::parse(line, ec);
  if (ec) throw std::runtime_error("invalid JSON line: " + ec.message());
  return value;
}

bool is_string(const json::value& v, std::string_view text) {
  return v.is_string() && v.get_string() == text;
}

std::string line_of(const json::value& v) {
  std::string out;
  append_line(out, v);
  return out;
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) throw_errno("fcntl");
}

// Reads, blocking, until one complete line has come; `line` valid until the next read.
void read_line(int fd, LineBuffer& in, std::string_view& line) {
  while (!in.next_line(line)) {
    if (in.read_some(fd) == 0) throw std::runtime_error("end of input before an answer");
  }
}

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Percentiles {
  double p50;
  double p99;
};

Percentiles percentiles(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return {bench::percentile(samples, 0.50), bench::percentile(samples, 0.99)};
}

// `warmup` rounds, then `iterations` timed one by one: round(id) with ids 1, 2, ...
template <class Round>
Percentiles timed_rounds(std::uint64_t warmup, std::uint64_t iterations, Round&& round) {
  std::int64_t id = 0;
  for (std::uint64_t i = 0; i < warmup; ++i)
    round(++id);
  std::vector<double> us;
  us.reserve(iterations);
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const auto a = Clock::now();
    round(++id);
    us.push_back(us_between(a, Clock::now()));
  }
  return percentiles(std::move(us));
}

// The messages, in the shapes the host sends (bench/host_bench.cpp: decide_request, fact,
// payload; the schema's DecideParams, Fact and InitializeParams, fields in the generated
// order).

json::object project() {
  return {{"id", "p1"}, {"name", "billing"}, {"private", false}};
}

json::value decide_call(std::int64_t id) {
  return json::object{
      {"jsonrpc", "2.0"},
      {"id", id},
      {"method", "permissions/decide"},
      {"params",
       json::object{
           {"request",
            json::object{{"id", "r-" + std::to_string(id)},
                         {"kind", "command"},
                         {"tool", "Bash"},
                         {"input", json::object{{"command", "npm test -- --watch=false"}}}}},
           {"project", project()},
           {"agent", json::object{{"id", "a-2"}, {"name", "Ada"}}}}}};
}

json::value fact_notification(std::int64_t seq) {
  return json::object{
      {"jsonrpc", "2.0"},
      {"method", "events/fact"},
      {"params", json::object{{"name", "agent.status"},
                              {"version", 1},
                              {"seq", seq},
                              {"at", "2026-11-29T09:12:05Z"},
                              {"project", project()},
                              {"data", json::object{{"status", "working"},
                                                    {"was", "idle"},
                                                    {"note", std::string(200, 'x')}}}}}};
}

json::value echo_call(std::int64_t id) {
  return json::object{
      {"jsonrpc", "2.0"},
      {"id", id},
      {"method", "test/echo"},
      {"params",
       json::object{{"ticket", json::object{{"id", "t-19"},
                                            {"key", "ESC-12"},
                                            {"title", "Retry failed invoices after a timeout"}}},
                    {"agent", json::object{{"id", "a-2"}, {"name", "Ada"}}},
                    {"data", json::object{{"from", "todo"},
                                          {"to", "doing"},
                                          {"by", "user"},
                                          {"note", std::string(180, 'n')}}}}}};
}

// What the host's handshake sends (src/supervisor/handshake.cpp): protocol 1, its version, the
// plugin's id and version, the language, its capabilities.
json::value initialize_call() {
  return json::object{
      {"jsonrpc", "2.0"},
      {"id", 1},
      {"method", "initialize"},
      {"params",
       json::object{{"protocolVersion", 1},
                    {"escouade", json::object{{"version", "2.1.1"}}},
                    {"plugin", json::object{{"id", "dev.bench.cold"}, {"version", "1.0.0"}}},
                    {"lang", "en"},
                    {"capabilities", json::object{{"batch", true},
                                                  {"secrets", true},
                                                  {"log", true},
                                                  {"attach", true},
                                                  {"settings", true}}}}}};
}

// Checks a parsed answer: an object with `id` and a result; returns the result.
const json::value& result_of(const json::value& message, std::int64_t id) {
  const json::object* o = message.if_object();
  const json::value* got_id = o ? o->if_contains("id") : nullptr;
  const json::value* result = o ? o->if_contains("result") : nullptr;
  if (!got_id || !got_id->is_int64() || got_id->get_int64() != id || !result) {
    throw std::runtime_error("an answer that is not the result of call " + std::to_string(id));
  }
  return *result;
}

// ---- the children ----

// Re-executes this program as the child of `mode`, its stdin and stdout on two pipes.
std::unique_ptr<ChildProcess> start_child(const std::string& mode) {
  return std::make_unique<ChildProcess>(std::vector<std::string>{"bench_floors", "--child", mode});
}

// A deciding plugin: reads the command as the fixture does, allows it unless it is rm -rf.
void child_fanout() {
  LineReader reader(STDIN_FILENO);
  std::string_view line;
  std::string out;
  while (reader.next_line(line)) {
    json::value call = parse_json(line);
    json::error_code ec;
    const json::value* command = call.find_pointer("/params/request/input/command", ec);
    const bool denied =
        command && command->is_string() &&
        std::string_view(command->get_string()).find("rm -rf") != std::string_view::npos;
    out.clear();
    append_answer_line(out, call.as_object()["id"],
                       json::object{{"decision", denied ? "deny" : "allow"}});
    write_all(STDOUT_FILENO, out);
  }
}

void child_fanout_raw() {
  static constexpr std::string_view kAnswer =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"decision\":\"allow\"}}\n";
  LineReader reader(STDIN_FILENO);
  std::string_view line;
  while (reader.next_line(line)) {
    write_all(STDOUT_FILENO, kAnswer);
  }
}

// Parses every notification; a request (the end) is answered with the count heard.
void child_notify() {
  LineReader reader(STDIN_FILENO);
  std::string_view line;
  std::int64_t heard = 0;
  while (reader.next_line(line)) {
    json::value message = parse_json(line);
    json::object& o = message.as_object();
    if (const json::value* id = o.if_contains("id")) {
      std::string answer;
      append_answer_line(answer, *id, heard);
      write_all(STDOUT_FILENO, answer);
    } else if (is_string(o.at("method"), "events/fact")) {
      ++heard;
    }
  }
}

// Echoes each call's params. `gathered`: the answers to the lines of one read leave in one
// write; else each answer is written at once, as the fixture plugin does.
void child_pipelined(bool gathered) {
  LineBuffer in;
  std::string_view line;
  std::string out;
  while (in.read_some(STDIN_FILENO) != 0) {
    while (in.next_line(line)) {
      json::value call = parse_json(line);
      json::object& o = call.as_object();
      append_answer_line(out, o["id"], o["params"]);
      if (!gathered) {
        write_all(STDOUT_FILENO, out);
        out.clear();
      }
    }
    write_all(STDOUT_FILENO, out);
    out.clear();
  }
}

// The middle of `relay`: forwards whatever comes from its stdin to a child that echoes calls,
// and whatever comes back to its stdout, waiting in epoll (level-triggered: one read a
// readiness, none that finds the pipe empty). No parse, no check, no copy but the buffer.
void child_relay() {
  auto plugin = start_child("pipelined");
  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll < 0) throw_errno("epoll_create1");
  for (const int fd : {STDIN_FILENO, plugin->stdout_fd()}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) < 0) throw_errno("epoll_ctl");
  }
  std::vector<char> buf(64 * 1024);
  for (;;) {
    epoll_event ready[2];
    const int n = ::epoll_wait(epoll, ready, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("epoll_wait");
    }
    for (int i = 0; i < n; ++i) {
      const int from = ready[i].data.fd;
      const ssize_t got = ::read(from, buf.data(), buf.size());
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw_errno("read");
      if (got == 0) {  // the parent closed its end, or the child ended
        ::close(epoll);
        plugin->close_stdin();
        plugin->finish();
        return;
      }
      const std::string_view bytes(buf.data(), static_cast<std::size_t>(got));
      write_all(from == STDIN_FILENO ? plugin->stdin_fd() : STDOUT_FILENO, bytes);
    }
  }
}

// The middle of `relay --blocking`: a call read from stdin (whole lines), forwarded, then the
// child's answer read until its end of line, forwarded.
void child_relay_blocking() {
  auto plugin = start_child("pipelined");
  LineBuffer from_app;
  LineBuffer from_plugin;
  std::string_view line;
  std::string out;
  while (from_app.read_some(STDIN_FILENO) != 0) {
    while (from_app.next_line(line)) {
      out.assign(line);
      out += '\n';
      write_all(plugin->stdin_fd(), out);
      read_line(plugin->stdout_fd(), from_plugin, line);
      out.assign(line);
      out += '\n';
      write_all(STDOUT_FILENO, out);
    }
  }
  plugin->close_stdin();
  plugin->finish();
}

int run_child(std::string_view mode) {
  if (mode == "fanout") {
    child_fanout();
  } else if (mode == "fanout-raw") {
    child_fanout_raw();
  } else if (mode == "notify") {
    child_notify();
  } else if (mode == "pipelined") {
    child_pipelined(false);
  } else if (mode == "pipelined-gathered") {
    child_pipelined(true);
  } else if (mode == "relay") {
    child_relay();
  } else if (mode == "relay-blocking") {
    child_relay_blocking();
  } else {
    throw UsageError("unknown child mode '" + std::string(mode) + "'");
  }
  return 0;
}

void finish_all(std::vector<std::unique_ptr<ChildProcess>>& children) {
  for (auto& child : children)
    child->close_stdin();
  for (auto& child : children)
    child->finish();
}

// ---- fanout ----

// `js`: the script a quarter of the children run under Node (the first K/4), or empty.
void bench_fanout(std::uint64_t k, std::uint64_t iterations, std::uint64_t warmup, bool raw,
                  const std::string& js) {
  const std::uint64_t js_children = js.empty() ? 0 : k / 4;
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (std::uint64_t i = 0; i < k; ++i) {
    if (i < js_children) {
      children.push_back(
          std::make_unique<ChildProcess>(std::vector<std::string>{"node", js}, "node"));
    } else {
      children.push_back(start_child(raw ? "fanout-raw" : "fanout"));
    }
  }
  std::vector<LineBuffer> answers(k);
  std::vector<pollfd> fds(k);
  const std::string raw_line = line_of(decide_call(0));
  json::value call = decide_call(0);
  std::string line;

  auto round = [&](std::int64_t id) {
    if (raw) {
      line = raw_line;
    } else {
      call.as_object()["id"] = id;
      call.at_pointer("/params/request/id") = "r-" + std::to_string(id);
      line.clear();
      append_line(line, call);
    }
    for (std::uint64_t i = 0; i < k; ++i) {
      write_all(children[i]->stdin_fd(), line);
      fds[i] = {children[i]->stdout_fd(), POLLIN, 0};
    }
    for (std::uint64_t waiting = k; waiting > 0;) {
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        throw_errno("poll");
      }
      for (std::uint64_t i = 0; i < k; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        if (answers[i].read_some(fds[i].fd) == 0) throw std::runtime_error("a child ended");
        std::string_view got;
        if (!answers[i].next_line(got)) continue;
        if (!raw) {
          const json::value message = parse_json(got);
          if (!is_string(result_of(message, id).at("decision"), "allow")) {
            throw std::runtime_error("not an allowance");
          }
        }
        fds[i].fd = -1;  // poll skips it: this child has answered
        --waiting;
      }
    }
  };

  const Percentiles p = timed_rounds(warmup, iterations, round);
  finish_all(children);
  // A mode of its own for the Node quarter, so that the rows of the plain fan-out never take it.
  std::printf(
      "{\"bench\":\"floor_fanout\",\"mode\":\"%s\",\"children\":%llu,\"iterations\":%llu,"
      "\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
      raw               ? "raw"
      : js_children > 0 ? "json-quarter-node"
                        : "json",
      static_cast<unsigned long long>(k), static_cast<unsigned long long>(iterations), p.p50,
      p.p99);
}

// ---- notify ----

void bench_notify(std::uint64_t lines, bool batched) {
  auto child = start_child("notify");
  json::value message = fact_notification(0);
  json::value& seq = message.at_pointer("/params/seq");
  std::string out;
  out.reserve(kBatchBytes + 1024);
  const auto t0 = Clock::now();
  for (std::uint64_t i = 1; i <= lines; ++i) {
    seq = static_cast<std::int64_t>(i);
    append_line(out, message);
    if (!batched || out.size() >= kBatchBytes) {
      write_all(child->stdin_fd(), out);
      out.clear();
    }
  }
  append_line(out, json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "test/facts"}});
  write_all(child->stdin_fd(), out);
  LineBuffer in;
  std::string_view got;
  read_line(child->stdout_fd(), in, got);
  const std::int64_t heard = result_of(parse_json(got), 1).as_int64();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  child->close_stdin();
  child->finish();
  if (heard != static_cast<std::int64_t>(lines)) {
    throw std::runtime_error("the child heard " + std::to_string(heard) + " facts");
  }
  std::printf(
      "{\"bench\":\"floor_notify\",\"writes\":\"%s\",\"lines\":%llu,\"seconds\":%.4f,"
      "\"lines_per_s\":%.0f}\n",
      batched ? "batched" : "one_per_line", static_cast<unsigned long long>(lines), s,
      static_cast<double>(lines) / s);
}

// ---- relay ----

void bench_relay(std::uint64_t iterations, std::uint64_t warmup, bool blocking) {
  auto relay = start_child(blocking ? "relay-blocking" : "relay");
  LineBuffer in;
  json::value call = echo_call(0);
  json::value& id = call.as_object()["id"];
  std::string line;
  auto round_trip = [&](std::int64_t n) {
    id = n;
    line.clear();
    append_line(line, call);
    write_all(relay->stdin_fd(), line);
    std::string_view got;
    read_line(relay->stdout_fd(), in, got);
    if (!result_of(parse_json(got), n).is_object()) {
      throw std::runtime_error("an echo that is not the params");
    }
  };
  const Percentiles p = timed_rounds(warmup, iterations, round_trip);
  relay->close_stdin();
  relay->finish();
  std::printf(
      "{\"bench\":\"floor_relay\",\"middle\":\"%s\",\"iterations\":%llu,\"p50_us\":%.1f,"
      "\"p99_us\":%.1f}\n",
      blocking ? "blocking" : "epoll", static_cast<unsigned long long>(iterations), p.p50, p.p99);
}

// ---- pipelined ----

// `count` calls through one poll loop that keeps `in_flight` of them outstanding; the requests
// waiting to go leave together in one write, as the host gathers its writes.
void pipelined_calls(ChildProcess& child, LineBuffer& in, std::int64_t& next_id,
                     std::uint64_t count, std::uint64_t in_flight) {
  json::value call = echo_call(0);
  json::value& id = call.as_object()["id"];
  std::string out;
  std::size_t written = 0;
  std::uint64_t sent = 0;
  std::uint64_t done = 0;
  std::int64_t expected = next_id;
  while (done < count) {
    for (; sent < count && sent - done < in_flight; ++sent) {
      id = next_id++;
      append_line(out, call);
    }
    pollfd fds[2] = {{child.stdout_fd(), POLLIN, 0},
                     {written < out.size() ? child.stdin_fd() : -1, POLLOUT, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw_errno("poll");
    }
    if (fds[1].revents != 0) {
      const ssize_t n = ::write(child.stdin_fd(), out.data() + written, out.size() - written);
      if (n < 0 && errno != EAGAIN && errno != EINTR) throw_errno("write");
      if (n > 0) written += static_cast<std::size_t>(n);
      if (written == out.size()) {
        out.clear();
        written = 0;
      }
    }
    if (fds[0].revents != 0) {
      if (in.read_some(child.stdout_fd()) == 0) throw std::runtime_error("the child ended");
      std::string_view got;
      while (in.next_line(got)) {
        if (!result_of(parse_json(got), expected++).is_object()) {
          throw std::runtime_error("an echo that is not the params");
        }
        ++done;
      }
    }
  }
}

void bench_pipelined(std::uint64_t calls, std::uint64_t in_flight, bool gathered) {
  auto child = start_child(gathered ? "pipelined-gathered" : "pipelined");
  set_nonblocking(child->stdin_fd());
  set_nonblocking(child->stdout_fd());
  LineBuffer in;
  std::int64_t next_id = 1;
  pipelined_calls(*child, in, next_id, kPipelinedWarmup, in_flight);
  const auto t0 = Clock::now();
  pipelined_calls(*child, in, next_id, calls, in_flight);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  child->close_stdin();
  child->finish();
  std::printf(
      "{\"bench\":\"floor_pipelined\",\"answers\":\"%s\",\"in_flight\":%llu,\"calls\":%llu,"
      "\"seconds\":%.4f,\"calls_per_s\":%.0f}\n",
      gathered ? "gathered" : "one_write_each", static_cast<unsigned long long>(in_flight),
      static_cast<unsigned long long>(calls), s, static_cast<double>(calls) / s);
}

// ---- spawn ----

struct Start {
  double initialize_ms;
  double answer_ms;
};

// One start of `program`: pipes, posix_spawn, initialize and its answer, test/echo and its
// answer, timed from before the pipes; then its stdin closed and the child waited for.
Start start_once(const std::string& program) {
  static const std::string initialize = line_of(initialize_call());
  static const std::string echo = line_of(json::object{
      {"jsonrpc", "2.0"}, {"id", 2}, {"method", "test/echo"}, {"params", json::object{}}});
  std::string arg0 = program;
  std::string arg1 = "good";
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  // The environment the host gives a plugin: its PATH and the protocol's three variables.
  std::string env_path = "PATH=/usr/bin:/bin", env_id = "ESCOUADE_PLUGIN_ID=dev.bench.cold",
              env_api = "ESCOUADE_PLUGIN_API=1", env_version = "ESCOUADE_VERSION=2.1.1";
  char* envp[] = {env_path.data(), env_id.data(), env_api.data(), env_version.data(), nullptr};

  const auto t0 = Clock::now();
  int to_child[2];
  int from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) < 0) throw_errno("pipe2");
  bench::UniqueFd child_in(to_child[0]), in(to_child[1]);
  if (::pipe2(from_child, O_CLOEXEC) < 0) throw_errno("pipe2");
  bench::UniqueFd out(from_child[0]), child_out(from_child[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_in.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, child_out.get(), STDOUT_FILENO);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    errno = error;
    throw_errno("posix_spawn " + program);
  }
  child_in.reset();
  child_out.reset();
  LineBuffer lines;
  std::string_view got;
  write_all(in.get(), initialize);
  read_line(out.get(), lines, got);
  if (result_of(parse_json(got), 1).at("protocolVersion").as_int64() != 1) {
    throw std::runtime_error("an answer to initialize without protocol 1");
  }
  const auto t1 = Clock::now();
  write_all(in.get(), echo);
  read_line(out.get(), lines, got);
  if (!result_of(parse_json(got), 2).is_object()) throw std::runtime_error("not an echo");
  const auto t2 = Clock::now();

  in.reset();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw_errno("waitpid");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(program + " did not exit with 0 at the end of its input");
  }
  return {us_between(t0, t1) / 1000.0, us_between(t0, t2) / 1000.0};
}

void bench_spawn(const std::string& program, std::uint64_t starts) {
  start_once(program);  // the binary and the loader's files in the page cache
  std::vector<double> initialized, answered;
  for (std::uint64_t i = 0; i < starts; ++i) {
    const Start s = start_once(program);
    initialized.push_back(s.initialize_ms);
    answered.push_back(s.answer_ms);
  }
  const Percentiles init = percentiles(initialized);
  const Percentiles answer = percentiles(answered);
  std::printf(
      "{\"bench\":\"floor_spawn\",\"starts\":%llu,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
      "\"initialize_p50_ms\":%.3f,\"initialize_p99_ms\":%.3f,"
      "\"timed\":\"from before its pipes and posix_spawn to the answer of test/echo, sent once "
      "initialize was answered\",\"program\":%s}\n",
      static_cast<unsigned long long>(starts), answer.p50, answer.p99, init.p50, init.p99,
      json::serialize(json::string(program)).c_str());
}

int run(int argc, char** argv) {
  if (argc > 2 && std::string_view(argv[1]) == "--child") return run_child(argv[2]);
  const Options o = parse_options(argc, argv);
  if (o.mode == "fanout") {
    for (std::uint64_t k : o.children) {
      const std::uint64_t iterations = o.iterations ? o.iterations
                                                    : (k >= 100  ? 500
                                                       : k >= 20 ? 2000
                                                                 : 5000);
      if (!o.js.empty() && k < 4) continue;  // no quarter to run under Node
      bench_fanout(k, iterations, o.warmup, o.raw, o.js);
    }
  } else if (o.mode == "notify") {
    bench_notify(o.lines, false);
    bench_notify(o.lines, true);
  } else if (o.mode == "pipelined") {
    bench_pipelined(o.calls, o.in_flight, false);
    bench_pipelined(o.calls, o.in_flight, true);
  } else if (o.mode == "relay") {
    bench_relay(o.iterations ? o.iterations : 20000, o.warmup, o.blocking);
  } else if (o.mode == "spawn") {
    bench_spawn(o.program, o.starts);
  } else if (o.mode == "--help" || o.mode == "-h") {
    std::fputs(kUsage, stdout);
  } else {
    throw UsageError("unknown mode '" + o.mode + "'");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  const bool is_child = argc > 1 && std::string_view(argv[1]) == "--child";
  try {
    return run(argc, argv);
  } catch (const UsageError& error) {
    std::fprintf(stderr, "bench_floors: %s\n%s", error.what(), kUsage);
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_floors%s: error: %s\n", is_child ? " (child)" : "", error.what());
    return 1;
  }
}
