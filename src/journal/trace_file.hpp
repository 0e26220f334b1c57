#pragma once

// A raw trace of protocol lines: every line Escouade sent a plugin and every line it wrote, as
// they went, each with its time and direction, in the form `escouade-plugin lint` reads:
//
//   2026-12-04T22:51:12.123Z dev.example.guard --> {"jsonrpc":"2.0","id":1,"method":...}
//   2026-12-04T22:51:12.131Z dev.example.guard <-- {"jsonrpc":"2.0","id":1,"result":...}
//
// (`-->` Escouade to the plugin, `<--` the plugin to Escouade, as in the JSON-RPC 2.0
// specification's examples). Each line is masked by its plugin's masker first: a secret given to
// a plugin is in no trace. Written and flushed line by line, so a trace of a run that crashed
// holds everything before the crash. The file is the user's alone (0600).
//
// Thread: one (the host's); several plugins may share one trace.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace escouade {

class TraceFile {
 public:
  enum class Direction { to_plugin, from_plugin };

  // Creates (or empties) `path`.
  static Result<std::shared_ptr<TraceFile>> open(const std::filesystem::path& path);
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  // One line (its '\n' left out or not), of `plugin` (its id; empty: left out of the line),
  // masked by `mask` when given.
  void write(std::string_view plugin, Direction direction, std::string_view line,
             const std::function<void(std::string&)>& mask = {});
  // How many lines could not be written (a full disk): the trace says it at its end.
  std::size_t failures() const noexcept { return failures_; }

 private:
  explicit TraceFile(std::FILE* file) : file_(file) {}
  std::FILE* file_;
  std::size_t failures_ = 0;
  std::string scratch_;
};

// The time of a trace line: "2026-12-04T22:51:12.123Z" (UTC, milliseconds).
std::string trace_time(std::chrono::system_clock::time_point time);

}  // namespace escouade
