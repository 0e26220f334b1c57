// Whole-process benchmark of the raw pipe floor of a line-based protocol.
//
// The parent spawns itself (/proc/self/exe --child ...) with stdin and stdout
// connected to two pipes, then either ping-pongs one line at a time or streams
// lines one way. Results are printed as a single JSON object on stdout.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pipe_lines.hpp"

namespace {

using bench::ChildProcess;
using bench::LineReader;
using bench::parse_count;
using bench::percentile;
using bench::UsageError;
using bench::write_all;

constexpr std::size_t kStreamWriteBytes = 64 * 1024;
constexpr std::uint64_t kDefaultIterations = 20000;
constexpr std::uint64_t kDefaultWarmup = 1000;
constexpr std::uint64_t kDefaultPayloadBytes = 400;
constexpr const char* kUsage =
    "usage: pipe_floor [--iterations N] [--warmup N] [--payload-bytes N] "
    "[--json] [--stream N]\n";

using Clock = std::chrono::steady_clock;

struct Options {
  std::uint64_t iterations = kDefaultIterations;
  std::uint64_t warmup = kDefaultWarmup;
  std::uint64_t payload_bytes = kDefaultPayloadBytes;
  std::uint64_t stream_lines = 0;
  bool json = false;
  bool stream = false;
  bool child = false;
  bool help = false;
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto next_value = [&]() -> std::string_view {
      if (i + 1 >= argc) {
        throw UsageError(std::string(arg) + ": missing value");
      }
      return argv[++i];
    };
    if (arg == "--iterations") {
      options.iterations = parse_count(arg, next_value());
    } else if (arg == "--warmup") {
      options.warmup = parse_count(arg, next_value());
    } else if (arg == "--payload-bytes") {
      options.payload_bytes = parse_count(arg, next_value());
    } else if (arg == "--stream") {
      options.stream = true;
      options.stream_lines = parse_count(arg, next_value());
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--child") {
      options.child = true;
    } else if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else {
      throw UsageError("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (!options.child && !options.help) {
    if (options.stream && options.stream_lines == 0) {
      throw UsageError("--stream: N must be positive");
    }
    if (!options.stream && options.iterations == 0) {
      throw UsageError("--iterations: N must be positive");
    }
  }
  return options;
}

boost::json::value parse_json(std::string_view line) {
  boost::json::error_code ec;
  boost::json::value value = boost::json::parse(line, ec);
  if (ec) {
    throw std::runtime_error("invalid JSON line: " + ec.message());
  }
  return value;
}

// Returns a JSON-RPC notification line (without '\n') of exactly
// `payload_bytes` bytes, in Boost.JSON's canonical serialization so that
// parse + serialize reproduces it byte for byte.
boost::json::value make_message(std::uint64_t payload_bytes) {
  boost::json::object params;
  params["id"] = 184467;
  params["seq"] = 902113;
  params["source"] = "sensor-gateway/eu-west-1/rack-07";
  params["kind"] = "temperature.reading";
  params["ts"] = "2024-05-17T12:34:56.789Z";
  params["tags"] = boost::json::array{"prod", "edge", "v2"};
  params["final"] = false;
  params["data"] = "";
  boost::json::object message;
  message["jsonrpc"] = "2.0";
  message["method"] = "events/fact";
  message["params"] = std::move(params);

  const std::size_t base = boost::json::serialize(message).size();
  if (payload_bytes < base) {
    throw UsageError("--payload-bytes must be at least " + std::to_string(base));
  }
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string data(payload_bytes - base, '\0');
  std::uint32_t state = 2463534242u;
  for (char& c : data) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    c = kAlphabet[state % kAlphabet.size()];
  }
  message["params"].as_object()["data"] = std::move(data);
  return message;
}

int run_child(const Options& options) {
  LineReader reader(STDIN_FILENO);
  std::string_view line;
  if (options.stream) {
    std::uint64_t count = 0;
    while (reader.next_line(line)) {
      if (options.json && !parse_json(line).is_object()) {
        throw std::runtime_error("expected a JSON object");
      }
      ++count;
    }
    write_all(STDOUT_FILENO, std::to_string(count) + "\n");
    return 0;
  }
  std::string out;
  while (reader.next_line(line)) {
    if (options.json) {
      out = boost::json::serialize(parse_json(line));
    } else {
      out.assign(line);
    }
    out.push_back('\n');
    write_all(STDOUT_FILENO, out);
  }
  return 0;
}

std::vector<std::string> child_args(const Options& options) {
  std::vector<std::string> args{"pipe_floor", "--child"};
  if (options.json) {
    args.emplace_back("--json");
  }
  if (options.stream) {
    args.emplace_back("--stream");
    args.push_back(std::to_string(options.stream_lines));
  }
  return args;
}

const char* mode_name(const Options& options) {
  return options.json ? "json" : "raw";
}

void run_ping_pong(const Options& options, const std::string& payload, ChildProcess& child) {
  LineReader reader(child.stdout_fd());
  const std::string request = payload + "\n";
  std::string echoed;
  std::string_view line;

  auto round_trip = [&]() {
    write_all(child.stdin_fd(), request);
    if (!reader.next_line(line)) {
      throw std::runtime_error("child closed its stdout during a round trip");
    }
    if (options.json) {
      echoed = boost::json::serialize(parse_json(line));
      line = echoed;
    }
    if (line != payload) {
      throw std::runtime_error("child echoed a different line");
    }
  };

  for (std::uint64_t i = 0; i < options.warmup; ++i) {
    round_trip();
  }
  std::vector<double> samples_us;
  samples_us.reserve(options.iterations);
  const Clock::time_point run_start = Clock::now();
  for (std::uint64_t i = 0; i < options.iterations; ++i) {
    const Clock::time_point start = Clock::now();
    round_trip();
    const Clock::time_point stop = Clock::now();
    samples_us.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
  }
  const double total_s = std::chrono::duration<double>(Clock::now() - run_start).count();

  child.close_stdin();
  if (reader.next_line(line)) {
    throw std::runtime_error("child wrote an unexpected extra line");
  }
  child.finish();

  double sum_us = 0;
  for (double sample : samples_us) {
    sum_us += sample;
  }
  std::sort(samples_us.begin(), samples_us.end());
  std::printf(
      "{\"bench\":\"pipe_floor\",\"mode\":\"%s\",\"payload_bytes\":%llu,"
      "\"iterations\":%llu,\"p50_us\":%.3f,\"p90_us\":%.3f,\"p99_us\":%.3f,"
      "\"mean_us\":%.3f,\"round_trips_per_s\":%.1f}\n",
      mode_name(options), static_cast<unsigned long long>(payload.size()),
      static_cast<unsigned long long>(options.iterations), percentile(samples_us, 0.50),
      percentile(samples_us, 0.90), percentile(samples_us, 0.99),
      sum_us / static_cast<double>(samples_us.size()),
      static_cast<double>(options.iterations) / total_s);
}

void run_stream(const Options& options, const boost::json::value& message,
                const std::string& payload, ChildProcess& child) {
  LineReader reader(child.stdout_fd());
  std::string out;
  out.reserve(kStreamWriteBytes + payload.size() + 1);

  const Clock::time_point start = Clock::now();
  for (std::uint64_t i = 0; i < options.stream_lines; ++i) {
    if (options.json) {
      out += boost::json::serialize(message);
    } else {
      out += payload;
    }
    out.push_back('\n');
    if (out.size() >= kStreamWriteBytes) {
      write_all(child.stdin_fd(), out);
      out.clear();
    }
  }
  write_all(child.stdin_fd(), out);
  child.close_stdin();

  std::string_view line;
  if (!reader.next_line(line)) {
    throw std::runtime_error("child closed its stdout without reporting a line count");
  }
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  const std::uint64_t received = parse_count("child line count", line);
  if (received != options.stream_lines) {
    throw std::runtime_error("child received " + std::to_string(received) + " lines, expected " +
                             std::to_string(options.stream_lines));
  }
  if (reader.next_line(line)) {
    throw std::runtime_error("child wrote an unexpected extra line");
  }
  child.finish();

  const double lines = static_cast<double>(options.stream_lines);
  const double bytes = lines * static_cast<double>(payload.size() + 1);
  std::printf(
      "{\"bench\":\"pipe_stream\",\"mode\":\"%s\",\"payload_bytes\":%llu,\"lines\":%llu,"
      "\"seconds\":%.6f,\"lines_per_s\":%.1f,\"mb_per_s\":%.2f}\n",
      mode_name(options), static_cast<unsigned long long>(payload.size()),
      static_cast<unsigned long long>(options.stream_lines), elapsed_s, lines / elapsed_s,
      bytes / elapsed_s / 1e6);
}

int run(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  if (options.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (options.child) {
    return run_child(options);
  }
  const boost::json::value message = make_message(options.payload_bytes);
  const std::string payload = boost::json::serialize(message);
  ChildProcess child(child_args(options));
  try {
    if (options.stream) {
      run_stream(options, message, payload, child);
    } else {
      run_ping_pong(options, payload, child);
    }
  } catch (const std::exception& error) {
    const std::string child_failure = child.reap();
    if (child_failure.empty()) {
      throw;
    }
    throw std::runtime_error(std::string(error.what()) + " (" + child_failure + ")");
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
    std::fprintf(stderr, "pipe_floor: %s\n%s", error.what(), kUsage);
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "pipe_floor%s: error: %s\n", is_child ? " (child)" : "", error.what());
    return 1;
  }
}
